// The roofline of a GPU and the ops of a step on it (see include/gpusim/explain.hpp).
#include <algorithm>

#include "gpusim/explain.hpp"

namespace gpusim::explain {

Roofline make_roofline(const hardware::GpuSpec& g, const step::Evaluation* e, DType highlight) {
  Roofline r;
  r.gpu_id = g.id;
  r.gpu_name = g.name;
  r.highlight = highlight;
  for (const DType d :
       {DType::kFp4, DType::kFp8, DType::kFp16, DType::kBf16, DType::kTf32, DType::kFp32, DType::kFp64}) {
    if (!g.supports(d)) {
      continue;
    }
    r.compute.push_back(
        {d, g.peak_for(d), g.peak_for(d) * physics::gemm_efficiency(g, d), physics::ridge_intensity(g, d)});
  }
  std::stable_sort(r.compute.begin(), r.compute.end(),
                   [](const ComputeRoof& a, const ComputeRoof& b) { return a.paper > b.paper; });
  r.memory.push_back({"DRAM", g.memory_bandwidth, physics::dram_bandwidth(g)});
  r.memory.push_back({"L2", g.l2_bandwidth, g.l2_bandwidth * g.efficiency.l2});
  if (e == nullptr) {
    return r;
  }
  const Seconds total = e->step.compute;
  // An op sits under the compute roof of the step's dtype when its intensity reaches that roof's
  // ridge point, and under the DRAM roof below it [williams-2009] (not by the kind of its kernel).
  const double ridge =
      g.supports(e->dtype) ? physics::ridge_intensity(g, e->dtype) : physics::ridge_intensity(g, highlight);
  for (const step::OpShare& op : e->ops) {
    if (op.bytes.value() <= 0 || op.time.value() <= 0) {
      continue;
    }
    RooflinePoint p;
    p.name = op.name;
    p.phase = op.phase;
    p.flops = op.flops;
    p.bytes = op.bytes;
    p.intensity = op.flops.value() / op.bytes.value();
    p.attained = op.flops / op.time;
    p.bandwidth = op.bytes / op.time;
    p.compute_bound = p.intensity >= ridge;
    p.share = total.value() > 0 ? op.time / total : 0;
    r.points.push_back(p);
  }
  return r;
}

}  // namespace gpusim::explain
