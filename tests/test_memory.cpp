// Memory per GPU: ZeRO sharding and Korthikanti activations.
#include "helpers.hpp"

using namespace gpusim;
using physics::inference_memory;
using physics::layer_activation_bytes;
using physics::MemoryBreakdown;
using workload::ModelShape;
using workload::Recompute;
using workload::total_params;

namespace {
MemoryBreakdown training_memory(const Scenario& sc) {
  return physics::training_memory(sc.job.model, *sc.job.training, sc.layout, sc.runtime, sc.system.gpu);
}
MemoryBreakdown inference_memory(const Scenario& sc) {
  return physics::inference_memory(sc.job.model, *sc.job.inference, sc.system.gpu, sc.layout, sc.runtime.serving,
                                   static_cast<double>(sc.job.inference->batch));
}
}  // namespace

TEST_CASE("mixed-precision AdamW holds 16 bytes per parameter before sharding", "[memory]") {
  // 16-bit weights and gradients with an fp32 master copy and two fp32 moments: 2 + 2 + (4 + 8)
  const Scenario sc = test::scenario(test::kSmallTraining, {{"parallelism.zero", "0"}, {"runtime.autocast", "false"}});
  const MemoryBreakdown m = training_memory(sc);
  const double n = total_params(sc.job.model);
  CHECK(m.weights.value() == Approx(2 * n));
  CHECK(m.gradients.value() == Approx(2 * n));
  CHECK(m.optimizer.value() == Approx(12 * n));
  // autocast over an fp32 model: fp32 weights and gradients are the master copy: 4 + 4 + 8
  const MemoryBreakdown amp =
      training_memory(test::scenario(test::kSmallTraining, {{"parallelism.zero", "0"}, {"runtime.autocast", "true"}}));
  CHECK(amp.weights.value() == Approx(4 * n));
  CHECK(amp.gradients.value() == Approx(4 * n));
  CHECK(amp.optimizer.value() == Approx(8 * n));
}

TEST_CASE("ZeRO stages shard optimizer, then gradients, then weights over data ranks", "[memory]") {
  const double dp = 8;
  const double n = total_params(test::catalog().model("gpt2-124m"));
  const double layer = workload::count_params(test::catalog().model("gpt2-124m")).per_layer;
  auto zero = [](const char* stage) {
    return training_memory(
        test::scenario(test::kSmallTraining, {{"parallelism.zero", stage}, {"runtime.autocast", "false"}}));
  };
  const MemoryBreakdown z1 = zero("1");
  const MemoryBreakdown z2 = zero("2");
  const MemoryBreakdown z3 = zero("3");
  CHECK(z1.optimizer.value() == Approx(12 * n / dp));
  CHECK(z1.gradients.value() == Approx(2 * n));
  CHECK(z2.gradients.value() == Approx(2 * n / dp));
  CHECK(z2.weights.value() == Approx(2 * n));
  // ZeRO-3: a shard plus the gathered current and prefetched layer
  CHECK(z3.weights.value() == Approx(2 * n / dp + 2 * 2 * layer));
}

TEST_CASE("activations follow Korthikanti's 34 s b h less dropout masks with flash attention", "[memory]") {
  const ModelShape m = test::catalog().model("gpt2-124m");  // MHA, GELU with ffn = 4h
  const double s = 1024, b = 4, h = 768, a = 12;
  // 34 s b h minus the two s b h dropout masks (no dropout) = 32 s b h, + fp32 log-sum-exp per row
  CHECK(layer_activation_bytes(m, s, b, 2, true, Recompute::kNone).value() == Approx(32 * s * b * h + 4 * s * b * a));
  // without flash attention the softmax output a s^2 b (2 bytes) is kept
  CHECK(layer_activation_bytes(m, s, b, 2, false, Recompute::kNone).value() ==
        Approx(32 * s * b * h + 2 * a * s * s * b));
  // selective recompute drops exactly that term
  CHECK(layer_activation_bytes(m, s, b, 2, false, Recompute::kSelective).value() == Approx(32 * s * b * h));
  // full recompute keeps the layer input only
  CHECK(layer_activation_bytes(m, s, b, 2, true, Recompute::kFull).value() == Approx(2 * s * b * h));
}

