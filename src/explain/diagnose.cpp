// What bounds a step: capacity when the job does not fit, otherwise the largest share of step
// time among compute-bound kernels, bandwidth-bound kernels, exposed communication, input stall
// and overhead (kernel gaps, framework time, launch stall).
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
  if (!e.memory.fits()) {
    d.bottleneck = Bottleneck::kCapacity;
    return d;
  }
  const std::pair<Bottleneck, Seconds> parts[] = {
      {Bottleneck::kCompute, s.gemm},
      {Bottleneck::kMemory, s.memory_bound},
      {Bottleneck::kCommunication, s.communication},
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
