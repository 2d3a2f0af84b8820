// Precision policies, paged optimizers, the optimizer step in the backward pass, full recompute's
// peak and runtime recipes (docs/scenarios.md [training], specs/README.md
// runtimes). Expected values are derived here from the model's widths and the formulas the
// sources give: mixed precision 2 + 2 + 4 + 4K bytes per parameter [rajbhandari-2020], pure bf16
// 2 + 2 + 2K [torchtune-memory-docs], paged states evicted beyond what the GPU has left
// [bnb-optimizers-docs], one tensor's gradient with the step in the backward pass [lv-lomo-2023].
#include <algorithm>

#include "helpers.hpp"

using namespace gpusim;
using test::diagnostics_of;

namespace {

// Llama-2-7B full fine-tune on one RTX 4090, plain PyTorch (autocast off, so the 16-bit working
// copy and the master copy are apart).
const char* kSeven = R"(name = "seven"
[system]
gpu = "rtx4090"
gpus = 1
[model]
preset = "llama2-7b"
[training]
tokens = 1e6
seq_len = 2048
global_batch = 2
micro_batch = 2
recompute = "full"
[runtime]
name = "pytorch-ddp"
autocast = false
)";

Scenario seven(const std::vector<Override>& o = {}) { return test::scenario(kSeven, o); }

physics::MemoryBreakdown memory(const Scenario& sc) {
  return physics::training_memory(sc.job.model, *sc.job.training, sc.layout, sc.runtime, sc.system.gpu);
}

double param_count(const Scenario& sc) { return workload::total_params(sc.job.model); }

Diagnostic first(const char* text, const std::vector<Override>& o) {
  const auto ds = diagnostics_of([&] { (void)test::scenario(text, o); });
  REQUIRE(!ds.empty());
  return ds.front();
}

}  // namespace

TEST_CASE("pure 16-bit training keeps 2 + 2 + 2K bytes per parameter, mixed precision 2 + 2 + 4 + 4K", "[precision]") {
  const Scenario mixed = seven();
  const Scenario pure = seven({{"training.master_weights", "false"}});
  const double params = param_count(mixed);
  const auto mm = memory(mixed);
  const auto mp = memory(pure);
  // AdamW, K = 2 moments.
  CHECK(mm.weights.value() == Approx(params * 2.0));
  CHECK(mm.gradients.value() == Approx(params * 2.0));
  CHECK(mm.optimizer.value() == Approx(params * (4.0 + 2.0 * 4.0)));
  CHECK(mp.weights.value() == Approx(params * 2.0));
  CHECK(mp.gradients.value() == Approx(params * 2.0));
  CHECK(mp.optimizer.value() == Approx(params * 2.0 * 2.0));
  // fp32 moments beside 16-bit parameters (bitsandbytes' 32-bit optimizers): 2 + 2 + 8.
  const Scenario fp32_states = seven({{"training.master_weights", "false"}, {"training.optimizer_states", "\"fp32\""}});
  CHECK(memory(fp32_states).optimizer.value() == Approx(params * 2.0 * 4.0));
  // SGD with momentum keeps one moment: 2 bytes without a master copy.
  const Scenario sgd = seven({{"training.master_weights", "false"}, {"training.optimizer", "\"sgd\""}});
  CHECK(memory(sgd).optimizer.value() == Approx(params * 2.0));
  // ZeRO-3 over four GPUs shards all three: (2 + 2 + 4) N / 4, plus two gathered 16-bit layers.
  const Scenario four = seven({{"training.master_weights", "false"},
                               {"system.gpus", "4"},
                               {"parallelism.zero", "3"},
                               {"training.global_batch", "8"}});
  const auto m4 = memory(four);
  const double layer = workload::count_params(four.job.model).per_layer;
  CHECK(m4.weights.value() == Approx(params * 2.0 / 4.0 + 2.0 * layer * 2.0));
  CHECK(m4.gradients.value() == Approx(params * 2.0 / 4.0));
  CHECK(m4.optimizer.value() == Approx(params * 4.0 / 4.0));
}

