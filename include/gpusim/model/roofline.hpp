// The roofline of a GPU (Williams, Waterman & Patterson 2009): attainable rate at arithmetic
// intensity I is min(compute roof, I × memory roof). Roofs are the achievable ones (paper peak ×
// the spec's measured efficiency), with the paper peaks alongside; ridge point = roof / bandwidth.
// Each op of a scenario's step is placed at its own intensity (FLOPs / DRAM bytes) and the rate
// the kernel model gives it, sized by its share of step time.
#pragma once

#include <string>
#include <vector>

#include "gpusim/model/estimate.hpp"
#include "gpusim/spec/hardware.hpp"

namespace gpusim {

struct ComputeRoof {
  DType dtype = DType::kBf16;
  FlopPerSecond paper;
  FlopPerSecond achievable;
};

struct MemoryRoof {
  std::string name;  // "DRAM", "L2"
  BytesPerSecond paper;
  BytesPerSecond achievable;
};

struct RooflinePoint {
  std::string name;
  Phase phase = Phase::kForward;
  Flop flops;
  Bytes bytes;
  double intensity = 0;    // FLOP per byte
  FlopPerSecond attained;  // flops / time under the kernel model
  bool compute_bound = false;
  double share = 0;  // of kernel time
};

struct Roofline {
  std::string gpu_id;
  std::string gpu_name;
  std::vector<ComputeRoof> compute;  // every supported dtype, fastest first
  std::vector<MemoryRoof> memory;    // DRAM and L2
  DType highlight = DType::kBf16;    // the dtype whose ridge point is reported
  std::vector<RooflinePoint> points;

  // Intensity where the achievable DRAM roof meets the achievable compute roof of `dtype`.
  [[nodiscard]] double ridge(DType dtype) const;
};

// Roofs only (no scenario) or with the ops of an estimate (`e` may be null).
Roofline make_roofline(const GpuSpec& gpu, const Estimate* e, DType highlight);

}  // namespace gpusim
