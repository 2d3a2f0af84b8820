// Board power and the clock a GPU sustains under its power limit (DVFS).
//   P(x) = floor + e_bit · 8 · (DRAM bytes/s) + (TDP − floor) · A · v(x)
//   A    = Σ_i share_i · a_i: SM activity per kind of work at the rated boost clock, idle time at
//          the idle activity
//   v(x) = x · max(x, κ)² / max(1, κ)²
// with x the SM clock over the rated boost clock and `floor` the board's power while a job runs
// with its SMs idle (memory clocked up, fans, regulators): what a power cap cannot take away, so
// that low caps starve the SMs [qwertyforce-power-limit]. Dynamic power goes as f·V²; above the voltage
// knee κ (the knee clock over the rated boost clock) the voltage rises with the clock, below it the
// voltage sits at its floor [kaxiras-2008]. The knee is a point of the board's V/F table: a higher
// clock limit extends the table without moving it, so it only widens the search below. The DRAM
// devices draw their energy per bit whatever the SM clock (their clock does not move under a power
// cap [ninfer-3090-pr-72]). The clock a workload sustains is the highest x ≤ max_clock / boost with
// P(x) within the limit: a GeForce board under its limit boosts above the rated clock; a dense GEMM
// that would draw more than the TDP runs below it. Compute-bound work runs at x times the rated
// rate; DRAM-bound work at its bandwidth.
#include <algorithm>
#include <cmath>

#include "gpusim/physics.hpp"

namespace gpusim::physics {

namespace {

// Lowest clock the model considers, relative to boost: far below any clock a board settles at
// under a power limit (the RTX 3090 at 150 W of 350 W still ran at about a fifth of its speed,
// row P01); it keeps the search bounded.
constexpr double kMinClock = 0.05;

}  // namespace

double max_clock_ratio(const hardware::GpuSpec& g) { return g.max_clock / g.boost_clock; }

double min_clock_ratio() { return kMinClock; }

double voltage_factor(const hardware::GpuSpec& g, double x) {
  const double knee = g.voltage_knee / g.boost_clock;
  const double v = std::max(x, knee);
  const double v1 = std::max(1.0, knee);
  return x * v * v / (v1 * v1);
}

double core_activity(const hardware::GpuSpec& g, const PowerMix& s) {
  const double idle_share = std::max(0.0, 1.0 - s.tensor - s.simt - s.memory);
  return s.tensor * g.activity.gemm + s.simt * g.activity.simt + s.memory * g.activity.memory +
         idle_share * g.activity.idle;
}

Watts dram_power(const hardware::GpuSpec& g, BytesPerSecond dram) {
  return Watts(g.dram_energy_per_bit * 8.0 * dram.value());
}

Watts board_power(const hardware::GpuSpec& g, const PowerMix& s, double clock) {
  return g.busy_floor + dram_power(g, s.dram) +
         (g.tdp - g.busy_floor) * (core_activity(g, s) * voltage_factor(g, clock));
}

double sustained_clock(const hardware::GpuSpec& g, Watts limit, const PowerMix& s) {
  double hi = max_clock_ratio(g);
  if (board_power(g, s, hi) <= limit) {
    return hi;
  }
  double lo = kMinClock;
  if (board_power(g, s, lo) >= limit) {
    return lo;
  }
  // v(x) is increasing: bisection to well below any difference a report shows.
  for (int i = 0; i < 60 && hi - lo > 1e-6; ++i) {
    const double mid = 0.5 * (lo + hi);
    (board_power(g, s, mid) <= limit ? lo : hi) = mid;
  }
  return lo;
}

double activity_from_power(const hardware::GpuSpec& g, Watts measured, BytesPerSecond dram, double clock) {
  return (measured - g.busy_floor - dram_power(g, dram)) / ((g.tdp - g.busy_floor) * voltage_factor(g, clock));
}

PowerClock intensity_power(const hardware::GpuSpec& g, double intensity, bool tensor, Watts limit) {
  const DType dtype = tensor ? DType::kBf16 : DType::kFp32;
  const FlopPerSecond roof = g.peak_for(dtype) * gemm_efficiency(g, dtype);
  const BytesPerSecond bw = dram_bandwidth(g);
  PowerClock pc;
  pc.clock = max_clock_ratio(g);
  for (int i = 0; i < 20; ++i) {
    // Compute-bound above the ridge point at this clock: DRAM carries FLOP rate / intensity.
    const double flop_rate = std::min(roof.value() * pc.clock, bw.value() * intensity);
    const bool compute = roof.value() * pc.clock <= bw.value() * intensity;
    pc.mix = PowerMix{};
    (compute ? (tensor ? pc.mix.tensor : pc.mix.simt) : pc.mix.memory) = 1.0;
    pc.mix.dram = BytesPerSecond(flop_rate / intensity);
    const double next = sustained_clock(g, limit, pc.mix);
    const bool settled = std::fabs(next - pc.clock) < 1e-6;
    pc.clock = next;
    if (settled) {
      break;
    }
  }
  pc.power = board_power(g, pc.mix, pc.clock);
  return pc;
}

bool on_tensor_cores(DType dtype) { return dtype != DType::kFp32 && dtype != DType::kFp64; }

}  // namespace gpusim::physics