TEST_CASE("without master weights an autocast runtime computes over 16-bit parameters", "[precision]") {
  // pytorch-ddp runs autocast over fp32 parameters: they and their gradients take 4 bytes, and every
  // GEMM casts its weight per micro-batch. Without master weights the parameters are 16-bit.
  const Scenario autocast = seven({{"runtime.autocast", "true"}});
  const Scenario pure = seven({{"runtime.autocast", "true"}, {"training.master_weights", "false"}});
  CHECK(physics::parameter_bytes(*autocast.job.training, autocast.layout, autocast.runtime) == 4.0);
  CHECK(physics::parameter_bytes(*pure.job.training, pure.layout, pure.runtime) == 2.0);
  auto has_cast = [](const Scenario& sc) {
    const auto ops = lowering::lower_training(sc.job.model, *sc.job.training, sc.layout, sc.runtime);
    return std::any_of(ops.begin(), ops.end(), [](const lowering::Op& o) { return o.name == "weight.cast"; });
  };
  CHECK(has_cast(autocast));
  CHECK_FALSE(has_cast(pure));
}

TEST_CASE("the optimizer step moves 16-bit parameters and gradients without a master copy", "[precision][optimizer]") {
  auto step_bytes = [](const Scenario& sc) {
    const lowering::Op op = lowering::optimizer_op(sc.job.model, *sc.job.training, sc.layout, sc.runtime);
    return op.bytes.value() * op.count;
  };
  const std::vector<Override> fused = {{"runtime.optimizer", "\"fused\""}};
  const Scenario mixed = seven(fused);
  std::vector<Override> pure_o = fused;
  pure_o.push_back({"training.master_weights", "false"});
  const Scenario pure = seven(pure_o);
  const double params = param_count(mixed);
  // Fused AdamW: read master + fp32 gradient + two moments, write master + moments + the 16-bit copy.
  CHECK(step_bytes(mixed) == Approx(params * (2.0 * 4.0 + 4.0 + 2.0 * 8.0 + 2.0)));
  // Pure bf16: read w, g, m, v and write w, m, v, all 2 bytes.
  CHECK(step_bytes(pure) == Approx(params * (2.0 * 2.0 + 2.0 + 2.0 * 4.0)));
  // 8-bit moments (bitsandbytes, one kernel per tensor): read w, g and the moments, write w and them.
  std::vector<Override> byte_o = pure_o;
  byte_o.push_back({"training.optimizer_states", "\"8-bit\""});
  const Scenario bytes8 = seven(byte_o);
  CHECK(step_bytes(bytes8) == Approx(params * (2.0 * 2.0 + 2.0 + 2.0 * 2.0 * workload::kAdam8bitStateBytes)));
  const lowering::Op op8 =
      lowering::optimizer_op(bytes8.job.model, *bytes8.job.training, bytes8.layout, bytes8.runtime);
  // Llama-2-7B: 7 matrices and 2 norms per layer, the embedding, the head and the final norm.
  CHECK(op8.count == Approx(32.0 * 9.0 + 3.0));
}

TEST_CASE("a paged optimizer keeps resident what the GPU has left and pages the rest over PCIe", "[paged][memory]") {
  // Pure bf16 weights (7B x 2 bytes) with the step in the backward pass (one tensor's gradient):
  // fp32 moments, 7B x 8 bytes, cannot sit beside them in 24 GiB.
  const std::vector<Override> base = {{"training.master_weights", "false"},
                                      {"training.optimizer_states", "\"fp32\""},
                                      {"training.optimizer_in_backward", "true"}};
  std::vector<Override> paged_o = base;
  paged_o.push_back({"training.paged_optimizer", "true"});
  const Scenario resident = seven(base);
  const Scenario paged = seven(paged_o);
  const auto mr = memory(resident);
  const auto mp = memory(paged);
  CHECK_FALSE(mr.fits());
  const hardware::GpuSpec& g = paged.system.gpu;
  const Bytes held = mp.weights + mp.gradients + mp.activations;
  CHECK(mp.other.value() == Approx((g.memory_reserved + held * g.fragmentation).value()));
  const Bytes room = g.memory_capacity - held - mp.other;
  const double states = param_count(paged) * 8.0;
  CHECK(mp.optimizer.value() == Approx(room.value()));
  CHECK(mp.paged.value() == Approx(states - room.value()));
  CHECK(mp.host.value() == Approx(mp.paged.value()));
  CHECK(mp.fits());
  CHECK(mp.total().value() == Approx(g.memory_capacity.value()));
  // The allocator does not hand out unified memory: allocated leaves the resident states out too.
  CHECK(mp.allocated().value() == Approx(held.value()));
  // Each step pages the evicted states in and out at the pinned host-copy rate.
  const physics::OffloadCost c =
      physics::offload_cost(paged.system, paged.job.model, *paged.job.training, paged.layout, paged.runtime);
  const double pcie = physics::host_copy_bandwidth(paged.system, true).value();
  CHECK(c.optimizer_paging.value() == Approx(2.0 * mp.paged.value() / pcie));
  const step::Evaluation e = step::evaluate(paged);
  CHECK(e.step.offload.value() >= c.optimizer_paging.value());
}

