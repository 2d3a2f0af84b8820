// The model's error on publications it was not fitted to, as quantiles of held-out residuals
// (include/gpusim/validation.hpp, "model error"; the file: specs/uncertainty/model-error.toml).
//
// Prediction intervals from cross-validation [barber-jackknife-2021]: with n residuals R_i of
// rows predicted by a model that never saw them, the interval between the ⌊(α/2)(n + 1)⌋-th and
// the ⌈(1 − α/2)(n + 1)⌉-th smallest residual holds a new row's residual with probability at least
// about 1 − α when the new row is like the others (the finite-sample conformal quantiles, §1.1;
// the jackknife+ guarantee is 1 − 2α in the worst case and about 1 − α in practice). Here a
// residual is r = ln(predicted / measured), which treats a prediction twice too high and one half
// too low alike and turns a time's error into minus its rate's. Rows are alike when they are of
// the same kind of job and family of metric (answer::error_family), and on the same runtime where
// that runtime has rows enough for quantiles of its own.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "gpusim/validation.hpp"

namespace gpusim::validation {

std::optional<Residual> residual_of(const RowResult& r) {
  const Measurement& m = *r.measurement;
  if (!m.scored || m.benchmark != Benchmark::kScenario || !r.not_held_out.empty() || !r.prediction.value ||
      r.kind == RowKind::kMicrobenchmark) {
    return std::nullopt;
  }
  const auto band = answer::band_index(m.metric);
  if (!band || !(*r.prediction.value > 0) || !(m.value > 0)) {
    return std::nullopt;
  }
  const workload::JobKind job =
      r.kind == RowKind::kTraining ? workload::JobKind::kTraining : workload::JobKind::kServing;
  const answer::ErrorFamily f = answer::error_family(job, answer::kBandKeys[*band].time);
  const double r_own = std::log(*r.prediction.value / m.value);
  return Residual{job, f.metric, r.runtime_named ? r.runtime : std::string(), f.flip ? -r_own : r_own};
}

std::optional<std::pair<double, double>> central_quantiles(std::vector<double> values, double coverage) {
  const double n = static_cast<double>(values.size());
  const double tail = (1.0 - coverage) / 2.0;
  // Ranks counted from 1; a small epsilon keeps 0.9 × 10 at 9, not 9.000000000000002 rounded up.
  const double lo_rank = std::floor(tail * (n + 1.0) + 1e-9);
  const double hi_rank = std::ceil((1.0 - tail) * (n + 1.0) - 1e-9);
  if (values.empty() || lo_rank < 1 || hi_rank > n) {
    return std::nullopt;
  }
  std::sort(values.begin(), values.end());
  return std::make_pair(values[static_cast<std::size_t>(lo_rank) - 1], values[static_cast<std::size_t>(hi_rank) - 1]);
}

workload::ModelError model_error_of(const std::vector<Residual>& residuals, double coverage, int min_runtime_rows) {
  workload::ModelError me;
  me.coverage = coverage;
  me.min_runtime_rows = min_runtime_rows;
  using Key = std::tuple<workload::JobKind, workload::MetricFamily, std::string>;
  std::map<Key, std::vector<double>> by;
  for (const Residual& r : residuals) {
    by[{r.job, r.metric, ""}].push_back(r.log_ratio);
    if (!r.runtime.empty()) {
      by[{r.job, r.metric, r.runtime}].push_back(r.log_ratio);
    }
  }
  for (const auto& [key, values] : by) {
    const auto& [job, metric, runtime] = key;
    if (!runtime.empty() && static_cast<int>(values.size()) < min_runtime_rows) {
      continue;  // too few rows of its own: the runtime takes the pooled group
    }
    if (const auto q = central_quantiles(values, coverage)) {
      me.groups.push_back({job, metric, runtime, static_cast<int>(values.size()), q->first, q->second});
    }
  }
  return me;
}

}  // namespace gpusim::validation
