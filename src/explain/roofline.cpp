// Roofline construction (equations in roofline.hpp).
#include "gpusim/model/roofline.hpp"

#include <algorithm>

namespace gpusim {

double Roofline::ridge(DType dtype) const {
  for (const auto& c : compute) {
    if (c.dtype == dtype && !memory.empty()) {
      return c.achievable.value() / memory.front().achievable.value();
    }
  }
  return 0;
}

Roofline make_roofline(const GpuSpec& g, const Estimate* e, DType highlight) {
  Roofline r;
  r.gpu_id = g.id;
  r.gpu_name = g.name;
  r.highlight = highlight;
  for (const DType d : {DType::kFp8, DType::kFp16, DType::kBf16, DType::kTf32, DType::kFp32, DType::kFp64}) {
    if (!g.supports(d)) {
      continue;
    }
    // The kernel model's GEMM efficiency per dtype (fp8 may have its own).
    const double eta = d == DType::kFp8 ? g.efficiency.gemm_fp8.value_or(g.efficiency.gemm) : g.efficiency.gemm;
    r.compute.push_back({d, g.peak_for(d), g.peak_for(d) * eta});
  }
  std::sort(r.compute.begin(), r.compute.end(),
            [](const ComputeRoof& a, const ComputeRoof& b) { return a.paper > b.paper; });
  r.memory.push_back({"DRAM", g.memory_bandwidth, g.memory_bandwidth * g.efficiency.dram});
  r.memory.push_back({"L2", g.l2_bandwidth, g.l2_bandwidth * g.efficiency.l2});
  if (e == nullptr) {
    return r;
  }
  const double total = e->step.compute.value();
  for (const OpShare& op : e->ops) {
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
    p.compute_bound = op.compute_bound;
    p.share = total > 0 ? op.time.value() / total : 0;
    r.points.push_back(p);
  }
  return r;
}

}  // namespace gpusim
