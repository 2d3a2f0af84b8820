// Private to src/validation/: pieces of a prediction that calibration builds its equations from.
#pragma once

#include <utility>

#include "gpusim/lowering.hpp"
#include "gpusim/physics.hpp"
#include "gpusim/validation.hpp"

namespace gpusim::validation {

// The flash kernels an attention benchmark runs: forward and backward.
std::pair<lowering::Op, lowering::Op> attention_ops(const Measurement& m);
physics::Collective collective_of(Benchmark b);
// The algorithm a collective row forced (its `algorithm` key); "tree" and "auto" leave the choice to the model.
physics::Algorithm algorithm_of(const Measurement& m);

}  // namespace gpusim::validation
