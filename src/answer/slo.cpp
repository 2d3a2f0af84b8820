// A serving estimate against its service-level objective (see include/gpusim/answer.hpp).
#include <algorithm>

#include "gpusim/answer.hpp"

namespace gpusim::answer {

Seconds percentile_of(const step::Percentiles& d, scenario::Percentile p) {
  switch (p) {
    case scenario::Percentile::kMean:
      return d.mean;
    case scenario::Percentile::kP50:
      return d.p50;
    case scenario::Percentile::kP90:
      return d.p90;
    case scenario::Percentile::kP99:
      return d.p99;
  }
  return d.p99;
}

SloCheck check_slo(const scenario::Slo& slo, const step::InferenceResult& r) {
  SloCheck c;
  c.slo = slo;
  c.saturated = r.saturated;
  c.incomplete = r.truncated;
  auto one = [&](const std::optional<Seconds>& limit, const step::Percentiles& d, std::optional<Seconds>& achieved) {
    if (!limit) {
      return;
    }
    achieved = percentile_of(d, slo.percentile);
    c.worst = std::max(c.worst, *achieved / *limit);
  };
  one(slo.ttft, r.ttft, c.ttft);
  one(slo.tpot, r.tpot, c.tpot);
  one(slo.e2e, r.e2e, c.e2e);
  return c;
}

}  // namespace gpusim::answer