TEST_CASE("paged states that fit stay resident and page nothing", "[paged][memory]") {
  const Scenario lora = seven({{"training.method", "\"lora\""}, {"training.paged_optimizer", "true"}});
  const Scenario plain = seven({{"training.method", "\"lora\""}});
  const auto mp = memory(lora);
  CHECK(mp.paged.value() == 0);
  CHECK(mp.optimizer.value() == Approx(memory(plain).optimizer.value()));
  CHECK(mp.unified.value() == Approx(mp.optimizer.value()));
  const physics::OffloadCost c =
      physics::offload_cost(lora.system, lora.job.model, *lora.job.training, lora.layout, lora.runtime);
  CHECK(c.optimizer_paging.value() == 0);
}

TEST_CASE("the step in the backward pass holds one tensor's gradient, or one layer's under ZeRO-3",
          "[backward][memory]") {
  const Scenario one = seven({{"training.master_weights", "false"}, {"training.optimizer_in_backward", "true"}});
  const double h = 4096, f = 11008, v = 32000;  // Llama-2-7B
  // The largest tensor is the embedding or the head, V x h.
  CHECK(memory(one).gradients.value() == Approx(std::max({v * h, h * f, h * h}) * 2.0));
  const Scenario fsdp = seven({{"training.master_weights", "false"},
                               {"training.optimizer_in_backward", "true"},
                               {"system.gpus", "4"},
                               {"parallelism.zero", "3"},
                               {"training.global_batch", "8"}});
  const double layer = workload::count_params(fsdp.job.model).per_layer;
  CHECK(memory(fsdp).gradients.value() == Approx(std::max(layer, v * h) * 2.0));
  // One optimizer per parameter: pytorch-ddp's foreach AdamW runs its 8 elementwise kernels per tensor.
  const lowering::Op op = lowering::optimizer_op(one.job.model, *one.job.training, one.layout, one.runtime);
  CHECK(op.count == Approx(8.0 * (32.0 * 9.0 + 3.0)));
}

TEST_CASE("full recompute peaks at the stored inputs plus the larger of one layer's working set and the logits",
          "[memory][recompute]") {
  const Scenario sc = seven();
  const workload::ModelShape& m = sc.job.model;
  const double e = 2, s = 2048, b = 2, h = 4096, v = 32000, layers = 32;
  const double inputs = layers * e * s * b * h;
  const double working = physics::layer_activation_bytes(m, s, b, e, true, workload::Recompute::kNone).value();
  const double logits = 2.0 * e * s * b * v;  // the logits and their gradient at once
  CHECK(memory(sc).activations.value() == Approx(inputs + std::max(working, logits)));
  // A loss over 8 chunks holds one chunk's gradient beside the logits.
  const Scenario chunked = test::scenario(kSeven, {{"runtime.loss_chunks", "8"}});
  CHECK(memory(chunked).activations.value() == Approx(inputs + std::max(working, e * s * b * v * (1.0 + 1.0 / 8.0))));
  // QLoRA's recomputed layer also holds the 16-bit copy of its largest dequantized matrix.
  const Scenario q = seven({{"training.method", "\"qlora\""}});
  CHECK(memory(q).activations.value() == Approx(inputs + std::max(working + 2.0 * h * 11008.0, logits)));
  // Without recompute the logits come on top of every layer's saved activations, as before.
  const Scenario none = seven({{"training.recompute", "\"none\""}});
  const double saved = physics::layer_activation_bytes(m, s, b, e, true, workload::Recompute::kNone).value();
  CHECK(memory(none).activations.value() == Approx(layers * saved + logits));
}

