// Parameter-efficient fine-tuning and the memory savers (docs/scenarios.md [training]): LoRA's
// adapter counts [hu-lora-2021], QLoRA's NF4 storage [dettmers-qlora-2023], 8-bit AdamW
// [dettmers-8bit-optim-2022], ZeRO-Offload [ren-zero-offload-2021] and ZeRO-Infinity
// [rajbhandari-zero-infinity-2021]. Expected values are derived here from the model's widths.
#include <algorithm>
#include <cmath>

#include "helpers.hpp"

using namespace gpusim;
using test::diagnostics_of;

namespace {

// Llama-2-7B on one RTX 4090, full fine-tune in bf16 unless overridden.
const char* kFineTune = R"(name = "ft"
[system]
gpu = "rtx4090"
gpus = 1
[model]
preset = "llama2-7b"
[training]
tokens = 1e6
seq_len = 2048
global_batch = 8
micro_batch = 1
recompute = "full"
)";

Scenario fine_tune(const std::vector<Override>& overrides) { return test::scenario(kFineTune, overrides); }

double gib(Bytes b) { return b.value() / (1024.0 * 1024.0 * 1024.0); }

bool has_op(const std::vector<lowering::Op>& ops, const std::string& name) {
  return std::any_of(ops.begin(), ops.end(), [&](const lowering::Op& o) { return o.name == name; });
}

}  // namespace

TEST_CASE("a LoRA adapter adds r x (in + out) parameters per targeted matrix", "[lora]") {
  const Scenario sc = fine_tune({{"training.method", "\"lora\""}, {"training.lora_rank", "16"}});
  const workload::ModelShape& m = sc.job.model;
  const double h = 4096, kv = 4096, f = 11008, r = 16, layers = 32;  // Llama-2-7B
  // q, k, v, o; gate, up, down
  const double all_linear = r * (h + h) + 2 * r * (h + kv) + r * (h + h) + 2 * r * (h + f) + r * (f + h);
  CHECK(workload::adapter_params_per_layer(m, *sc.job.training) == Approx(all_linear));
  const workload::ParamRoles roles = workload::param_roles(m, *sc.job.training);
  CHECK(roles.trainable == Approx(all_linear * layers));  // 39,976,960, as PEFT prints for this model
  CHECK(roles.trainable == Approx(39976960));
  CHECK(roles.adapter_tensors == Approx(2 * 7 * layers));
  // Frozen block matrices and the rest add up to the model.
  CHECK(roles.frozen_linear + roles.frozen_other == Approx(workload::total_params(m)));
  CHECK(roles.frozen_linear == Approx(layers * (h * (h + 2 * kv) + h * h + 3 * h * f)));

  const Scenario qv =
      fine_tune({{"training.method", "\"lora\""}, {"training.lora_rank", "8"}, {"training.lora_targets", "\"qv\""}});
  CHECK(workload::param_roles(m, *qv.job.training).trainable == Approx(8 * (2 * h + h + kv) * layers));  // 4,194,304
}

TEST_CASE("full training updates every parameter", "[lora]") {
  const Scenario sc = fine_tune({});
  const workload::ParamRoles roles = workload::param_roles(sc.job.model, *sc.job.training);
  CHECK(roles.trainable == Approx(workload::total_params(sc.job.model)));
  CHECK(roles.frozen_linear == 0);
  CHECK(workload::job_flops_per_token(sc.job.model, *sc.job.training).value() ==
        Approx(workload::training_flops_per_token(sc.job.model, 2048).value()));
}

TEST_CASE("NF4 with double quantization takes 4 + 8/64 + 32/(64 x 256) bits per weight", "[qlora]") {
  // QLoRA §3: double quantization cuts the scales from 0.5 to 0.127 bits per parameter.
  CHECK(workload::kNf4BytesPerParam * 8.0 == Approx(4.127).margin(0.0005));
  CHECK(workload::kAdam8bitStateBytes == Approx(1.0 + 4.0 / 2048.0));
}

