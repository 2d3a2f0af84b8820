// Rules of the kernel model that carry across GPUs through their spec: the GEMM operand-staging
// share (tensor rate per SM per clock against the architecture's staging rate), the fixed cycles
// of each GEMM tile, and Little's law on kernels that reduce before they write.
#include <algorithm>

#include "helpers.hpp"

using namespace gpusim;
using catalog::SpecFile;
using hardware::GpuSpec;
using lowering::benchmark_gemm;
using lowering::Op;
using lowering::OpKind;
using physics::kernel_time;

namespace {

// Dense tensor FLOPs per clock per SM at the rated clock, from the spec's own numbers.
double rate_of(const GpuSpec& g, DType d) { return g.peak_for(d).value() / (g.sm_count * g.boost_clock.value()); }

Op reduction_op(double bytes) {
  Op op;
  op.name = "norm";
  op.kind = OpKind::kMemoryBound;
  op.bytes = Bytes(bytes);
  op.reduction = true;
  return op;
}

}  // namespace

TEST_CASE("the tensor rate per SM per clock is the dense peak over SMs and the rated clock", "[kernel][gemm-rates]") {
  const GpuSpec a100 = test::catalog().gpu("a100-sxm4-80gb");
  const GpuSpec rtx3090 = test::catalog().gpu("rtx3090");
  // A100: 312 TFLOP/s over 108 SMs at 1410 MHz; RTX 3090 with fp32 accumulation: 71 over 82 at 1695.
  CHECK(physics::tensor_rate_per_sm(a100, DType::kBf16) == Approx(312e12 / (108 * 1410e6)));
  CHECK(physics::tensor_rate_per_sm(rtx3090, DType::kBf16) == Approx(71e12 / (82 * 1695e6)));
  CHECK(physics::tensor_rate_per_sm(a100, DType::kBf16) / physics::tensor_rate_per_sm(rtx3090, DType::kBf16) ==
        Approx(4.0).epsilon(0.01));
}

TEST_CASE("operand staging costs a GPU in proportion to its tensor rate per SM per clock", "[kernel][gemm-rates]") {
  const GpuSpec a100 = test::catalog().gpu("a100-sxm4-80gb");
  const GpuSpec rtx3090 = test::catalog().gpu("rtx3090");
  const double f = a100.efficiency.gemm_staging_rate;
  REQUIRE(f > 0);
  REQUIRE(rtx3090.efficiency.gemm_staging_rate == f);  // one rate per architecture
  // share = 1 / (1 + r / F): the GeForce die, a quarter of the A100's rate, loses a quarter as much.
  for (const GpuSpec* g : {&a100, &rtx3090}) {
    CHECK(physics::staging_efficiency(*g, DType::kBf16) == Approx(1.0 / (1.0 + rate_of(*g, DType::kBf16) / f)));
    CHECK(physics::gemm_efficiency(*g, DType::kBf16) ==
          Approx(g->efficiency.gemm / (1.0 + rate_of(*g, DType::kBf16) / f)));
  }
  CHECK(physics::staging_efficiency(rtx3090, DType::kBf16) > physics::staging_efficiency(a100, DType::kBf16));
  // TF32 operands are 4 bytes: the staging rate halves with the tensor rate, the share stays.
  CHECK(physics::staging_efficiency(a100, DType::kTf32) ==
        Approx(1.0 / (1.0 + rate_of(a100, DType::kTf32) / (f * 2.0 / 4.0))));
  CHECK(physics::staging_efficiency(a100, DType::kTf32) == Approx(physics::staging_efficiency(a100, DType::kBf16)));
  // Off the tensor cores, and on an architecture without a staging rate, there is no staging term.
  CHECK(physics::staging_efficiency(a100, DType::kFp32) == 1.0);
  const GpuSpec h100 = test::catalog().gpu("h100-sxm5-80gb");
  REQUIRE(h100.efficiency.gemm_staging_rate == 0);
  CHECK(physics::staging_efficiency(h100, DType::kBf16) == 1.0);
  CHECK(physics::gemm_efficiency(h100, DType::kBf16) == h100.efficiency.gemm);
}

