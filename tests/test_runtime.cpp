// Runtimes: the catalog of software stacks, a scenario's choice and overrides, and what each
// setting does to the step (lowering and step model).
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "helpers.hpp"

using namespace gpusim;
using lowering::Op;
using lowering::Phase;

namespace {

std::vector<Diagnostic> errors_of(const std::string& toml, const std::vector<Override>& o = {}) {
  return test::diagnostics_of([&] { (void)test::scenario(toml, o); });
}

// A Llama-shaped training job (RMSNorm, RoPE, SwiGLU) on one A100 under `runtime` with overrides.
Scenario llama(const std::vector<Override>& o = {}) {
  std::vector<Override> all = {{"model.preset", "\"llama2-7b\""},
                               {"model.layers", "2"},
                               {"system.gpus", "1"},
                               {"training.global_batch", "1"},
                               {"training.micro_batch", "1"}};
  all.insert(all.end(), o.begin(), o.end());
  return test::scenario(test::kSmallTraining, all);
}

// Forward ops of one layer named `name`.
std::vector<Op> forward_ops(const Scenario& sc, const std::string& name) {
  std::vector<Op> out;
  for (const Op& op : lowering::lower_training(sc.job.model, *sc.job.training, sc.layout, sc.runtime)) {
    if (op.name == name && op.phase == Phase::kForward && op.scope == lowering::Scope::kLayer) {
      out.push_back(op);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("every runtime spec loads and `specs list` shows it", "[runtime][catalog]") {
  const std::string list = report::catalog_text(test::catalog());
  const auto ids = test::catalog().ids(catalog::SpecKind::kRuntime);
  CHECK(ids.size() >= 14);
  for (const auto& id : ids) {
    INFO(id);
    const workload::Runtime rt = test::catalog().runtime(id);
    CHECK(rt.id == id);
    CHECK_FALSE(rt.sources.empty());
    CHECK(list.find("\n" + id + " ") != std::string::npos);
  }
}

TEST_CASE("without [runtime] a scenario gets the documented default runtime", "[runtime][scenario]") {
  CHECK(test::scenario(test::kSmallTraining).runtime.id == "pytorch-ddp");
  CHECK(test::scenario(test::kSmallTraining, {{"parallelism.zero", "3"}}).runtime.id == "pytorch-fsdp");
  CHECK(test::scenario(test::kSmallTraining, {{"parallelism.tensor", "2"}}).runtime.id == "megatron-te");
  const Scenario serve = test::scenario(R"(name = "serve"
[system]
gpu = "rtx4090"
gpus = 1
[model]
preset = "gpt2-124m"
[inference]
batch = 1
)");
  CHECK(serve.runtime.id == "hf-transformers");
}

TEST_CASE("[runtime] keys override the named runtime's settings", "[runtime][scenario]") {
  const Scenario base = llama({{"runtime.name", "\"pytorch-ddp\""}});
  const Scenario changed = llama({{"runtime.name", "\"pytorch-ddp\""},
                                  {"runtime.dispatch", "\"2 us\""},
                                  {"runtime.fusion.rope", "true"},
                                  {"runtime.overlap.data_parallel", "0.5"}});
  CHECK(base.runtime.dispatch.value() == Approx(5e-6));
  CHECK(changed.runtime.dispatch.value() == Approx(2e-6));
  CHECK_FALSE(base.runtime.fusion.rope);
  CHECK(changed.runtime.fusion.rope);
  CHECK(changed.runtime.overlap.data_parallel == Approx(0.5));
  // untouched keys keep the runtime's values
  CHECK(changed.runtime.optimizer == base.runtime.optimizer);
  CHECK(changed.runtime.autocast == base.runtime.autocast);
}

TEST_CASE("a runtime of the wrong kind, an unknown runtime and a bad setting are errors with their position",
          "[runtime][errors]") {
  const std::string serve = R"(name = "serve"
[system]
gpu = "rtx4090"
gpus = 1
[model]
preset = "gpt2-124m"
[inference]
batch = 1
[runtime]
name = "megatron-te"
)";
  auto ds = errors_of(serve);
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].format() ==
        "test.toml:10:8: runtime.name: runtime \"megatron-te\" runs training jobs, but the scenario has [inference]");
  ds = errors_of(std::string(test::kSmallTraining) + "[runtime]\nname = \"pytorch\"\n");
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].key == "runtime.name");
  CHECK_THAT(ds[0].message, Catch::StartsWith("unknown runtime \"pytorch\" (did you mean \"pytorch-ddp\", ") &&
                                Catch::Contains("known: axolotl, deepspeed, "));
  const std::string small = test::kSmallTraining;
  ds = errors_of(small + "[runtime]\nname = \"pytorch-ddp\"\nlaunch = \"graphs\"\n");
  REQUIRE(ds.size() == 1);
  // the launch key is the third line after the base scenario's; its value starts at column 10
  const auto line = std::count(small.begin(), small.end(), '\n') + 3;
  CHECK(ds[0].format() == "test.toml:" + std::to_string(line) +
                              ":10: runtime.launch: expected one of \"eager\", \"cuda-graphs\", got \"graphs\"");
}

