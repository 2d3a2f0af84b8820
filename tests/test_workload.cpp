// Parameter counts, FLOPs and the lowering of a training step.
#include "gpusim/workload/ops.hpp"
#include "helpers.hpp"

using namespace gpusim;

TEST_CASE("GPT-2 124M has 124.4M parameters with tied embeddings", "[workload][params]") {
  const ModelShape m = test::catalog().model("gpt2-124m");
  const double h = 768, f = 3072, V = 50257, L = 12, positions = 1024;
  // per layer: QKV h*3h + 3h bias, proj h*h + h, FFN 2*h*f + f + h, two layernorms 2*2h
  const double per_layer = h * 3 * h + 3 * h + h * h + h + 2 * h * f + f + h + 4 * h;
  const double expected = L * per_layer + V * h + positions * h + 2 * h;
  CHECK(total_params(m) == expected);
  CHECK(total_params(m) == 124439808.0);
}

TEST_CASE("Llama-2-7B has 6.74B parameters", "[workload][params]") {
  const ModelShape m = test::catalog().model("llama2-7b");
  const double h = 4096, f = 11008, V = 32000, L = 32;
  // per layer: 4h^2 attention + 3*h*f swiglu + two rmsnorm weights; untied embedding and head
  const double expected = L * (4 * h * h + 3 * h * f + 2 * h) + 2 * V * h + h;
  CHECK(total_params(m) == expected);
  CHECK(total_params(m) == 6738415616.0);
}

TEST_CASE("grouped-query attention shrinks the K and V projections", "[workload][params]") {
  const ModelShape m = test::catalog().model("llama3-8b");
  const double h = 4096, kv = 8 * 128, f = 14336;
  CHECK(count_params(m).per_layer == h * (h + 2 * kv) + h * h + 3 * h * f + 2 * h);
}

TEST_CASE("the quick params form derives a standard shape close to the request", "[workload][params]") {
  for (const double n : {1e9, 7e9, 70e9}) {
    const auto m = shape_from_params(n, 32000);
    REQUIRE(m.has_value());
    CHECK(total_params(*m) == Approx(n).epsilon(0.1));
    CHECK(m->hidden % m->heads == 0);
  }
}

TEST_CASE("a params value no standard shape can reach is an error, not a crash", "[workload][params][errors]") {
  CHECK_FALSE(shape_from_params(1e3, 32000).has_value());
  const auto ds = test::diagnostics_of([] { (void)test::scenario(test::kSmallTraining, {{"model.preset", "\"\""}}); });
  CHECK_FALSE(ds.empty());
  const std::string toml = R"(name = "tiny"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
params = 1e3
[training]
tokens = 1e9
seq_len = 1024
global_batch = 8
)";
  const auto errs = test::diagnostics_of([&] { (void)test::scenario(toml); });
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].key == "model.params");
}

TEST_CASE("training GEMM FLOPs are 6 x matmul parameters x tokens", "[workload][flops]") {
  const Scenario sc = test::scenario(test::kSmallTraining);
  const StepPlan plan = lower_training(sc);
  double gemm = 0;
  for (const Op& op : plan.ops) {
    if (op.kind == OpKind::kGemm) {
      gemm += op.flops.value() * op.count;
    }
  }
  // 64 sequences / 8 ranks x 1024 tokens per rank per step
  const double tokens = 64.0 / 8.0 * 1024.0;
  CHECK(plan.tokens_per_gpu == tokens);
  CHECK(gemm == Approx(6.0 * matmul_params(sc.model) * tokens));
}

TEST_CASE("model FLOPs add 12 L h s per token for attention", "[workload][flops]") {
  const Scenario sc = test::scenario(test::kSmallTraining);
  const StepPlan plan = lower_training(sc);
  const double L = 12, h = 768, s = 1024, tokens = 8 * 1024;
  CHECK(plan.model_flops_per_gpu.value() == Approx((6.0 * matmul_params(sc.model) + 12 * L * h * s) * tokens));
  CHECK(plan.hardware_flops_per_gpu.value() == Approx(plan.model_flops_per_gpu.value()));
}

