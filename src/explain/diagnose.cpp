// What bounds a step: capacity when the job does not fit in the GPU's memory (or a serving engine's
// KV pool cannot hold one request), host memory when what it offloads does not fit in the host's; otherwise the largest
// share of step time among compute-bound kernels, bandwidth-bound kernels, exposed communication, exposed offload
// traffic (and the host's optimizer step), the pipeline bubble, input stall and overhead (kernel gaps, framework time,
// launch stall). On a tie the earlier part wins.
#include <algorithm>
#include <iterator>

#include "gpusim/explain.hpp"

namespace gpusim::explain {

Diagnosis diagnose(const step::Evaluation& e) {
  Diagnosis d;
  const step::StepBreakdown& s = e.step;
  if (s.gemm.value() > 0) {
    d.peak_fraction = (s.gemm_flops / s.gemm) / e.peak;
  }
  const physics::MemoryBreakdown& m = e.memory;
  if (m.total() > (m.budget.value() > 0 ? m.budget : m.capacity)) {
    d.bottleneck = Bottleneck::kCapacity;
    return d;
  }
  if (!m.host_fits()) {
    d.bottleneck = Bottleneck::kHostMemory;
    return d;
  }
  if (!step::runs(e)) {  // the KV pool cannot hold one request: the engine would not start
    d.bottleneck = Bottleneck::kCapacity;
    return d;
  }
  const std::pair<Bottleneck, Seconds> parts[] = {
      {Bottleneck::kCompute, s.gemm},
      {Bottleneck::kMemory, s.memory_bound},
      {Bottleneck::kCommunication, s.communication},
      {Bottleneck::kOffload, s.offload},
      {Bottleneck::kBubble, s.bubble},
      {Bottleneck::kInput, s.input_stall},
      {Bottleneck::kLatency, s.overhead},
  };
  const auto* best = std::max_element(std::begin(parts), std::end(parts),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
  d.bottleneck = best->first;
  d.share = best->second / s.time;
  return d;
}

}  // namespace gpusim::explain
