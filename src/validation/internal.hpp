// Private to src/validation/: pieces of a prediction that calibration builds its equations from.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpusim/lowering.hpp"
#include "gpusim/physics.hpp"
#include "gpusim/validation.hpp"

namespace gpusim::validation {

// The flash kernels an attention benchmark runs: forward and backward.
std::pair<lowering::Op, lowering::Op> attention_ops(const Measurement& m);
physics::Collective collective_of(Benchmark b);
// The algorithm a collective row forced (its `algorithm` key); "tree" and "auto" leave the choice to the model.
physics::Algorithm algorithm_of(const Measurement& m);

// Drops each fitted value of `r` that raises the median |error| of the rows it was fitted on
// (GPU-level fits first, then architecture fits over the kept GPU ones), recording why in r.kept
// (fit_review.cpp).
void keep_only_improvements(const std::vector<const Measurement*>& rows, const catalog::Catalog& catalog,
                            CalibrationResult& r);
// Appends to `out` each runtime's remainder fitted on its fit end-to-end rows, within `scopes`
// (every runtime when empty), under the catalog with out.params applied (remainders.cpp).
void fit_remainders(const std::vector<Measurement>& rows, const catalog::Catalog& catalog,
                    const std::set<std::string>& scopes, CalibrationResult& out);

}  // namespace gpusim::validation