TEST_CASE("a GEMM tile pays fixed cycles besides its K loop, a larger share where the K loop is short",
          "[kernel][gemm-rates]") {
  const GpuSpec h100 = test::catalog().gpu("h100-sxm5-80gb");  // 128 x 256 tiles, 4096 FLOP/clk/SM
  const GpuSpec rtx4090 = test::catalog().gpu("rtx4090");      // 128 x 128 tiles, 512 with fp32 accumulation
  const double c_h = h100.efficiency.gemm_tile_cycles.value();
  const double c_a = rtx4090.efficiency.gemm_tile_cycles.value();
  REQUIRE(c_h > 0);
  REQUIRE(c_a > 0);
  for (const double k : {768.0, 3072.0}) {
    const double loop_h = 2.0 * 128 * 256 * k / rate_of(h100, DType::kBf16);
    const double loop_a = 2.0 * 128 * 128 * k / rate_of(rtx4090, DType::kBf16);
    CHECK(physics::tile_efficiency(8192, 8192, k, h100, DType::kBf16) == Approx(loop_h / (loop_h + c_h)));
    CHECK(physics::tile_efficiency(8192, 8192, k, rtx4090, DType::kBf16) == Approx(loop_a / (loop_a + c_a)));
  }
  // Deeper K: a smaller share lost; the same K on a GPU with an eighth of the rate per clock: less lost.
  CHECK(physics::tile_efficiency(8192, 8192, 768, h100, DType::kBf16) <
        physics::tile_efficiency(8192, 8192, 3072, h100, DType::kBf16));
  CHECK(physics::tile_efficiency(8192, 8192, 768, h100, DType::kBf16) <
        physics::tile_efficiency(8192, 8192, 768, rtx4090, DType::kBf16));
  // A shrunk tile (M = 64: one 64-row tile) has a shorter K loop per tile.
  const double loop64 = 2.0 * 64 * 256 * 768 / rate_of(h100, DType::kBf16);
  CHECK(physics::tile_efficiency(64, 8192, 768, h100, DType::kBf16) == Approx(loop64 / (loop64 + c_h)));
  // Without fixed cycles, or without a K loop, nothing is lost.
  GpuSpec none = h100;
  none.efficiency.gemm_tile_cycles = Cycles(0);
  CHECK(physics::tile_efficiency(8192, 8192, 768, none, DType::kBf16) == 1.0);
  CHECK(physics::tile_efficiency(8192, 8192, 0, h100, DType::kBf16) == 1.0);
}

TEST_CASE("a GEMM's time is its FLOPs over peak, efficiency, staging, wave and tile shares, plus its latency",
          "[kernel][gemm-rates]") {
  const GpuSpec h100 = test::catalog().gpu("h100-sxm5-80gb");
  // 132 SMs: 12 x 11 tiles of 128 x 256 is one full wave; K = 768 as a GPT-2 projection.
  const Op op = benchmark_gemm(DType::kBf16, 12 * 128, 11 * 256, 768);
  const physics::KernelTime kt = kernel_time(op, h100);
  REQUIRE(kt.compute_bound());
  const double loop = 2.0 * 128 * 256 * 768 / rate_of(h100, DType::kBf16);
  const double tile = loop / (loop + h100.efficiency.gemm_tile_cycles.value());
  CHECK(kt.compute.value() ==
        Approx(op.flops.value() / (h100.peak_for(DType::kBf16).value() * h100.efficiency.gemm * tile) +
               h100.efficiency.gemm_latency.value()));
}