TEST_CASE("a runtime spec file must state every setting", "[runtime][catalog][errors]") {
  const auto dir = test::process_scratch("gpusim-runtime-spec");
  const auto path = (dir / "half.toml").string();
  {
    std::ofstream f(path);
    f << "name = \"half a runtime\"\nkind = \"training\"\nlaunch = \"eager\"\n";
  }
  const auto ds = catalog::check_file(test::catalog(), catalog::SpecKind::kRuntime, path);
  REQUIRE_FALSE(ds.empty());
  bool dispatch = false;
  for (const auto& d : ds) {
    dispatch = dispatch || (d.key == "dispatch" && d.message.find("missing") != std::string::npos);
  }
  CHECK(dispatch);
}

TEST_CASE("composite RMSNorm, RoPE and SwiGLU run one kernel and one pass per primitive", "[runtime][lowering]") {
  const Scenario fused = llama({{"runtime.name", "\"pytorch-ddp\""}, {"runtime.composite_ops", "false"}});
  const Scenario composite = llama({{"runtime.name", "\"pytorch-ddp\""}, {"runtime.composite_ops", "true"}});
  const double t = 1024;  // tokens of the micro-batch (1 x seq 1024)
  const double h = 4096;
  const double e = 2;  // bf16 activations
  // RMSNorm as six primitives: (e + 4) + 8 + 4 + 8 + (4 + e) + 2e = 28 + 4e bytes per element
  const auto norm = forward_ops(composite, "norm");
  REQUIRE(norm.size() == 1);
  CHECK(norm[0].count == Approx(2 * 6));  // two norms per layer, six kernels each
  CHECK(norm[0].bytes.value() * 6 == Approx(t * h * (28 + 4 * e)));
  CHECK(forward_ops(fused, "norm")[0].count == Approx(2));
  // SwiGLU as silu then a product: 5 f passes over two kernels
  const double f = 11008;
  const auto swiglu = forward_ops(composite, "swiglu");
  REQUIRE(swiglu.size() == 1);
  CHECK(swiglu[0].count == Approx(2));
  CHECK(swiglu[0].bytes.value() * 2 == Approx(5 * f * t * e));
  // the composite step is slower
  CHECK(step::evaluate(composite).step.time > step::evaluate(fused).step.time);
}

TEST_CASE("autocast keeps the model in fp32: norms and the residual stream in 4 bytes, gradients all-reduced in fp32",
          "[runtime][lowering]") {
  const Scenario amp = test::scenario(test::kSmallTraining, {{"runtime.autocast", "true"}});
  const Scenario bf16 = test::scenario(test::kSmallTraining, {{"runtime.autocast", "false"}});
  CHECK(physics::parameter_bytes(*amp.job.training, amp.layout, amp.runtime) == 4.0);
  CHECK(physics::parameter_bytes(*bf16.job.training, bf16.layout, bf16.runtime) == 2.0);
  // ZeRO-3 gathers 16-bit parameters even under autocast
  const Scenario fsdp = test::scenario(test::kSmallTraining, {{"runtime.autocast", "true"}, {"parallelism.zero", "3"}});
  CHECK(physics::parameter_bytes(*fsdp.job.training, fsdp.layout, fsdp.runtime) == 2.0);
  // GPT-2's LayerNorm: read the fp32 stream, write fp32 (then a cast to 16 bits for the GEMM)
  const double t = 8 * 1024, h = 768;
  CHECK(forward_ops(amp, "norm")[0].bytes.value() == Approx(t * h * (4 + 4)));
  CHECK(forward_ops(amp, "norm.cast")[0].bytes.value() == Approx(t * h * (4 + 2)));
  CHECK(forward_ops(bf16, "norm")[0].bytes.value() == Approx(t * h * (2 + 2)));
  CHECK(forward_ops(bf16, "norm.cast").empty());
  // each GEMM's fp32 weight is read and its 16-bit copy written once per micro-batch
  const auto cast = forward_ops(amp, "weight.cast");
  REQUIRE(cast.size() == 1);
  CHECK(cast[0].bytes.value() == Approx(workload::count_params(amp.job.model).per_layer * (4 + 2)));
}