TEST_CASE("frozen weights hold no gradients or optimizer states", "[lora][memory]") {
  const Scenario full = fine_tune({});
  const Scenario lora = fine_tune({{"training.method", "\"lora\""}});
  const Scenario qlora = fine_tune({{"training.method", "\"qlora\""}});
  const hardware::GpuSpec& g = full.system.gpu;
  const workload::ParamRoles roles = workload::param_roles(lora.job.model, *lora.job.training);
  const auto mf = physics::training_memory(full.job.model, *full.job.training, full.layout, full.runtime, g);
  const auto ml = physics::training_memory(lora.job.model, *lora.job.training, lora.layout, lora.runtime, g);
  const auto mq = physics::training_memory(qlora.job.model, *qlora.job.training, qlora.layout, qlora.runtime, g);
  // pytorch-ddp runs autocast over fp32 parameters: trainable weights and gradients take 4 bytes,
  // AdamW its two fp32 moments; frozen weights stay 16-bit.
  const double w = physics::parameter_bytes(*lora.job.training, lora.layout, lora.runtime);
  REQUIRE(w == 4.0);
  CHECK(ml.gradients.value() == Approx(roles.trainable * w));
  CHECK(ml.optimizer.value() == Approx(roles.trainable * 8.0));
  CHECK(ml.weights.value() == Approx(roles.trainable * w + (roles.frozen_linear + roles.frozen_other) * 2.0));
  CHECK(mq.weights.value() ==
        Approx(roles.trainable * w + roles.frozen_linear * workload::kNf4BytesPerParam + roles.frozen_other * 2.0));
  CHECK(mf.optimizer > ml.optimizer * 100.0);
  // The same activations: the frozen matrices still pass gradients to their inputs.
  CHECK(ml.activations.value() == Approx(mf.activations.value()));
}

TEST_CASE("8-bit AdamW keeps a byte per moment beside the fp32 master copy", "[memory]") {
  const Scenario sc = fine_tune({{"training.optimizer", "\"adamw-8bit\""}, {"runtime.autocast", "false"}});
  const auto m = physics::training_memory(sc.job.model, *sc.job.training, sc.layout, sc.runtime, sc.system.gpu);
  const double n = workload::total_params(sc.job.model);
  CHECK(m.optimizer.value() == Approx(n * (4.0 + 2.0 * workload::kAdam8bitStateBytes)));
}

TEST_CASE("LoRA backward runs input gradients of frozen matrices and both gradients of the adapters", "[lora]") {
  const Scenario lora = fine_tune({{"training.method", "\"lora\""}, {"training.lora_targets", "\"attention\""}});
  const auto ops = lowering::lower_training(lora.job.model, *lora.job.training, lora.layout, lora.runtime);
  CHECK(has_op(ops, "qkv.dgrad"));
  CHECK_FALSE(has_op(ops, "qkv.wgrad"));
  CHECK_FALSE(has_op(ops, "ffn.up.wgrad"));
  CHECK_FALSE(has_op(ops, "logits.wgrad"));
  CHECK_FALSE(has_op(ops, "embedding.bwd"));
  CHECK(has_op(ops, "qkv.lora_a"));
  CHECK(has_op(ops, "qkv.lora_b.wgrad"));
  CHECK(has_op(ops, "attn.out.lora_a.dgrad"));
  CHECK_FALSE(has_op(ops, "ffn.up.lora_a"));  // attention targets only
  CHECK_FALSE(has_op(ops, "qkv.dequant"));
  // The adapter GEMMs of q: x[t, h] · A[h, r], then · B[r, h]: 2·t·r·h FLOPs each.
  const double t = 2048, h = 4096, r = 16;
  const auto a = std::find_if(ops.begin(), ops.end(), [](const lowering::Op& o) { return o.name == "qkv.lora_a"; });
  REQUIRE(a != ops.end());
  CHECK(a->flops.value() == Approx(2.0 * t * r * h));
}

TEST_CASE("QLoRA dequantizes every 4-bit matrix before each GEMM that reads it", "[qlora]") {
  const Scenario q = fine_tune({{"training.method", "\"qlora\""}});
  const auto ops = lowering::lower_training(q.job.model, *q.job.training, q.layout, q.runtime);
  const double h = 4096, f = 11008;
  for (const lowering::Phase ph :
       {lowering::Phase::kForward, lowering::Phase::kBackward, lowering::Phase::kRecompute}) {
    const auto it = std::find_if(ops.begin(), ops.end(),
                                 [&](const lowering::Op& o) { return o.name == "ffn.down.dequant" && o.phase == ph; });
    REQUIRE(it != ops.end());
    // read 4.127 bits, write 16 bits for each of the f x h weights
    CHECK(it->bytes.value() == Approx(f * h * (workload::kNf4BytesPerParam + 2.0)));
  }
  CHECK_FALSE(has_op(ops, "logits.dequant"));  // the output head stays 16-bit
}

