// What bounds a step: capacity when the job does not fit in the GPU's memory (or a serving
// engine's KV pool cannot hold one request), host memory when what it offloads does not fit in the
// host's; input when the step stalls on its input pipeline (the pipeline is then the critical path,
// whatever the GPU's largest part); otherwise the largest share of step time among compute-bound
// kernels, bandwidth-bound kernels, exposed communication, exposed offload traffic (and the host's
// optimizer step), the pipeline bubble and overhead (kernel gaps, framework time, launch stall). On
// a tie the earlier part wins.
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
  // A step that waits on its input is as long as the input pipeline takes (step/evaluator.cpp:
  // the stall is input time beyond the GPU's step): the pipeline is the critical path, whatever the
  // GPU's largest part, and no faster GPU part shortens the step.
  if (s.input_stall.value() > 0) {
    d.bottleneck = Bottleneck::kInput;
    d.share = s.input_stall / s.time;
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