TEST_CASE("dropout adds a mask kernel after each branch: read x, write y and a one-byte mask", "[runtime][lowering]") {
  const Scenario none = test::scenario(test::kSmallTraining, {{"runtime.autocast", "false"}});
  const Scenario drop = test::scenario(test::kSmallTraining, {{"runtime.autocast", "false"}, {"model.dropout", "0.1"}});
  CHECK(forward_ops(none, "dropout").empty());
  const auto ops = forward_ops(drop, "dropout");
  REQUIRE(ops.size() == 1);
  const double t = 8 * 1024, h = 768, e = 2;
  CHECK(ops[0].count == Approx(2));
  CHECK(ops[0].bytes.value() == Approx(t * h * (2 * e + 1)));
  const auto ds = errors_of(test::kSmallTraining, {{"model.dropout", "1.5"}});
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].message == "a dropout probability is below 1");
}

TEST_CASE("a host-staged all-reduce hides nothing behind backward: 2 x RTX 4090 DDP exposes it whole",
          "[runtime][comm]") {
  const Scenario pair = test::scenario(test::kSmallTraining, {{"system.gpu", "\"rtx4090\""},
                                                              {"system.gpus", "2"},
                                                              {"system.gpus_per_node", "2"},
                                                              {"training.global_batch", "16"}});
  const physics::Fabric f = physics::make_fabric(pair.system);
  REQUIRE(f.host_staged);
  CHECK(f.overlap_cap == pair.system.pcie.staged_overlap);
  const step::Evaluation e = step::evaluate(pair);
  CHECK(pair.runtime.overlap.data_parallel > 0);  // the runtime would overlap: the link does not let it
  CHECK(e.step.communication.value() == Approx(e.step.communication_total.value()));
}

TEST_CASE("a slot with fewer PCIe lanes scales the host link by lanes / 16", "[runtime][scenario]") {
  const Scenario x16 = test::scenario(test::kSmallTraining, {{"system.gpu", "\"rtx4090\""}});
  const Scenario x8 = test::scenario(test::kSmallTraining, {{"system.gpu", "\"rtx4090\""}, {"system.pcie_lanes", "8"}});
  CHECK(x8.system.pcie.bandwidth.value() == Approx(x16.system.pcie.bandwidth.value() / 2));
  CHECK(physics::host_copy_bandwidth(x8.system, true).value() ==
        Approx(physics::host_copy_bandwidth(x16.system, true).value() / 2));
  const auto ds = errors_of(test::kSmallTraining, {{"system.pcie_lanes", "12"}});
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].message == "a PCIe link has 1, 2, 4, 8 or 16 lanes, got 12");
}

TEST_CASE("the runtime's remainder adds its share of kernel time to the step", "[runtime][step]") {
  const Scenario none = test::scenario(test::kSmallTraining, {{"runtime.efficiency.remainder", "0"}});
  const Scenario some = test::scenario(test::kSmallTraining, {{"runtime.efficiency.remainder", "0.25"}});
  const step::Evaluation a = step::evaluate(none);
  const step::Evaluation b = step::evaluate(some);
  // overhead grows by remainder x (micro-batch kernels x micro-batches + optimizer); at the same clock
  REQUIRE(a.clock == Approx(b.clock));
  CHECK((b.step.overhead - a.step.overhead).value() == Approx(0.25 * a.step.compute.value()).epsilon(1e-6));
}

TEST_CASE("advice to fuse elementwise chains is the same job re-run with the runtime's fusions on",
          "[runtime][advice]") {
  const Scenario sc = test::scenario(R"(name = "fuse"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
layers = 16
hidden = 2048
heads = 16
kv_heads = 16
ffn = "swiglu"
ffn_hidden = 5632
vocab = 32000
[training]
tokens = 1e9
seq_len = 2048
global_batch = 4
micro_batch = 4
[runtime]
name = "pytorch-ddp"
)");
  const Estimate e = answer::estimate(sc);
  const auto it = std::find_if(e.advice.begin(), e.advice.end(), [](const explain::Advice& a) {
    return a.kind == explain::AdviceKind::kFuseElementwise;
  });
  REQUIRE(it != e.advice.end());
  REQUIRE(it->after.has_value());
  Scenario fused = sc;
  fused.runtime.composite_ops = false;
  fused.runtime.fusion.norm_residual = fused.runtime.fusion.rope = fused.runtime.fusion.cross_entropy = true;
  const step::Evaluation f = step::evaluate(fused);
  CHECK(it->after->time_per_token.value() == Approx((f.step.time / f.tokens_per_step).value()));
  CHECK(it->after->time_per_token < it->before->time_per_token);
}
