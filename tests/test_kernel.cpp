// The kernel model: roofline, wave quantization, split-K, L2 reuse, L2-resident elementwise.
#include <cmath>

#include "helpers.hpp"

using namespace gpusim;
using hardware::GpuSpec;
using lowering::benchmark_gemm;
using lowering::Op;
using lowering::OpKind;
using physics::kernel_time;
using physics::KernelTime;
using physics::wave_efficiency;

TEST_CASE("a full wave of full tiles has wave efficiency 1, and one tile more costs a whole wave", "[kernel]") {
  const GpuSpec a100 = test::catalog().gpu("a100-sxm4-80gb");  // 108 SMs, 128x128 tiles
  // 108 tiles of 128x128: 12 x 9
  CHECK(wave_efficiency(12 * 128, 9 * 128, 1, a100) == Approx(1.0));
  // 109 tiles need 2 waves: 109 / (2 * 108)
  CHECK(wave_efficiency(109 * 128, 128, 1, a100) == Approx(109.0 / 216.0));
}

TEST_CASE("a compute-bound GEMM runs at peak x efficiency x wave efficiency plus its fixed latency", "[kernel]") {
  const GpuSpec g = test::catalog().gpu("a100-sxm4-80gb");
  const Op op = benchmark_gemm(DType::kBf16, 12 * 128 * 4, 9 * 128 * 4, 8192);  // 16 full waves
  const KernelTime kt = kernel_time(op, g);
  CHECK(kt.compute_bound());
  // The staging and tile shares (test_gemm_rates.cpp) from the spec: r = 312e12 / (108 x 1410 MHz).
  const double r = g.peak_for(DType::kBf16).value() / (g.sm_count * g.boost_clock.value());
  const double staging = 1.0 / (1.0 + r / g.efficiency.gemm_staging_rate);
  const double loop = 2.0 * 128 * 128 * 8192 / r;
  const double tile = loop / (loop + g.efficiency.gemm_tile_cycles.value());
  CHECK(kt.compute.value() ==
        Approx(op.flops.value() / (g.peak_for(DType::kBf16).value() * g.efficiency.gemm * staging * tile) +
               g.efficiency.gemm_latency.value()));
}

TEST_CASE("split-K fills the SMs when the output has too few tiles", "[kernel]") {
  const GpuSpec g = test::catalog().gpu("a100-sxm4-80gb");
  // 4 output tiles and a long K: one slice per tile would leave 104 of 108 SMs idle.
  const Op op = benchmark_gemm(DType::kBf16, 256, 256, 65536);
  const double unsplit =
      op.flops.value() /
      (g.peak_for(DType::kBf16).value() * physics::gemm_efficiency(g, DType::kBf16) * wave_efficiency(256, 256, 1, g));
  CHECK(kernel_time(op, g).compute.value() < 0.2 * unsplit);
}

TEST_CASE("GEMM traffic reads an operand that fits in half the L2 once", "[kernel][l2]") {
  GpuSpec g = test::catalog().gpu("h100-sxm5-80gb");
  const double m = 4096, n = 4096, k = 4096;  // A = B = 32 MiB in bf16: B fits in half of 50 MB? no
  const Op op = benchmark_gemm(DType::kBf16, m, n, k);
  const double a = m * k * 2, b = k * n * 2, c = m * n * 2;
  // Infinite bandwidth in compute aside, the memory term is traffic / (BW * eta).
  const double bw = g.memory_bandwidth.value() * g.efficiency.dram;
  g.l2_size = Bytes(4 * a);  // both operands fit in half the L2: each read once
  CHECK(kernel_time(op, g).memory.value() == Approx((a + b + c) / bw));
  g.l2_size = Bytes(a);  // half the L2 holds half of an operand: the other is read twice
  CHECK(kernel_time(op, g).memory.value() == Approx((a + 2 * b + c) / bw));
}

TEST_CASE("an elementwise kernel whose working set fits in L2 reads from L2 and writes to DRAM", "[kernel][l2]") {
  const GpuSpec g = test::catalog().gpu("rtx4090");  // 72 MB L2
  Op small;
  small.kind = OpKind::kMemoryBound;
  small.bytes = Bytes(16e6);  // half read, half written
  const double l2 = g.l2_bandwidth.value() * g.efficiency.l2;
  const double dram = g.memory_bandwidth.value() * g.efficiency.dram;
  // max(R / BW_L2, W / BW_DRAM): the writes reach DRAM when the next kernels evict them
  CHECK(kernel_time(small, g).time.value() == Approx(std::max(8e6 / l2, 8e6 / dram)));
  CHECK(kernel_time(small, g).dram.value() == Approx(8e6));
  Op read_only = small;
  read_only.write_share = 0;
  CHECK(kernel_time(read_only, g).time.value() == Approx(16e6 / l2));
  Op big = small;
  big.bytes = Bytes(1e9);
  CHECK(kernel_time(big, g).time.value() == Approx(1e9 / (g.memory_bandwidth.value() * g.efficiency.dram)));
}

