// Kernel time on one GPU: a roofline [williams-2009] with wave quantization for GEMMs.
//   t = max(FLOPs / (peak · η_compute · clock), bytes / (BW_dram · η_dram))
// GEMMs: the output is cut into tm x tn tiles spread over the SMs in waves; a partial last wave
// still takes a whole wave, and each tile pays c cycles besides its K loop (filling the operand
// pipeline before the first MMA, writing the tile after the last):
//   t_compute = ⌈tiles / SMs⌉ · (2·tm·tn·k / r + c) / (clock · η_gemm) + t_fixed,
// with r = peak / (SMs · boost clock) the tensor rate per SM per clock, t_fixed the calibrated
// per-GEMM latency and η_gemm per dtype. The K loop of a tile is short where r is high (H100:
// 4096 FLOP/clk/SM, an RTX 4090 with fp32 accumulation: 512), so medium GEMMs lose more there.
// Where the architecture states an operand staging rate F (Ampere, Ada: ldmatrix and mma.sync),
// η_gemm is the architecture's value times 1 / (1 + r / F): staging a K block's operands takes a
// fixed time the MMAs do not hide, so a GeForce SM, whose FP32-accumulate MMAs run at a quarter
// of a GA100 SM's rate per clock, reaches a larger share of its own peak.
// Outputs with too few tiles to fill the SMs use split-K [cutlass]: s K-slices in parallel
// (s ∈ 1..16, at least 256 of K each), paying 2·s·M·N·4 bytes of fp32 partials; the fastest s is
// taken. GEMV-like GEMMs (M <= 16) stream at most SMs × bytes-in-flight-per-SM / DRAM latency
// (Little's law [little-1961]). GEMM DRAM traffic after L2 reuse: an operand that fits in half the
// L2 is read once; otherwise the other operand is re-read once per L2-sized panel (the better loop
// order; C written once). Attention uses η_attention (measured FlashAttention throughput) times the
// share of it the runtime's kernel reaches (op.attn_share: 1 for FlashAttention-2 itself);
// memory-bound kernels only the bandwidth term: when the kernel's whole working set
// fits in L2 (reads from L2, writes to DRAM), else DRAM; one that reduces before it writes at
// most at the Little's-law rate of the GEMV. GEMMs on int8 tensor cores through mma.sync
// (llama.cpp's MMQ) run at the int8 peak x the architecture's mma.sync share x the kernel's share.
// Launch and framework overheads belong to the step model.
#include <algorithm>
#include <cmath>

#include "gpusim/physics.hpp"