TEST_CASE("LoRA model FLOPs count 4 per frozen and 6 per adapter parameter", "[lora]") {
  const Scenario lora = fine_tune({{"training.method", "\"lora\""}});
  const workload::ModelShape& m = lora.job.model;
  const double trainable = workload::param_roles(m, *lora.job.training).trainable;
  const double full = workload::training_flops_per_token(m, 2048).value();
  CHECK(workload::job_flops_per_token(m, *lora.job.training).value() ==
        Approx(full - 2.0 * workload::matmul_params(m) + 6.0 * trainable));
}

TEST_CASE("ZeRO-Offload moves optimizer states and fp32 gradients to the host", "[offload][memory]") {
  const Scenario sc = fine_tune({{"training.offload_optimizer", "\"cpu\""}, {"runtime.autocast", "false"}});
  const workload::Training& t = *sc.job.training;
  const auto m = physics::training_memory(sc.job.model, t, sc.layout, sc.runtime, sc.system.gpu);
  const double n = workload::total_params(sc.job.model);
  CHECK(m.optimizer.value() == 0);
  CHECK(m.host.value() == Approx(n * 12.0 + n * 4.0));         // master + two moments, fp32 gradients
  CHECK(m.gradients.value() == Approx(2.0 * n / 32.0 * 2.0));  // two layers' buckets of 16-bit gradients
  CHECK(m.nvme.value() == 0);
}

TEST_CASE("the offloaded optimizer step is bound by the host's memory bandwidth", "[offload]") {
  const Scenario sc = fine_tune({{"training.offload_optimizer", "\"cpu\""}, {"runtime.autocast", "false"}});
  const hardware::HostSpec& host = sc.system.host;
  REQUIRE(host.id == "desktop-ddr5");
  const physics::OffloadCost c =
      physics::offload_cost(sc.system, sc.job.model, *sc.job.training, sc.layout, sc.runtime);
  const double n = workload::total_params(sc.job.model);
  const double state = 12.0;  // fp32 master + m + v
  // N · (2·S + 4 + 2 + 6) / (B_host · η / gpus_per_node)
  CHECK(c.optimizer.value() ==
        Approx(n * (2.0 * state + 12.0) / (host.memory_bandwidth.value() * host.memory_efficiency)));
  const double pcie = physics::host_copy_bandwidth(sc.system, true).value();
  CHECK(c.gradients_out.value() == Approx(n * 2.0 / pcie));
  CHECK(c.parameters_in.value() == Approx(n * 2.0 / pcie));
  // The step waits for the host optimizer and the parameters' return.
  const step::Evaluation e = step::evaluate(sc);
  CHECK(e.step.offload.value() >= (c.optimizer + c.parameters_in).value());
  CHECK(e.step.time.value() == Approx((e.step.compute + e.step.overhead + e.step.communication + e.step.bubble +
                                       e.step.offload + e.step.input_stall)
                                          .value()));
  // NVMe: the states are read and written every step through the drives.
  const Scenario nvme = fine_tune({{"training.offload_optimizer", "\"nvme\""}, {"runtime.autocast", "false"}});
  const physics::OffloadCost cn =
      physics::offload_cost(nvme.system, nvme.job.model, *nvme.job.training, nvme.layout, nvme.runtime);
  CHECK(cn.optimizer.value() == Approx(2.0 * n * state / host.nvme_bandwidth.value()));
}

TEST_CASE("an offload larger than the host's memory does not fit", "[offload][memory]") {
  // 70B parameters: 16 bytes each of host state is far beyond a 64 GiB desktop.
  const Scenario sc = test::scenario(kFineTune, {{"model.preset", "\"llama2-70b\""},
                                                 {"training.offload_optimizer", "\"cpu\""},
                                                 {"training.offload_params", "\"cpu\""},
                                                 {"parallelism.zero", "3"}});
  const step::Evaluation e = step::evaluate(sc);
  CHECK(gib(e.memory.host) > 64.0);
  CHECK_FALSE(e.memory.host_fits());
  CHECK_FALSE(e.memory.fits());
  // The same on a workstation with 256 GiB still does not hold 70B x 16 bytes; NVMe does.
  const Scenario nvme = test::scenario(kFineTune, {{"model.preset", "\"llama2-70b\""},
                                                   {"training.offload_optimizer", "\"nvme\""},
                                                   {"training.offload_params", "\"cpu\""},
                                                   {"parallelism.zero", "3"},
                                                   {"system.host", "\"workstation-ddr5\""}});
  const step::Evaluation en = step::evaluate(nvme);
  CHECK(en.memory.nvme.value() > 0);
}