TEST_CASE("a runtime's recipe fills the training keys a scenario leaves out, and the scenario's keys win", "[recipe]") {
  const char* tune = R"(name = "tune"
[system]
gpu = "rtx4090"
gpus = 1
[model]
preset = "llama3-8b"
[training]
tokens = 1e6
seq_len = 2048
global_batch = 2
micro_batch = 2
[runtime]
name = "torchtune"
)";
  // full_finetune_single_device: pure bf16, paged 8-bit AdamW stepped in the backward pass, full recompute.
  const Scenario single = test::scenario(tune);
  const workload::Training& t = *single.job.training;
  CHECK_FALSE(t.master_weights);
  CHECK(t.optimizer == workload::Optimizer::kAdamW8bit);
  CHECK(t.states() == workload::StatePrecision::k8bit);
  CHECK(t.paged_optimizer);
  CHECK(t.optimizer_in_backward);
  CHECK(single.layout.recompute == workload::Recompute::kFull);
  CHECK(single.runtime.loss_chunks == 8);
  // full_finetune_distributed on two GPUs: torch AdamW with 16-bit states, no paging, no step in backward.
  const Scenario dist =
      test::scenario(tune, {{"system.gpus", "2"}, {"parallelism.zero", "3"}, {"training.global_batch", "4"}});
  CHECK(dist.job.training->optimizer == workload::Optimizer::kAdamW);
  CHECK(dist.job.training->states() == workload::StatePrecision::kHalf);
  CHECK_FALSE(dist.job.training->paged_optimizer);
  CHECK_FALSE(dist.job.training->optimizer_in_backward);
  // LoRA on one GPU: rank 8, recompute from the single-device table; on two, none.
  const Scenario lora1 = test::scenario(tune, {{"training.method", "\"lora\""}});
  CHECK(lora1.job.training->lora_rank == 8);
  CHECK(lora1.layout.recompute == workload::Recompute::kFull);
  const Scenario lora2 =
      test::scenario(tune, {{"training.method", "\"lora\""}, {"system.gpus", "2"}, {"training.global_batch", "4"}});
  CHECK(lora2.layout.recompute == workload::Recompute::kNone);
  // The scenario's own keys win over every recipe table.
  const Scenario own = test::scenario(tune, {{"training.optimizer", "\"sgd\""},
                                             {"training.paged_optimizer", "false"},
                                             {"training.optimizer_in_backward", "false"},
                                             {"training.recompute", "\"selective\""},
                                             {"training.master_weights", "true"}});
  CHECK(own.job.training->optimizer == workload::Optimizer::kSgd);
  CHECK_FALSE(own.job.training->paged_optimizer);
  CHECK_FALSE(own.job.training->optimizer_in_backward);
  CHECK(own.layout.recompute == workload::Recompute::kSelective);
  CHECK(own.job.training->master_weights);
  // A runtime without a recipe leaves today's defaults.
  const Scenario plain = seven({{"training.recompute", "\"none\""}});
  CHECK(plain.job.training->master_weights);
  CHECK(plain.job.training->states() == workload::StatePrecision::kFp32);
  CHECK_FALSE(plain.job.training->paged_optimizer);
}

