// Kernel time on one GPU: a roofline with wave quantization for GEMMs (first kernel model).
//   t = max(FLOPs / (peak · η_compute · clock_scale), bytes / (BW_dram · η_dram))
// GEMMs: the output is cut into tm x tn tiles spread over the SMs in waves; a partial last wave
// still takes a whole wave: t_compute = ⌈tiles / SMs⌉ · 2·tm·tn·k / (peak/SMs · η_gemm) + t_fixed,
// with t_fixed the calibrated per-GEMM latency (pipeline fill and drain) and η_gemm per dtype.
// Outputs with too few tiles to fill the SMs use split-K: s K-slices in parallel (s ∈ 1..16, at
// least 256 of K each), paying 2·s·M·N·4 bytes of fp32 partials; the fastest s is taken.
// GEMV-like GEMMs (M <= 16) stream at most SMs × bytes-in-flight-per-SM / DRAM latency (Little's law).
// GEMM DRAM traffic after L2 reuse: an operand that fits in half the L2 is read once; otherwise the
// other operand is re-read once per L2-sized panel (the better loop order; C written once).
// Attention uses η_attention (measured FlashAttention throughput), memory-bound kernels only
// the bandwidth term: L2 bandwidth when the kernel's whole working set fits in L2, else DRAM. Launch and framework
// overheads are accounted for by the step model.
#pragma once

#include "gpusim/spec/hardware.hpp"
#include "gpusim/workload/ops.hpp"

namespace gpusim {

struct KernelTime {
  Seconds compute;  // time if only the arithmetic mattered
  Seconds memory;   // time if only DRAM traffic mattered
  Seconds time;     // max of the two
  [[nodiscard]] bool compute_bound() const { return compute >= memory; }
};

// clock_scale < 1 when a power limit lowers clocks (compute rate scales with it).
KernelTime kernel_time(const Op& op, const GpuSpec& gpu, double clock_scale = 1.0);

// Fraction of dense peak a GEMM of this shape reaches from wave quantization alone (0..1].
double wave_efficiency(double m, double n, double batch, const GpuSpec& gpu);

}  // namespace gpusim
