// The model's demonstrated error (include/gpusim/workload.hpp, ModelError): the group of residual
// quantiles an estimate takes, its runtime's own where the file has one, else the pooled one.
#include "gpusim/workload.hpp"

namespace gpusim::workload {

const ModelErrorGroup* ModelError::find(JobKind job, MetricFamily metric, std::string_view runtime) const {
  const ModelErrorGroup* pooled = nullptr;
  for (const ModelErrorGroup& g : groups) {
    if (g.job != job || g.metric != metric) {
      continue;
    }
    if (g.runtime.empty()) {
      pooled = &g;
    } else if (!runtime.empty() && g.runtime == runtime) {
      return &g;
    }
  }
  return pooled;
}

}  // namespace gpusim::workload