TEST_CASE("precision, paging and the step in the backward pass are refused where they cannot apply",
          "[errors][precision]") {
  // file:line:col of the offending key, the value and what is accepted.
  const Diagnostic fp32 = first(kSeven, {{"training.master_weights", "false"}, {"training.precision", "\"fp32\""}});
  CHECK(fp32.key == "training.master_weights");
  CHECK(fp32.message.find("master_weights = false") != std::string::npos);
  CHECK(fp32.message.find("use precision = \"bf16\"") != std::string::npos);
  const Diagnostic states8 =
      first(kSeven, {{"training.optimizer", "\"adamw-8bit\""}, {"training.optimizer_states", "\"fp32\""}});
  CHECK(states8.key == "training.optimizer_states");
  CHECK(states8.message.find("contradicts optimizer = \"adamw-8bit\"") != std::string::npos);
  const Diagnostic ada =
      first(kSeven, {{"training.optimizer", "\"adafactor\""}, {"training.optimizer_states", "\"8-bit\""}});
  CHECK(ada.key == "training.optimizer_states");
  CHECK(ada.message.find("accepted with adamw or sgd") != std::string::npos);
  const Diagnostic half =
      first(kSeven, {{"training.precision", "\"tf32\""}, {"training.optimizer_states", "\"16-bit\""}});
  CHECK(half.message.find("accepted: \"fp32\" or \"8-bit\"") != std::string::npos);
  const Diagnostic word = first(kSeven, {{"training.optimizer_states", "\"bf16\""}});
  CHECK(word.key == "training.optimizer_states");
  CHECK(word.message == "expected one of \"fp32\", \"16-bit\", \"8-bit\", got \"bf16\"");
  CHECK(word.pos.file == "--set training.optimizer_states=\"bf16\"");
  const Diagnostic boolean = first(kSeven, {{"training.paged_optimizer", "\"yes\""}});
  CHECK(boolean.key == "training.paged_optimizer");
  const Diagnostic both =
      first(kSeven, {{"training.paged_optimizer", "true"}, {"training.offload_optimizer", "\"cpu\""}});
  CHECK(both.key == "training.paged_optimizer");
  CHECK(both.message.find("use one of the two") != std::string::npos);
  const Diagnostic offload =
      first(kSeven, {{"training.optimizer_in_backward", "true"}, {"training.offload_optimizer", "\"cpu\""}});
  CHECK(offload.key == "training.optimizer_in_backward");
  // Gradient accumulation: two micro-batches of 2 per step.
  const Diagnostic accum = first(kSeven, {{"training.optimizer_in_backward", "true"}, {"training.global_batch", "4"}});
  CHECK(accum.key == "training.optimizer_in_backward");
  CHECK(accum.message ==
        "optimizer_in_backward = true applies each gradient as soon as it is computed, so gradients cannot accumulate "
        "over micro-batches: global_batch (4) must equal micro_batch x data = 2 x 1 = 2 (one micro-batch per step)");
  const Diagnostic ddp =
      first(kSeven, {{"training.optimizer_in_backward", "true"}, {"system.gpus", "2"}, {"training.global_batch", "4"}});
  CHECK(ddp.key == "training.optimizer_in_backward");
  CHECK(ddp.message.find("zero = 3 (FSDP), got 0") != std::string::npos);
}

TEST_CASE("a conflict with a recipe default names the runtime and points at the scenario's key", "[errors][recipe]") {
  const char* tune = R"(name = "tune"
[system]
gpu = "rtx4090"
gpus = 1
[model]
preset = "llama3-8b"
[training]
tokens = 1e6
seq_len = 2048
global_batch = 8
micro_batch = 2
[runtime]
name = "torchtune"
)";
  // The single-device full recipe steps in the backward pass: global_batch 8 = 4 micro-batches.
  const Diagnostic d = first(tune, {});
  CHECK(d.key == "training.global_batch");
  CHECK(d.pos.file == "test.toml");
  CHECK(d.pos.line == 10);
  CHECK(d.pos.column == 16);
  CHECK(d.message.find("optimizer_in_backward = true (the default of runtime \"torchtune\"'s recipe)") !=
        std::string::npos);
  // Stating the key lifts the default.
  CHECK_NOTHROW(test::scenario(tune, {{"training.optimizer_in_backward", "false"}}));
  const Diagnostic fp32 = first(tune, {{"training.precision", "\"fp32\""}});
  CHECK(fp32.key == "training.precision");
  CHECK(fp32.message.find("(the default of runtime \"torchtune\"'s recipe)") != std::string::npos);
}

TEST_CASE("runtime specs' recipes and loss chunks are checked when the spec is read", "[errors][recipe][catalog]") {
  auto runtime_error = [](const std::string& text) {
    Catalog c = Catalog::builtin();
    c.add_file(catalog::SpecKind::kRuntime, "odd", catalog::SpecFile{"specs/runtimes/odd.toml", text});
    const auto ds = diagnostics_of([&] { (void)c.runtime("odd"); });
    REQUIRE(!ds.empty());
    return ds.front();
  };
  const Diagnostic rank = runtime_error("base = \"torchtune\"\n[recipe.lora]\nlora_rank = 0\n");
  CHECK(rank.key == "recipe.lora.lora_rank");
  CHECK(rank.pos.line == 3);
  const Diagnostic word = runtime_error("base = \"torchtune\"\n[recipe]\noptimizer_states = \"fp64\"\n");
  CHECK(word.key == "recipe.optimizer_states");
  CHECK(word.message.find("\"fp32\", \"16-bit\", \"8-bit\"") != std::string::npos);
  const Diagnostic unknown = runtime_error("base = \"torchtune\"\n[recipe]\nmaster_weight = false\n");
  CHECK(unknown.key == "recipe.master_weight");
  const Diagnostic chunks = runtime_error("base = \"torchtune\"\nloss_chunks = 0\n");
  CHECK(chunks.key == "loss_chunks");
  const Diagnostic inference = runtime_error("base = \"vllm\"\n[recipe]\nmaster_weights = false\n");
  CHECK(inference.key == "recipe");
  CHECK(inference.message.find("this runtime runs inference") != std::string::npos);
  // Every shipped runtime with a recipe loads.
  for (const char* id : {"torchtune", "hf-trl", "axolotl"}) {
    INFO(id);
    CHECK(test::catalog().runtime(id).kind == workload::RuntimeKind::kTraining);
  }
}