namespace gpusim::physics {

using hardware::GpuSpec;
using lowering::Op;
using lowering::OpKind;

namespace {

// Smallest tile a GEMM kernel uses along a dimension: the m16n8k16 shape of the tensor-core mma
// instruction [nvidia-ptx-isa, "Matrix shape" of mma.sync]. Skinny GEMMs (decode, M = batch) run
// GEMV-like kernels with tiles shrunk to the problem, not a 128-wide tile mostly empty.
constexpr double kMinTile = 16.0;
// Split-K keeps at least this much of K per slice: one K-block of CUTLASS's 128x128x32 and
// 128x256x64 kernels is 32-64 deep, and a slice needs a few blocks to pipeline.
constexpr double kMinSplitK = 256.0;

struct Tiling {
  double tm = 128;
  double tn = 128;
  double tiles = 0;
};

Tiling tiling(double m, double n, double batch, const GpuSpec& gpu) {
  Tiling t;
  t.tm = std::min<double>(gpu.efficiency.gemm_tile_m, std::max(kMinTile, std::ceil(m / kMinTile) * kMinTile));
  t.tn = std::min<double>(gpu.efficiency.gemm_tile_n, std::max(kMinTile, std::ceil(n / kMinTile) * kMinTile));
  t.tiles = std::ceil(m / t.tm) * std::ceil(n / t.tn) * batch;
  return t;
}

// Useful work over the work of the whole waves of full tiles, with the K loop cut in `split`.
double split_efficiency(double m, double n, double batch, const GpuSpec& gpu, double split) {
  const Tiling t = tiling(m, n, batch, gpu);
  const double sms = gpu.sm_count;
  const double waves = std::ceil(t.tiles * split / sms);
  return (m * n * batch * split) / (waves * sms * t.tm * t.tn);
}

// DRAM traffic of a GEMM after L2 reuse, the better of two schedules (C written once):
//  - blocked-matmul I/O: an operand that fits in half the L2 is read once while the other streams
//    past it; otherwise the streaming operand is read once per L2-sized panel of the resident one;
//  - wave rasterization: the tiles running at once (one per SM) form a block of r tile rows by
//    c tile columns that advance along K together, so L2 serves each K-slice of A to the c tiles
//    of a row and of B to the r tiles of a column; each wave reads (r·tm·ea + c·tn·eb)·K.
//    Large-K GEMMs (weight gradients over many tokens) stream far less than the panel rule says.
Bytes gemm_traffic(const Op& op, const GpuSpec& gpu) {
  if (op.ea <= 0 || op.batch != 1) {
    return op.bytes;  // batched and opaque GEMMs keep their stated traffic
  }
  const double a = op.m * op.k * op.ea;
  const double b = op.k * op.n * op.eb;
  const double c = op.m * op.n * op.ec;
  const double half_l2 = 0.5 * gpu.l2_size.value();
  const double a_outer = a + b * std::max(1.0, std::ceil(a / half_l2));  // A panels resident, B streams
  const double b_outer = b + a * std::max(1.0, std::ceil(b / half_l2));  // B panels resident, A streams
  const Tiling t = tiling(op.m, op.n, 1.0, gpu);
  const double rows = std::ceil(op.m / t.tm);
  const double cols = std::ceil(op.n / t.tn);
  const double in_flight = std::min(t.tiles, static_cast<double>(gpu.sm_count));
  const double r = std::min(rows, std::max(1.0, std::round(std::sqrt(in_flight))));
  const double cw = std::min(cols, std::ceil(in_flight / r));
  const double waves = std::ceil(t.tiles / in_flight);
  const double rasterized = std::max(a + b, waves * (r * t.tm * op.ea + cw * t.tn * op.eb) * op.k);
  return Bytes(std::min({a_outer, b_outer, rasterized}) + c);
}

// A GEMM on int8 tensor cores through the warp-level mma.sync (llama.cpp's MMQ kernels): the int8
// peak at the clock, times the share of it mma.sync reaches on the architecture (efficiency.mma_sync)
// and the kernel's share of that (op.int8_mma). MMQ's stream-k decomposition splits the tiles' K
// loops evenly over the SMs [llama-cpp-pr-8018], so no partial last wave. Its operands stream after
// L2 reuse as any GEMM's.
KernelTime int8_mma_time(const Op& op, const GpuSpec& gpu, double clock) {
  KernelTime kt;
  const FlopPerSecond rate = gpu.peak_for(DType::kInt8) * clock * (gpu.efficiency.mma_sync * op.int8_mma);
  kt.compute = op.flops / rate;
  kt.arithmetic = kt.compute;
  kt.dram = gemm_traffic(op, gpu);
  kt.memory = kt.dram / dram_bandwidth(gpu);
  kt.time = std::max(kt.compute, kt.memory);
  return kt;
}

}  // namespace

bool l2_resident(const Op& op, const GpuSpec& gpu) {
  return op.kind == OpKind::kMemoryBound && op.bytes <= gpu.l2_size;
}

double wave_efficiency(double m, double n, double batch, const GpuSpec& gpu) {
  return split_efficiency(m, n, batch, gpu, 1.0);
}

double tensor_rate_per_sm(const GpuSpec& gpu, DType dtype) {
  return gpu.peak_for(dtype).value() / (gpu.sm_count * gpu.boost_clock.value());
}

double tile_efficiency(double m, double n, double k, const GpuSpec& gpu, DType dtype) {
  const double fixed = gpu.efficiency.gemm_tile_cycles.value();
  if (fixed <= 0 || k <= 0) {
    return 1.0;
  }
  const Tiling t = tiling(m, n, 1.0, gpu);
  const double loop = 2.0 * t.tm * t.tn * k / tensor_rate_per_sm(gpu, dtype);
  return loop / (loop + fixed);
}

double staging_efficiency(const GpuSpec& gpu, DType dtype) {
  const double rate16 = gpu.efficiency.gemm_staging_rate;
  if (rate16 <= 0 || !on_tensor_cores(dtype)) {
    return 1.0;
  }
  const double rate = rate16 * 2.0 / units::bytes_per_element(dtype);
  return 1.0 / (1.0 + tensor_rate_per_sm(gpu, dtype) / rate);
}

double gemm_efficiency(const GpuSpec& gpu, DType dtype) {
  // Each low-precision datatype has its own share where a spec file states it (efficiency.gemm_fp8,
  // efficiency.gemm_fp4, specs/README.md); fp4 falls back to fp8's, fp8 to the 16-bit share.
  const hardware::Efficiency& e = gpu.efficiency;
  const double fp8 = e.gemm_fp8.value_or(e.gemm);
  const double eta = dtype == DType::kFp4 ? e.gemm_fp4.value_or(fp8) : dtype == DType::kFp8 ? fp8 : e.gemm;
  return eta * staging_efficiency(gpu, dtype);
}

BytesPerSecond dram_bandwidth(const GpuSpec& gpu) { return gpu.memory_bandwidth * gpu.efficiency.dram; }

double ridge_intensity(const GpuSpec& gpu, DType dtype) {
  return (gpu.peak_for(dtype) * gemm_efficiency(gpu, dtype)).value() / dram_bandwidth(gpu).value();
}

KernelTime kernel_time(const Op& op, const GpuSpec& gpu, double clock) {
  const BytesPerSecond bw = dram_bandwidth(gpu);
  KernelTime kt;
  kt.memory = op.bytes / bw;
  kt.dram = op.bytes;
  if (op.kind == OpKind::kMemoryBound || op.flops.value() <= 0) {
    // An elementwise kernel reads what the previous kernel just wrote: when its whole working set
    // fits in L2, its reads hit L2. Its writes still reach DRAM: the lines are written back when
    // evicted, and the next kernels evict them. Reads and writes are taken as their share of the traffic
    // each (the op's write share) and overlap: t = max(R / BW_L2, W / BW_DRAM).
    if (l2_resident(op, gpu)) {
      const Bytes written = op.bytes * op.write_share;
      kt.memory = std::max((op.bytes - written) / (gpu.l2_bandwidth * gpu.efficiency.l2), written / bw);
      kt.dram = written;
    }
    // A kernel that reduces each row (a norm) or column (a sum over the tokens) before it writes
    // issues no further loads until its reduction completes, so each SM keeps only the traffic of
    // its current rows in flight. By Little's law [little-1961] it then streams at most
    // SMs × bytes in flight per SM / DRAM latency, with the bytes in flight per SM of the
    // architecture's other latency-bound kernel, the GEMV. On a GPU whose bandwidth grew faster
    // than its SMs (H100 SXM: 132 × 4 KiB / 383 ns = 1.41 TB/s against 2.9 TB/s streamed) this is
    // the bound; on one with few bytes per second per SM (RTX 4090: 2.1 against 0.92 TB/s) it is
    // not. An H100's LayerNorm forward and bias-gradient sums ran at 1.36 and 1.38 TB/s over
    // L2-sized tensors [gpusim-h100-profile-2026-11]: the bound holds with the data in L2 too.
    if (op.reduction && gpu.memory_latency.value() > 0) {
      const BytesPerSecond little(gpu.sm_count * gpu.efficiency.gemv_inflight_per_sm.value() /
                                  gpu.memory_latency.value());
      kt.memory = std::max(kt.memory, op.bytes / little);
    }
    kt.time = kt.memory;
    return kt;
  }
  if (op.int8_mma > 0 && gpu.supports(DType::kInt8)) {
    return int8_mma_time(op, gpu, clock);
  }
  // int8/int4 weights are dequantized and multiplied in fp16.
  const DType dt = gpu.supports(op.dtype) ? op.dtype : DType::kFp16;
  const FlopPerSecond peak = gpu.peak_for(dt) * clock;
  if (op.kind != OpKind::kGemm) {
    const double eta =
        op.flash3 ? gpu.efficiency.attention_flash3.value_or(gpu.efficiency.attention) : gpu.efficiency.attention;
    kt.compute = op.flops / (peak * (eta * op.attn_share));
    kt.arithmetic = kt.compute;
    kt.time = std::max(kt.compute, kt.memory);
    return kt;
  }
  const double eta = gemm_efficiency(gpu, dt);
  // A GEMV-like kernel (M no larger than one mma tile: decode at small batch) streams its weights
  // with limited memory-level parallelism; by Little's law it cannot exceed
  // SMs x bytes in flight per SM / DRAM latency.
  BytesPerSecond stream_bw = bw;
  if (op.m <= kMinTile && op.batch == 1 && gpu.memory_latency.value() > 0) {
    const Bytes inflight = op.inflight.value() > 0 ? op.inflight : gpu.efficiency.gemv_inflight_per_sm;
    const BytesPerSecond little(gpu.sm_count * inflight.value() / gpu.memory_latency.value());
    stream_bw = std::min(bw, little);
  }
  // Split-K (CUTLASS "split-K parallel"): when the output has too few tiles to fill the SMs, the
  // K loop is cut into s slices computed in parallel and reduced afterwards, at the cost of
  // writing and reading s fp32 partial outputs. Of s in {1, 2, 4, 8, 16} the fastest is taken (as
  // a library's tuned choice): the least of times that each fall with the clock, the peak and the
  // bandwidth, so a faster GPU never gets a slower GEMM from a different split.
  // A kernel that unpacks quantized weights on the fly (W4A16, llama.cpp's MMVQ) streams them
  // below a plain GEMV's rate: the runtime's measured share (op.stream).
  const Bytes traffic = gemm_traffic(op, gpu);
  // The GEMM's shape efficiency for K cut in `split` slices: wave quantization
  // (split_efficiency) times the fixed cost of each tile (tile_efficiency), with the tiling, which
  // does not depend on the split, taken once.
  const Tiling tiled = tiling(op.m, op.n, op.batch, gpu);
  const double sms = gpu.sm_count;
  const double fixed = gpu.efficiency.gemm_tile_cycles.value();
  const double rate = tensor_rate_per_sm(gpu, dt);
  auto shape = [&](double split) {
    const double waves = std::ceil(tiled.tiles * split / sms);
    const double wave = (op.m * op.n * op.batch * split) / (waves * sms * tiled.tm * tiled.tn);
    const double k = op.k / split;
    if (fixed <= 0 || k <= 0) {
      return wave * 1.0;
    }
    const double loop = 2.0 * tiled.tm * tiled.tn * k / rate;
    return wave * (loop / (loop + fixed));
  };
  for (double s = 1; s <= 16; s *= 2) {
    if (s > 1 && op.k / s < kMinSplitK) {
      break;
    }
    const Bytes dram = traffic + Bytes(s > 1 ? 2.0 * s * op.m * op.n * op.batch * 4.0 : 0.0);
    const Seconds compute = op.flops / (peak * (eta * shape(s))) + gpu.efficiency.gemm_latency;
    const Seconds memory = dram / (stream_bw * op.stream);
    if (s == 1 || std::max(compute, memory) < kt.time) {
      kt.compute = compute;
      kt.arithmetic = op.flops / (peak * eta);
      kt.memory = memory;
      kt.dram = dram;
      kt.time = std::max(compute, memory);
    }
  }
  return kt;
}

double kernel_clock(const Op& op, const GpuSpec& gpu, Watts limit) {
  // The clock depends on the mix, the mix on the clock: iterate from the highest clock; the
  // power falls with the clock, so the iterates settle within a few rounds.
  double clock = max_clock_ratio(gpu);
  for (int i = 0; i < 8; ++i) {
    const KernelTime kt = kernel_time(op, gpu, clock);
    PowerMix mix;
    const bool compute = kt.compute_bound() && op.kind != OpKind::kMemoryBound;
    if (compute) {
      (on_tensor_cores(op.dtype) ? mix.tensor : mix.simt) = 1.0;
    } else {
      mix.memory = 1.0;
    }
    mix.dram = kt.dram / kt.time;
    const double next = sustained_clock(gpu, limit, mix);
    if (std::fabs(next - clock) < 1e-4) {
      return next;
    }
    clock = next;
  }
  return clock;
}

}  // namespace gpusim::physics