TEST_CASE("a power limit slows compute by the clock scale", "[kernel]") {
  const GpuSpec g = test::catalog().gpu("h100-sxm5-80gb");
  Op attn;
  attn.kind = OpKind::kAttention;
  attn.dtype = DType::kBf16;
  attn.flops = Flop(1e13);
  attn.bytes = Bytes(1e6);
  CHECK(kernel_time(attn, g, 0.9).compute.value() == Approx(kernel_time(attn, g).compute.value() / 0.9));
}

TEST_CASE("a GEMV streams at most SMs x bytes in flight / DRAM latency (Little's law)", "[kernel]") {
  const GpuSpec g = test::catalog().gpu("a100-sxm4-80gb");
  const Op gemv = benchmark_gemm(DType::kFp16, 1, 11008, 4096);  // one token through an FFN matrix
  const double little = g.sm_count * g.efficiency.gemv_inflight_per_sm.value() / g.memory_latency.value();
  const double bw = std::min(g.memory_bandwidth.value() * g.efficiency.dram, little);
  CHECK(little < g.memory_bandwidth.value() * g.efficiency.dram);  // the A100 is concurrency-limited here
  CHECK(kernel_time(gemv, g).memory.value() == Approx(gemv.bytes.value() / bw));
  // a full-size GEMM is not capped: its memory time does not depend on the GEMV concurrency
  const Op big = benchmark_gemm(DType::kFp16, 4096, 11008, 4096);
  GpuSpec wide = g;
  wide.efficiency.gemv_inflight_per_sm = Bytes(1e9);
  CHECK(kernel_time(big, g).memory.value() == Approx(kernel_time(big, wide).memory.value()));
  CHECK(kernel_time(gemv, wide).memory.value() < kernel_time(gemv, g).memory.value());
}

TEST_CASE(
    "a GEMM takes the fastest of its split-K choices at its clock, so a higher clock or more bandwidth never "
    "slows it",
    "[kernel][monotone]") {
  // A skinny GEMM (M = 64 rows of a 4096 x 4096 weight) fills few tiles, so split-K is in play;
  // the time is the least over the splits of times that each fall with the clock and the bandwidth.
  const hardware::GpuSpec g = test::catalog().gpu("h100-sxm5-80gb");
  const lowering::Op op = lowering::benchmark_gemm(DType::kBf16, 64, 4096, 4096);
  double last = 1e30;
  for (double clock = 0.3; clock <= 1.3; clock += 0.01) {
    const double t = physics::kernel_time(op, g, clock).time.value();
    CHECK(t <= last * (1 + 1e-12));
    last = t;
  }
  hardware::GpuSpec wider = g;
  for (double f = 1.0; f <= 3.0; f += 0.1) {
    wider.memory_bandwidth = g.memory_bandwidth * f;
    CHECK(physics::kernel_time(op, wider, 1.0).time <= physics::kernel_time(op, g, 1.0).time);
  }
}

TEST_CASE("a GEMM keeps its tensor cores busy for its useful FLOPs at the achievable rate, bound by either roof",
          "[kernel][power]") {
  // Decode at batch 16 through an 8192 x 8192 bf16 weight on an H100: 128 MiB streamed for 2 GFLOP.
  const hardware::GpuSpec g = test::catalog().gpu("h100-sxm5-80gb");
  const double eta = physics::gemm_efficiency(g, DType::kBf16);
  const lowering::Op decode = lowering::benchmark_gemm(DType::kBf16, 16, 8192, 8192);
  const physics::KernelTime kt = physics::kernel_time(decode, g, 1.0);
  REQUIRE(!kt.compute_bound());
  CHECK(kt.busy_arithmetic().value() == Approx(decode.flops.value() / (g.peak_for(DType::kBf16).value() * eta)));
  CHECK(kt.busy_arithmetic() < kt.time);
  // A large compute-bound one: all of it but the fixed latency and the last wave's idle SMs.
  const lowering::Op square = lowering::benchmark_gemm(DType::kBf16, 8192, 8192, 8192);
  const physics::KernelTime big = physics::kernel_time(square, g, 1.0);
  REQUIRE(big.compute_bound());
  CHECK(big.busy_arithmetic().value() == Approx(square.flops.value() / (g.peak_for(DType::kBf16).value() * eta)));
  CHECK(big.busy_arithmetic().value() > 0.9 * big.time.value());
}
