// Board power and clocks under a power limit.
//   P = idle + (TDP − idle) × Σ_i share_i × activity_i, capped at the power limit,
// with one activity per kind of work (tensor-core, CUDA-core, bandwidth-bound, idle), each
// measured as (P − idle) / (TDP − idle) on a kernel of that kind. Under a limit, compute slows by
// (limit / TDP)^(1/3): dynamic power goes as f·V² and voltage roughly with frequency, so
// P ∝ f³. [dettmers-2023] reports ~7 % lower speed for a 50 W lower limit on a 350 W card, which
// (300/350)^(1/3) = 0.95 approximates.
#include <algorithm>
#include <cmath>

#include "gpusim/physics.hpp"

namespace gpusim::physics {

double clock_scale(const hardware::System& sys) {
  const double ratio = sys.power_limit.value() / sys.gpu.tdp.value();
  return ratio >= 1.0 ? 1.0 : std::cbrt(ratio);
}

Watts board_power(const hardware::GpuSpec& g, Watts power_limit, const ActivityShares& s) {
  const double idle_share = std::max(0.0, 1.0 - s.tensor - s.simt - s.memory);
  const double activity = s.tensor * g.activity.gemm + s.simt * g.activity.simt + s.memory * g.activity.memory +
                          idle_share * g.activity.idle;
  return std::min(g.idle_power + (g.tdp - g.idle_power) * activity, power_limit);
}

double activity_from_power(const hardware::GpuSpec& g, Watts measured) {
  return (measured - g.idle_power) / (g.tdp - g.idle_power);
}

bool on_tensor_cores(DType dtype) { return dtype != DType::kFp32 && dtype != DType::kFp64; }

}  // namespace gpusim::physics