TEST_CASE("flash attention counts 4 b s^2 h forward, halved when causal, backward 2.5x", "[workload][flops]") {
  const Scenario sc = test::scenario(test::kSmallTraining);
  const StepPlan plan = lower_training(sc);
  const double b = 8, s = 1024, h = 768, L = 12;
  double fwd = 0, bwd = 0;
  for (const Op& op : plan.ops) {
    if (op.name == "attention.flash") {
      fwd += op.flops.value() * op.count;
    } else if (op.name == "attention.flash.bwd") {
      bwd += op.flops.value() * op.count;
    }
  }
  CHECK(fwd == Approx(4 * b * s * s * h * 0.5 * L));
  CHECK(bwd == Approx(2.5 * fwd));
}

TEST_CASE("full recompute adds one forward pass to the hardware FLOPs only", "[workload][flops]") {
  const Scenario base = test::scenario(test::kSmallTraining);
  const Scenario full = test::scenario(test::kSmallTraining, {{"training.recompute", "\"full\""}});
  const StepPlan p0 = lower_training(base);
  const StepPlan p1 = lower_training(full);
  CHECK(p1.model_flops_per_gpu.value() == Approx(p0.model_flops_per_gpu.value()));
  double layer_forward = 0;
  for (const Op& op : p0.ops) {
    if (op.phase == Phase::kForward && op.name != "logits") {
      layer_forward += op.flops.value() * op.count;
    }
  }
  CHECK(p1.hardware_flops_per_gpu.value() == Approx(p0.hardware_flops_per_gpu.value() + layer_forward));
}

TEST_CASE("gradient accumulation repeats the micro-batch plan", "[workload]") {
  const Scenario sc = test::scenario(test::kSmallTraining, {{"training.micro_batch", "2"}});
  const StepPlan plan = lower_training(sc);
  CHECK(plan.micro_batches == 4);  // 64 / (2 x 8)
  for (const Op& op : plan.ops) {
    if (op.name == "qkv" && op.phase == Phase::kForward) {
      CHECK(op.count == 12);  // one per layer, per micro-batch
    }
  }
}

TEST_CASE("tensor parallelism divides each rank's GEMM FLOPs by t", "[workload][parallel]") {
  const Scenario one = test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""}});
  const Scenario tp = test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""},
                                                            {"parallelism.tensor", "4"},
                                                            {"parallelism.data", "2"},
                                                            {"training.global_batch", "16"}});
  auto gemm_flops = [](const StepPlan& p) {
    double f = 0;
    for (const Op& op : p.ops) {
      if (op.kind == OpKind::kGemm) {
        f += op.flops.value() * op.count * p.micro_batches;
      }
    }
    return f;
  };
  // 6 x matmul params x the tokens of the rank's data-parallel replica, split over t ranks
  const double tokens_one = 64.0 / 8.0 * 1024;
  CHECK(gemm_flops(lower_training(one)) == Approx(6.0 * matmul_params(one.model) * tokens_one));
  const double tokens_tp = 16.0 / 2.0 * 1024;
  CHECK(gemm_flops(lower_training(tp)) == Approx(6.0 * matmul_params(tp.model) * tokens_tp / 4.0));
}

TEST_CASE("fp8 backward pays a cast-transpose of dy and x per linear layer", "[workload][fp8]") {
  const Scenario sc =
      test::scenario(test::kSmallTraining, {{"system.gpu", "\"h100-sxm5-80gb\""}, {"training.precision", "\"fp8\""}});
  const StepPlan plan = lower_training(sc);
  const double t = 8 * 1024, h = 768, f = 3072;
  for (const Op& op : plan.ops) {
    if (op.name == "ffn.down.fp8_transpose") {
      // read 16-bit, write fp8: (t*n + t*k) * (2 + 1) with n = h, k = f
      CHECK(op.bytes.value() == Approx((t * h + t * f) * 3.0));
    }
  }
  const StepPlan bf16 = lower_training(test::scenario(test::kSmallTraining, {{"system.gpu", "\"h100-sxm5-80gb\""}}));
  CHECK(plan.ops.size() == bf16.ops.size() + 5);  // qkv, attn.out, ffn.up, ffn.down, logits
}