TEST_CASE("a kernel that reduces before it writes streams at most SMs x bytes in flight per SM / DRAM latency",
          "[kernel][gemm-rates][little]") {
  const double bytes = 4e9;  // far above any L2
  // H100 SXM: 132 SMs x 4 KiB over 700 cycles at 1830 MHz = 1.41 TB/s, below its 2.9 TB/s stream rate.
  const GpuSpec h100 = test::catalog().gpu("h100-sxm5-80gb");
  const double little = h100.sm_count * h100.efficiency.gemv_inflight_per_sm.value() / h100.memory_latency.value();
  REQUIRE(little < physics::dram_bandwidth(h100).value());
  CHECK(kernel_time(reduction_op(bytes), h100).time.value() == Approx(bytes / little));
  Op plain = reduction_op(bytes);
  plain.reduction = false;
  CHECK(kernel_time(plain, h100).time.value() == Approx(bytes / physics::dram_bandwidth(h100).value()));
  // RTX 4090: 128 SMs x 4 KiB over 636 cycles at 2520 MHz = 2.1 TB/s, above its 0.92 TB/s: DRAM-bound.
  const GpuSpec rtx4090 = test::catalog().gpu("rtx4090");
  const double little_4090 =
      rtx4090.sm_count * rtx4090.efficiency.gemv_inflight_per_sm.value() / rtx4090.memory_latency.value();
  REQUIRE(little_4090 > physics::dram_bandwidth(rtx4090).value());
  CHECK(kernel_time(reduction_op(bytes), rtx4090).time.value() ==
        Approx(bytes / physics::dram_bandwidth(rtx4090).value()));
}

TEST_CASE("the lowering marks norms and weight- and bias-gradient sums as reductions, elementwise passes not",
          "[lowering][gemm-rates][little]") {
  // GPT-2 under eager PyTorch: LayerNorm as one kernel, biases summed by autograd, GammaBeta apart.
  const Scenario sc = test::scenario(std::string(test::kSmallTraining) + "[runtime]\nname = \"pytorch-ddp\"\n");
  REQUIRE_FALSE(sc.runtime.fusion.bias_grad);
  REQUIRE_FALSE(sc.runtime.fusion.norm_backward);
  const auto ops = lowering::lower_training(sc.job.model, *sc.job.training, sc.layout, sc.runtime);
  auto reduction_named = [&](const std::string& name) {
    bool any = false;
    for (const Op& op : ops) {
      if (op.name == name) {
        any = true;
        if (!op.reduction) {
          return false;
        }
      }
    }
    return any;
  };
  CHECK(reduction_named("norm"));
  CHECK(reduction_named("norm.weight_grad"));
  CHECK(reduction_named("bias.grad"));
  CHECK(reduction_named("final_norm"));
  for (const Op& op : ops) {
    if (op.name == "residual" || op.name == "gelu" || op.name == "norm.bwd" || op.kind != OpKind::kMemoryBound) {
      CHECK_FALSE(op.reduction);
    }
  }
}

TEST_CASE("bad GEMM staging rates and tile cycles in a spec file are errors with their position",
          "[spec][errors][gemm-rates]") {
  Catalog c = test::catalog();
  c.add_file(SpecKind::kGpu, "bad", SpecFile{"specs/gpus/bad.toml", R"(base = "h100-sxm5-80gb"
name = "bad"
[efficiency]
gemm_staging_rate = -3
gemm_tile_cycles = "3000 us"
)"});
  const auto ds = test::diagnostics_of([&] { (void)c.gpu("bad"); });
  REQUIRE(ds.size() == 2);
  const auto rate =
      std::find_if(ds.begin(), ds.end(), [](const Diagnostic& d) { return d.key == "efficiency.gemm_staging_rate"; });
  REQUIRE(rate != ds.end());
  CHECK(rate->pos.file == "specs/gpus/bad.toml");
  CHECK(rate->pos.line == 4);
  CHECK_THAT(rate->message, Catch::Contains("-3"));
  const auto cycles =
      std::find_if(ds.begin(), ds.end(), [](const Diagnostic& d) { return d.key == "efficiency.gemm_tile_cycles"; });
  REQUIRE(cycles != ds.end());
  CHECK(cycles->pos.line == 5);
  CHECK_THAT(cycles->message, Catch::Contains("3000 us"));
}