TEST_CASE("the advice for a job that does not fit tries LoRA and QLoRA", "[lora][advice]") {
  const Scenario sc = test::scenario(kFineTune, {{"model.preset", "\"llama3-8b\""}});
  const step::Evaluation e = step::evaluate(sc);
  REQUIRE_FALSE(e.memory.fits());
  const auto advice = explain::advise(sc, e, explain::diagnose(e));
  const bool qlora = std::any_of(advice.begin(), advice.end(), [](const explain::Advice& a) {
    return std::any_of(a.change.begin(), a.change.end(),
                       [](const Override& o) { return o.key == "training.method" && o.value == "\"qlora\""; });
  });
  CHECK(qlora);
}

TEST_CASE("fine-tuning keys are checked against the method, precision and layout", "[lora][errors]") {
  auto first = [](const std::vector<Override>& o) {
    const auto ds = diagnostics_of([&] { (void)fine_tune(o); });
    REQUIRE(!ds.empty());
    return ds.front();
  };
  const Diagnostic rank = first({{"training.lora_rank", "8"}});
  CHECK(rank.key == "training.lora_rank");
  CHECK(rank.message.find("applies to method") != std::string::npos);
  const Diagnostic big = first({{"training.method", "\"lora\""}, {"training.lora_rank", "5000"}});
  CHECK(big.key == "training.lora_rank");
  CHECK(big.message.find("at most the model's 4096") != std::string::npos);
  const Diagnostic fp32 = first({{"training.method", "\"qlora\""}, {"training.precision", "\"fp32\""}});
  CHECK(fp32.key == "training.precision");
  const Diagnostic zero = first({{"training.offload_params", "\"cpu\""}});
  CHECK(zero.key == "training.offload_params");
  CHECK(zero.message.find("zero = 3") != std::string::npos);
  const Diagnostic host = first({{"system.host", "\"mainframe\""}});
  CHECK(host.key == "system.host");
  CHECK(host.message.find("desktop-ddr5") != std::string::npos);  // lists the known hosts
  const Diagnostic moe = first({{"model.preset", "\"mixtral-8x7b\""}, {"training.method", "\"lora\""}});
  CHECK(moe.key == "training.method");
  CHECK(moe.message.find("dense transformers") != std::string::npos);
  const Diagnostic where = first({{"training.method", "\"lora-ish\""}});
  CHECK(where.key == "training.method");
  CHECK(where.pos.file == "--set training.method=\"lora-ish\"");
}

TEST_CASE("every host spec loads and a GPU names a host that exists", "[catalog][offload]") {
  const Catalog& c = test::catalog();
  REQUIRE(c.ids(catalog::SpecKind::kHost).size() >= 4);
  for (const auto& id : c.ids(catalog::SpecKind::kHost)) {
    const hardware::HostSpec h = c.host(id);
    CHECK(h.cores > 0);
    CHECK(h.memory_bandwidth.value() > 0);
  }
  for (const auto& id : c.ids(catalog::SpecKind::kGpu)) {
    INFO(id);
    CHECK(c.has(catalog::SpecKind::kHost, c.gpu(id).host));
  }
  // Peak DDR bandwidth: channels x transfer rate x 8 bytes.
  CHECK(c.host("desktop-ddr5").memory_bandwidth.value() == Approx(2 * 5200e6 * 8));
  CHECK(c.host("server-ddr5").memory_bandwidth.value() == Approx(2 * 8 * 4800e6 * 8));
}

TEST_CASE("plan searches parameter offload under ZeRO-3 only", "[offload][plan]") {
  const Scenario sc = test::scenario(kFineTune, {{"model.preset", "\"llama3-70b\""},
                                                 {"system.gpus", "2"},
                                                 {"system.host", "\"workstation-ddr5\""},
                                                 {"training.method", "\"lora\""},
                                                 {"training.offload_params", "\"cpu\""},
                                                 {"parallelism.zero", "3"}});
  search::PlanOptions o;
  o.top = 50;
  const search::PlanResult r = search::plan(sc, o);
  REQUIRE_FALSE(r.best.empty());
  for (const auto& row : r.best) {
    CHECK(row.layout.zero == 3);
  }
  // One data rank is searched too: ZeRO-Infinity offloads a single GPU's parameters.
  CHECK(std::any_of(r.best.begin(), r.best.end(), [](const search::PlanRow& row) { return row.layout.data == 1; }));
}