TEST_CASE("the KV cache is 2 L kv_dim context batch bytes", "[memory][inference]") {
  const Scenario sc = test::scenario(R"(name = "kv"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
preset = "llama3-8b"
[inference]
batch = 16
prompt_tokens = 1000
output_tokens = 24
kv_precision = "fp8"
)");
  const MemoryBreakdown m = inference_memory(sc);
  CHECK(m.kv_cache.value() == Approx(2.0 * 32 * (8 * 128) * 1024 * 16 * 1));
  CHECK(m.weights.value() == Approx(total_params(sc.job.model) * 2));
}

TEST_CASE("a model that does not fit is reported, with advice, not thrown", "[memory]") {
  // 70B LoRA: the 16-bit frozen weights alone (138 GB) exceed 24 GiB, so the advice is more GPUs.
  const Scenario sc = test::scenario(R"(name = "big"
[system]
gpu = "rtx4090"
gpus = 1
[model]
preset = "llama2-70b"
[training]
tokens = 1e8
seq_len = 2048
global_batch = 8
micro_batch = 1
method = "lora"
)");
  const Estimate e = answer::estimate(sc);
  CHECK_FALSE(e.eval.memory.fits());
  CHECK(e.diagnosis.bottleneck == explain::Bottleneck::kCapacity);
  REQUIRE_FALSE(e.advice.empty());
  CHECK(e.advice[0].kind == explain::AdviceKind::kNeedsMoreGpus);
  CHECK_THAT(report::advice_text(e, e.advice[0]), Catch::Contains("GiB") && Catch::Contains("GPUs with ZeRO-3"));
}

TEST_CASE("tensor parallelism splits activations as Korthikanti et al. describe", "[memory][parallel]") {
  const ModelShape m = test::catalog().model("gpt2-124m");  // MHA, GELU, ffn = 4h
  const double s = 1024, b = 4, h = 768, a = 12, t = 4;
  // without SP: s b h (8 + 24 / t) (Korthikanti's 10 + 24/t less the two dropout masks) + split LSE
  CHECK(layer_activation_bytes(m, s, b, 2, true, Recompute::kNone, t, false).value() ==
        Approx(s * b * h * (8 + 24 / t) + 4 * s * b * a / t));
  // with SP everything divides by t
  CHECK(layer_activation_bytes(m, s, b, 2, true, Recompute::kNone, t, true).value() ==
        Approx(layer_activation_bytes(m, s, b, 2, true, Recompute::kNone).value() / t));
}

TEST_CASE("the first pipeline stage holds p micro-batches of activations", "[memory][parallel]") {
  const std::string base = R"(name = "pp"
[system]
gpu = "a100-sxm4-80gb"
gpus = 32
[model]
preset = "llama2-13b"
[training]
tokens = 1e9
seq_len = 2048
global_batch = 64
micro_batch = 1
recompute = "none"
[parallelism]
tensor = 8
pipeline = 4
data = 1
sequence = true
)";
  const Scenario sc = test::scenario(base);
  const MemoryBreakdown mem = training_memory(sc);
  const double layers_per_stage = 40.0 / 4;
  const Bytes one_layer = layer_activation_bytes(sc.job.model, 2048, 1, 2, true, Recompute::kNone, 8, true);
  // first stage: 4 in flight; last: 1 plus the vocabulary-split logits and their gradient
  const double first = one_layer.value() * layers_per_stage * 4;
  const double last = one_layer.value() * layers_per_stage + 2.0 * 2 * 2048 * 32000 / 8;
  CHECK(mem.activations.value() == Approx(std::max(first, last)));
  CHECK(mem.weights.value() == Approx(total_params(sc.job.model) / (8 * 4) * 2));
}

TEST_CASE("batch = \"max\" serves the largest batch that fits in memory", "[memory][inference]") {
  const std::string toml = R"(name = "max"
[system]
gpu = "a100-sxm4-80gb"
gpus = 1
[model]
preset = "llama3-8b"
[inference]
batch = "max"
prompt_tokens = 128
output_tokens = 128
)";
  const step::Evaluation e = step::evaluate(test::scenario(toml));
  REQUIRE(e.inference.has_value());
  const auto b = static_cast<std::int64_t>(e.inference->batch);
  CHECK(b > 1);
  CHECK(e.memory.fits());
  Scenario more = test::scenario(toml);
  more.job.inference->batch_max = false;
  more.job.inference->batch = b + 1;
  CHECK_FALSE(inference_memory(more).fits());
  // all output tokens of the batch over the whole request (prefill + decode): one static batch
  CHECK(e.inference->output_tokens_per_s ==
        Approx(static_cast<double>(b) * 128 / e.inference->request_latency.value()));
  CHECK(e.inference->output_tokens_per_s < e.inference->decode_tokens_per_s);
}
