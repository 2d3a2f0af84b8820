// Parameter counts, FLOPs and the lowering of a training step.
#include "helpers.hpp"

using namespace gpusim;
using lowering::Op;
using lowering::OpKind;
using lowering::Phase;
using lowering::Scope;
using workload::count_params;
using workload::matmul_params;
using workload::ModelShape;
using workload::shape_from_params;
using workload::total_params;

namespace {

// The ops of one micro-batch of a scenario on one rank.
std::vector<Op> micro_batch_ops(const Scenario& sc) {
  return lowering::lower_training(sc.job.model, *sc.job.training, sc.layout, sc.runtime);
}

// Σ flops × count over the ops `keep` selects, layer ops repeated for every layer.
template <class F>
double flops(const std::vector<Op>& ops, double layers, F&& keep) {
  double f = 0;
  for (const Op& op : ops) {
    if (keep(op)) {
      f += op.flops.value() * op.count * (op.scope == Scope::kLayer ? layers : 1.0);
    }
  }
  return f;
}

}  // namespace

TEST_CASE("GPT-2 124M has 124.4M parameters with tied embeddings", "[workload][params]") {
  const ModelShape m = test::catalog().model("gpt2-124m");
  const double h = 768, f = 3072, V = 50257, L = 12, positions = 1024;  // [hf-gpt2-configs]
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

TEST_CASE("a tensor rank holds its share of the K/V heads, at least one, and MLA's latent whole", "[workload][kv]") {
  // Llama-3-8B: 8 K/V heads of 128: 4 ranks hold 2 heads each; 16 ranks a replicated head each
  const ModelShape m = test::catalog().model("llama3-8b");
  constexpr double kHead = 128;
  CHECK(m.cached_kv_width(1) == 8 * kHead);
  CHECK(m.cached_kv_width(4) == 2 * kHead);
  CHECK(m.cached_kv_width(16) == kHead);
  // DeepSeek-V3 caches its 512-wide latent and 64-wide rotary key on every rank, as K and V halves
  const ModelShape ds = test::catalog().model("deepseek-v3");
  constexpr double kLatent = 512 + 64;
  CHECK(ds.cached_kv_width(1) == kLatent / 2);
  CHECK(ds.cached_kv_width(8) == kLatent / 2);
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
  const auto ops = micro_batch_ops(sc);
  // one micro-batch of 8 sequences x 1024 tokens on each of 8 data ranks, 12 layers
  const double tokens = 8.0 * 1024.0;
  CHECK(flops(ops, 12, [](const Op& op) { return op.kind == OpKind::kGemm; }) ==
        Approx(6.0 * matmul_params(sc.job.model) * tokens));
}

TEST_CASE("model FLOPs per token are 6 N + 12 L h s", "[workload][flops]") {
  const Scenario sc = test::scenario(test::kSmallTraining);
  const double L = 12, h = 768, s = 1024;
  CHECK(workload::training_flops_per_token(sc.job.model, s).value() ==
        Approx(6.0 * matmul_params(sc.job.model) + 12 * L * h * s));
  // the evaluator's model FLOP/s per GPU: that x the step's tokens per GPU, over the step time
  const step::Evaluation e = step::evaluate(sc);
  const double tokens_per_gpu = 64.0 * 1024 / 8;
  CHECK(e.model_flops_per_gpu.value() * e.step.time.value() ==
        Approx((6.0 * matmul_params(sc.job.model) + 12 * L * h * s) * tokens_per_gpu));
  CHECK(e.hardware_flops_per_gpu.value() == Approx(e.model_flops_per_gpu.value()));
}

TEST_CASE("flash attention counts 4 b s^2 h forward, halved when causal, backward 2.5x", "[workload][flops]") {
  const Scenario sc = test::scenario(test::kSmallTraining);
  const auto ops = micro_batch_ops(sc);
  const double b = 8, s = 1024, h = 768, L = 12;
  const double fwd = flops(ops, L, [](const Op& op) { return op.name == "attention.flash"; });
  const double bwd = flops(ops, L, [](const Op& op) { return op.name == "attention.flash.bwd"; });
  CHECK(fwd == Approx(4 * b * s * s * h * 0.5 * L));
  CHECK(bwd == Approx(2.5 * fwd));
}

TEST_CASE("full recompute adds one forward pass of the layers to the hardware FLOPs only", "[workload][flops]") {
  const Scenario base = test::scenario(test::kSmallTraining);
  const Scenario full = test::scenario(test::kSmallTraining, {{"training.recompute", "\"full\""}});
  const step::Evaluation e0 = step::evaluate(base);
  const step::Evaluation e1 = step::evaluate(full);
  const double model0 = e0.model_flops_per_gpu.value() * e0.step.time.value();
  CHECK(e1.model_flops_per_gpu.value() * e1.step.time.value() == Approx(model0));
  const double layer_forward = flops(
      micro_batch_ops(base), 12, [](const Op& op) { return op.phase == Phase::kForward && op.scope == Scope::kLayer; });
  const double micro_batches = 1;  // 64 sequences / (8 per micro-batch x 8 ranks)
  CHECK(e1.hardware_flops_per_gpu.value() * e1.step.time.value() == Approx(model0 + layer_forward * micro_batches));
}

TEST_CASE("gradient accumulation repeats the micro-batch's kernels", "[workload]") {
  const Scenario sc = test::scenario(test::kSmallTraining, {{"training.micro_batch", "2"}});
  const auto ops = micro_batch_ops(sc);
  const hardware::GpuSpec& g = sc.system.gpu;
  double micro = 0;
  for (const Op& op : ops) {
    micro += physics::kernel_time(op, g).time.value() * op.count * (op.scope == Scope::kLayer ? 12.0 : 1.0);
  }
  const Op opt = lowering::optimizer_op(sc.job.model, *sc.job.training, sc.layout, sc.runtime);
  // 64 / (2 x 8) = 4 micro-batches per optimizer step, then one optimizer step of opt.count kernels
  CHECK(step::evaluate(sc).step.compute.value() ==
        Approx(4 * micro + physics::kernel_time(opt, g).time.value() * opt.count));
}

TEST_CASE("tensor parallelism divides each rank's GEMM FLOPs by t", "[workload][parallel]") {
  const Scenario one = test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""}});
  const Scenario tp = test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""},
                                                            {"parallelism.tensor", "4"},
                                                            {"parallelism.data", "2"},
                                                            {"training.global_batch", "16"}});
  const auto gemm = [](const Op& op) { return op.kind == OpKind::kGemm; };
  // 6 x matmul params x the micro-batch's 8 x 1024 tokens, split over t ranks
  const double tokens = 8.0 * 1024;
  CHECK(flops(micro_batch_ops(one), 32, gemm) == Approx(6.0 * matmul_params(one.job.model) * tokens));
  CHECK(flops(micro_batch_ops(tp), 32, gemm) == Approx(6.0 * matmul_params(tp.job.model) * tokens / 4.0));
}

TEST_CASE("fp8 backward pays a cast-transpose of dy and x per linear layer", "[workload][fp8]") {
  const Scenario sc =
      test::scenario(test::kSmallTraining, {{"system.gpu", "\"h100-sxm5-80gb\""}, {"training.precision", "\"fp8\""}});
  const auto ops = micro_batch_ops(sc);
  const double t = 8 * 1024, h = 768, f = 3072;
  bool seen = false;
  for (const Op& op : ops) {
    if (op.name == "ffn.down.fp8_transpose") {
      // read 16-bit, write fp8: (t*n + t*k) * (2 + 1) with n = h, k = f
      CHECK(op.bytes.value() == Approx((t * h + t * f) * 3.0));
      seen = true;
    }
  }
  CHECK(seen);
  const auto bf16 = micro_batch_ops(test::scenario(test::kSmallTraining, {{"system.gpu", "\"h100-sxm5-80gb\""}}));
  CHECK(ops.size() == bf16.size() + 5);  // qkv, attn.out, ffn.up, ffn.down, logits
}