TEST_CASE("pure bf16 fits a 7B full fine-tune on 4 x RTX 4090 and bf16 adapters a 65B QLoRA on 48 GB",
          "[precision][paged]") {
  const std::string root = GPUSIM_SOURCE_DIR;
  // torchtune's distributed full fine-tune: (2 + 2 + 4) bytes per parameter over four GPUs.
  const Scenario four =
      scenario::load_scenario_file(test::catalog(), root + "/scenarios/llama2-7b-full-bf16-4x4090-fsdp.toml");
  const auto m4 = memory(four);
  CHECK(m4.optimizer.value() == Approx(param_count(four) * 4.0 / 4.0));
  CHECK(m4.fits());
  // With an fp32 master copy and fp32 moments, 12 bytes of states per parameter no longer fit.
  const Scenario mixed = scenario::load_scenario_file(
      test::catalog(), root + "/scenarios/llama2-7b-full-bf16-4x4090-fsdp.toml", {{"training.master_weights", "true"}});
  CHECK_FALSE(memory(mixed).fits());
  // The QLoRA paper's 65B script: bf16 adapters, paged fp32 moments.
  const Scenario q65 = scenario::load_scenario_file(test::catalog(), root + "/scenarios/llama-65b-qlora-48gb.toml");
  const auto mq = memory(q65);
  CHECK(mq.fits());
  const double adapters = workload::param_roles(q65.job.model, *q65.job.training).trainable;
  CHECK(mq.gradients.value() == Approx(adapters * 2.0));
  // fp32 adapters (PEFT's default) still fit, with part of the paged states evicted to the host.
  const Scenario fp32 = scenario::load_scenario_file(test::catalog(), root + "/scenarios/llama-65b-qlora-48gb.toml",
                                                     {{"training.master_weights", "true"}});
  const auto mf = memory(fp32);
  CHECK(mf.fits());
  CHECK(mf.paged.value() > 0);
  CHECK((mf.optimizer + mf.paged).value() == Approx(adapters * 8.0));
}

TEST_CASE("plan keeps the step in the backward pass to one micro-batch per step and FSDP across ranks",
          "[backward][plan]") {
  const Scenario sc = seven({{"training.master_weights", "false"},
                             {"training.optimizer_in_backward", "true"},
                             {"system.gpus", "2"},
                             {"parallelism.zero", "3"},
                             {"training.global_batch", "4"}});
  search::PlanOptions o;
  o.top = 50;
  const search::PlanResult r = search::plan(sc, o);
  REQUIRE_FALSE(r.best.empty());
  for (const auto& row : r.best) {
    CHECK(row.layout.micro_batch * row.layout.data == 4);
    if (row.layout.data > 1) {
      CHECK(row.layout.zero == 3);
    }
  }
}

TEST_CASE("the advice for a full fine-tune that does not fit tries dropping the fp32 master copy",
          "[advice][precision]") {
  const std::string path = std::string(GPUSIM_SOURCE_DIR) + "/scenarios/llama2-7b-full-bf16-4x4090-fsdp.toml";
  const Scenario sc = scenario::load_scenario_file(test::catalog(), path, {{"training.master_weights", "true"}});
  const step::Evaluation e = step::evaluate(sc);
  REQUIRE_FALSE(e.memory.fits());
  const auto advice = explain::advise(sc, e, explain::diagnose(e));
  const bool pure = std::any_of(advice.begin(), advice.end(), [](const explain::Advice& a) {
    return a.change.size() == 1 && a.change.front().key == "training.master_weights" &&
           a.change.front().value == "false";
  });
  CHECK(pure);
}
