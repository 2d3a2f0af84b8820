// Rules of the kernel model that carry across GPUs through their spec: Little's law on kernels
// that reduce before they write.
#include "helpers.hpp"

using namespace gpusim;
using hardware::GpuSpec;
using lowering::Op;
using lowering::OpKind;
using physics::kernel_time;

namespace {

Op reduction_op(double bytes) {
  Op op;
  op.name = "norm";
  op.kind = OpKind::kMemoryBound;
  op.bytes = Bytes(bytes);
  op.reduction = true;
  return op;
}

}  // namespace

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