// Context parallelism [megatron-context-parallel] (kept with the other memory savers of long or
// large jobs).
namespace {
const char* kLongContext = R"(name = "long"
[system]
gpu = "h100-sxm5-80gb"
gpus = 8
[model]
preset = "llama3-8b"
[training]
tokens = 1e9
seq_len = 32768
global_batch = 8
recompute = "full"
[runtime]
name = "megatron-te"
)";
}  // namespace

TEST_CASE("context parallelism gives each rank 1/c of every sequence", "[context]") {
  const Scenario one = test::scenario(kLongContext, {});
  const Scenario ring = test::scenario(kLongContext, {{"parallelism.context", "4"}});
  REQUIRE(ring.layout.data == 2);
  const auto ops1 = lowering::lower_training(one.job.model, *one.job.training, one.layout, one.runtime);
  const auto ops4 = lowering::lower_training(ring.job.model, *ring.job.training, ring.layout, ring.runtime);
  auto flops_of = [](const std::vector<lowering::Op>& ops, const std::string& name) {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const lowering::Op& o) { return o.name == name; });
    REQUIRE(it != ops.end());
    return it->flops.value();
  };
  // Causal attention of s/c queries over s keys, balanced: 1/c of the full square's work.
  CHECK(flops_of(ops4, "attention.flash") == Approx(flops_of(ops1, "attention.flash") / 4));
  CHECK(flops_of(ops4, "qkv") == Approx(flops_of(ops1, "qkv") / 4));
  // Activations follow the tokens a rank holds.
  const auto m1 = physics::training_memory(one.job.model, *one.job.training, one.layout, one.runtime, one.system.gpu);
  const auto m4 =
      physics::training_memory(ring.job.model, *ring.job.training, ring.layout, ring.runtime, ring.system.gpu);
  CHECK(m4.activations < m1.activations * 0.3);
}

TEST_CASE("ring attention passes 3 (c - 1) K/V chunks per layer, 4 with a recomputed forward", "[context]") {
  const Scenario ring = test::scenario(kLongContext, {{"parallelism.context", "4"}});
  const physics::Fabric f = physics::make_fabric(ring.system);
  const physics::ParallelComm c = physics::parallel_comm(f, ring.system.gpus_per_node, ring.job.model,
                                                         *ring.job.training, ring.layout, ring.runtime);
  const double kv = 1024, s = 32768, e = 2, layers = 32, cp = 4;  // Llama-3-8B: 8 KV heads x 128
  const Bytes chunk(s / cp * 2 * kv * e);
  const Seconds hop = physics::p2p_time(chunk, f.intra_p2p, f.intra_alpha);
  CHECK(c.context_per_microbatch.value() == Approx(hop.value() * 4 * (cp - 1) * layers));
  // Inside the node the passes hide behind the attention kernels.
  const step::Evaluation e4 = step::evaluate(ring);
  CHECK(e4.step.communication.value() < c.context_per_microbatch.value());
}

TEST_CASE("context parallelism is refused where it cannot split", "[context][errors]") {
  auto first = [](const std::vector<Override>& o) {
    const auto ds = diagnostics_of([&] { (void)test::scenario(kLongContext, o); });
    REQUIRE(!ds.empty());
    return ds.front();
  };
  const Diagnostic odd = first({{"parallelism.context", "4"}, {"training.seq_len", "32772"}});
  CHECK(odd.key == "parallelism.context");
  CHECK(odd.message.find("2 x context = 8 must divide seq_len (32772)") != std::string::npos);
  const Diagnostic unfused = first({{"parallelism.context", "2"}, {"training.flash_attention", "false"}});
  CHECK(unfused.key == "parallelism.context");
  const Diagnostic product = first({{"parallelism.context", "2"}, {"parallelism.data", "8"}});
  CHECK(product.key == "parallelism.data");
  CHECK(product.message == "tensor x pipeline x context x data = 1 x 1 x 2 x 8 = 16, but system.gpus = 8");
}

TEST_CASE("plan searches context parallelism for long sequences", "[context][plan]") {
  const Scenario sc = test::scenario(kLongContext, {{"training.seq_len", "131072"}});
  search::PlanOptions o;
  o.top = 20;
  const search::PlanResult r = search::plan(sc, o);
  REQUIRE_FALSE(r.best.empty());
  CHECK(r.best.front().layout.context > 1);  // one 128k sequence's activations fit no single GPU
  // and short sequences keep the search as it was
  const search::PlanResult s = search::plan(test::scenario(kLongContext, {{"training.seq_len", "4096"}}), o);
  CHECK(std::none_of(s.best.begin(), s.best.end(), [](const search::PlanRow& row) { return row.layout.context > 1; }));
}
