// The model's own error in the band (include/gpusim/answer.hpp): which group of held-out errors a
// figure takes, and the deviations those quantiles allow.
//
// A group holds the lower and upper quantiles (low, high) of r = ln(predicted / measured) over rows
// predicted without their own publication: at the group's coverage the measured figure m of a new
// prediction y lies where low ≤ ln(y / m) ≤ high, i.e. within y × [e^−high, e^−low]. Quantiles of
// held-out residuals bound a new prediction's error at their coverage whatever the distribution
// of the errors, as long as the new case is like the held-out ones [barber-jackknife-2021].
// The rise that allows is y·(e^−low − 1), the fall y·(1 − e^−high); a side the quantiles do not
// reach (low > 0: the model predicted high on nearly every row) allows none, so the band keeps its
// point estimate.
#include <algorithm>
#include <cmath>

#include "gpusim/answer.hpp"

namespace gpusim::answer {

std::optional<std::size_t> band_index(std::string_view key) {
  // The p50 latencies are the report's headline latencies (fields.cpp): one band each.
  constexpr std::pair<std::string_view, std::string_view> kSame[] = {
      {"inference.ttft_s.p50", "inference.time_to_first_token_s"},
      {"inference.tpot_s.p50", "inference.time_per_output_token_s"},
      {"inference.e2e_s.p50", "inference.request_latency_s"},
  };
  for (const auto& [alias, name] : kSame) {
    if (key == alias) {
      key = name;
    }
  }
  for (std::size_t i = 0; i < kBandCount; ++i) {
    if (key == kBandKeys[i].key) {
      return i;
    }
  }
  return std::nullopt;
}

ErrorFamily error_family(workload::JobKind job, bool time) {
  if (job == workload::JobKind::kServing) {
    return {time ? workload::MetricFamily::kLatency : workload::MetricFamily::kThroughput, false};
  }
  return {workload::MetricFamily::kThroughput, time};
}

Deviation model_error_deviation(double y, const workload::ModelErrorGroup& g, bool flip) {
  // A flipped figure's log-ratio is minus its family's: its quantiles are (−high, −low).
  const double low = flip ? -g.high : g.low;
  const double high = flip ? -g.low : g.high;
  return {y * std::max(0.0, std::exp(-low) - 1.0), y * std::max(0.0, 1.0 - std::exp(-high))};
}

Band widen(const Band& b, double y, const Deviation& d) {
  // A low end floored at 0 stays there: the added deviation only reaches further down.
  return {std::max(0.0, y - std::hypot(y - b.low, d.down)), y + std::hypot(b.high - y, d.up)};
}

}  // namespace gpusim::answer
