// Roofline kernel model with GEMM wave quantization (equations in kernel.hpp).
#include "gpusim/model/kernel.hpp"

#include <algorithm>
#include <cmath>

namespace gpusim {

// Smallest tile a GEMM kernel uses along a dimension: the m16n8k16 shape of the tensor-core mma
// instruction (PTX ISA, "Matrix shape" of mma.sync). Skinny GEMMs (decode, M = batch) run
// GEMV-like kernels with tiles shrunk to the problem, not a 128-wide tile mostly empty.
constexpr double kMinTile = 16.0;

double wave_efficiency(double m, double n, double batch, const GpuSpec& gpu) {
  const double tm =
      std::min<double>(gpu.efficiency.gemm_tile_m, std::max(kMinTile, std::ceil(m / kMinTile) * kMinTile));
  const double tn =
      std::min<double>(gpu.efficiency.gemm_tile_n, std::max(kMinTile, std::ceil(n / kMinTile) * kMinTile));
  const double sms = gpu.sm_count;
  const double tiles = std::ceil(m / tm) * std::ceil(n / tn) * batch;
  const double waves = std::ceil(tiles / sms);
  // Useful work over the work of `waves` full waves of full tiles.
  return (m * n * batch) / (waves * sms * tm * tn);
}

KernelTime kernel_time(const Op& op, const GpuSpec& gpu, double clock_scale) {
  KernelTime kt;
  const BytesPerSecond bw = gpu.memory_bandwidth * gpu.efficiency.dram;
  kt.memory = op.bytes / bw;
  if (op.kind != OpKind::kMemoryBound && op.flops.value() > 0) {
    // int8/int4 weights are dequantized and multiplied in fp16.
    const DType dt = gpu.supports(op.dtype) ? op.dtype : DType::kFp16;
    const FlopPerSecond peak = gpu.peak_for(dt) * clock_scale;
    if (op.kind == OpKind::kGemm) {
      const double wave = wave_efficiency(op.m, op.n, op.batch, gpu);
      const double eta = dt == DType::kFp8 ? gpu.efficiency.gemm_fp8.value_or(gpu.efficiency.gemm) : gpu.efficiency.gemm;
      kt.compute = op.flops / (peak * (eta * wave)) + gpu.efficiency.gemm_latency;
    } else {
      kt.compute = op.flops / (peak * gpu.efficiency.attention);
    }
  }
  kt.time = std::max(kt.compute, kt.memory);
  return kt;
}

}  // namespace gpusim
