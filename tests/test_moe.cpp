// Mixtures of experts and multi-head latent attention: parameter counts against the published
// totals, the MoE layer's kernels, expert parallelism's all-to-all and memory, and the checks.
#include <set>

#include "helpers.hpp"

using namespace gpusim;
using lowering::Op;
using lowering::Phase;
using workload::ModelShape;

namespace {

const char* kMixtral = R"(name = "moe"
[system]
gpu = "h100-sxm5-80gb"
gpus = 16
[model]
preset = "mixtral-8x7b"
[training]
tokens = 1e9
seq_len = 4096
global_batch = 64
micro_batch = 1
optimizer = "adafactor"
[parallelism]
data = 16
expert = 8
zero = 3
)";

const Op& find_op(const std::vector<Op>& ops, const std::string& name, Phase ph) {
  for (const Op& op : ops) {
    if (op.name == name && op.phase == ph) {
      return op;
    }
  }
  FAIL("no op " << name);
  return ops.front();
}

}  // namespace

TEST_CASE("MoE parameter counts match the published totals and active counts", "[moe][params]") {
  struct Row {
    const char* id;
    double total, active, tol;  // published, in parameters; tolerance relative
  };
  // [jiang-2024-mixtral] 46.7B / 12.9B; [mistral-8x22b-2024] 141B / 39B; [deepseek-v3-2024] 671B /
  // 37B (rounded: 2 %); [qwen-moe-2024] 14.3B / 2.7B.
  for (const Row& r : {Row{"mixtral-8x7b", 46.7e9, 12.9e9, 0.01}, Row{"mixtral-8x22b", 141e9, 39e9, 0.01},
                       Row{"deepseek-v3", 671e9, 37e9, 0.02}, Row{"qwen1.5-moe-a2.7b", 14.3e9, 2.7e9, 0.01}}) {
    const ModelShape m = test::catalog().model(r.id);
    INFO(r.id);
    CHECK(workload::total_params(m) == Approx(r.total).epsilon(r.tol));
    CHECK(workload::active_params(m) == Approx(r.active).epsilon(r.tol));
  }
}

TEST_CASE("a MoE layer counts its router, routed and shared experts, and MLA its projections", "[moe][params]") {
  const ModelShape m = test::catalog().model("deepseek-v3");
  const double h = 7168, V = 129280, L = 61, dense = 3, E = 256, k = 8, fe = 2048, fs = 2048, fd = 18432;
  const double heads = 128, qr = 1536, kvr = 512, nope = 128, rope = 64, v = 128;
  // MLA: q_a + norm + q_b, kv_a + norm + kv_b, o_proj [deepseek-v3-config]
  const double attn =
      h * qr + qr + qr * heads * (nope + rope) + h * (kvr + rope) + kvr + kvr * heads * (nope + v) + heads * v * h;
  CHECK(workload::attention_params(m) == Approx(attn));
  const double moe_ffn = h * E + E * 3 * h * fe + 3 * h * fs;
  const double blocks = L * (attn + 2 * h) + dense * 3 * h * fd + (L - dense) * moe_ffn;
  CHECK(workload::total_params(m) == Approx(blocks + 2 * V * h + h));
  CHECK(m.moe_layers() == 58);
  CHECK(workload::expert_params(m) == Approx((L - dense) * E * 3 * h * fe));
  // Active: the idle (E - k)/E of the routed experts drop out.
  CHECK(workload::active_params(m) == Approx(workload::total_params(m) - (L - dense) * (E - k) * 3 * h * fe));
  // Matmul parameters per token: attention, dense FFNs, router + k routed + shared, logits.
  const double active_ffn = h * E + 3 * h * (k * fe + fs);
  CHECK(workload::matmul_params(m) == Approx(L * attn + dense * 3 * h * fd + (L - dense) * active_ffn + V * h));
}

TEST_CASE("every n-th layer after the dense ones is a MoE layer", "[moe][params]") {
  ModelShape m = test::catalog().model("mixtral-8x7b");
  CHECK(m.moe_layers() == 32);
  m.moe->dense_layers = 2;
  m.moe->every = 3;  // layers 2, 5, ..., 29: 10 of them
  CHECK(m.moe_layers() == 10);
  CHECK(m.moe_share() == Approx(10.0 / 32.0));
}

TEST_CASE("MoE training FLOPs per token follow the active parameters", "[moe][flops]") {
  const ModelShape m = test::catalog().model("mixtral-8x7b");
  const double s = 4096, h = 4096, L = 32;
  // 6 N_active + 12 L h s (PaLM)
  CHECK(workload::training_flops_per_token(m, s).value() == Approx(6 * workload::matmul_params(m) + 12 * L * h * s));
  // MLA: attention's width is heads (nope + rope + v) / 2
  const ModelShape d = test::catalog().model("deepseek-v3");
  CHECK(d.attention_width() == 128 * (128 + 64 + 128) / 2);
}

TEST_CASE("expert GEMMs are grouped over the rank's experts with tokens x top_k x load rows", "[moe][lowering]") {
  const Scenario sc = test::scenario(kMixtral, {{"parallelism.expert_imbalance", "1.25"}});
  const auto ops = lowering::lower_training(sc.job.model, *sc.job.training, sc.layout, sc.runtime);
  const double T = 4096, k = 2, E = 8, ep = 8, load = 1.25, h = 4096, f = 14336;
  const Op& up = find_op(ops, "moe.expert.up", Phase::kForward);
  // every token batch of 4096 hits all 8 experts: (E/ep) groups of T k load / groups rows
  const double groups = E / ep * (1 - std::pow(1 - k / E, T * ep));
  CHECK(up.batch == Approx(groups));
  CHECK(up.m * up.batch == Approx(T * k * load));
  CHECK(up.flops.value() == Approx(2 * T * k * load * 2 * f * h));
  CHECK(find_op(ops, "moe.router", Phase::kForward).n == E);
  // every layer of Mixtral is MoE: no dense FFN op
  CHECK(std::none_of(ops.begin(), ops.end(), [](const Op& op) { return op.name == "ffn.up"; }));
}

TEST_CASE("decode reads only the experts its tokens touch: E (1 - (1 - k/E)^tokens)", "[moe][lowering]") {
  const ModelShape m = test::catalog().model("deepseek-v3");
  workload::Inference inf;
  const auto one = lowering::lower_forward(m, inf, workload::Runtime{}, 1, 1, 1, 512);
  const auto many = lowering::lower_forward(m, inf, workload::Runtime{}, 1, 64, 1, 512);
  const double E = 256, k = 8;
  CHECK(find_op(one, "moe.expert.up", Phase::kForward).batch == Approx(E * (1 - std::pow(1 - k / E, 1))));
  CHECK(find_op(many, "moe.expert.up", Phase::kForward).batch == Approx(E * (1 - std::pow(1 - k / E, 64))));
  // the dense first layers and the MoE layers are weighted by their share: 3 and 58 of 61
  CHECK(find_op(one, "ffn.up", Phase::kForward).count == Approx(3.0 / 61.0));
  CHECK(find_op(one, "moe.expert.up", Phase::kForward).count == Approx(58.0 / 61.0));
}

TEST_CASE("MLA caches its latent and rotary key per token and layer on every rank", "[moe][memory]") {
  const ModelShape m = test::catalog().model("deepseek-v3");
  workload::Inference inf;
  inf.kv_bytes = 2;
  workload::Layout layout;
  layout.tensor = 8;
  CHECK(physics::kv_bytes_per_token(m, inf, layout).value() == Approx(61.0 * (512 + 64) * 2));
}

TEST_CASE("expert parallelism: one all-to-all dispatch and combine per MoE layer each way", "[moe][comm]") {
  const Scenario sc = test::scenario(kMixtral);
  const physics::Fabric node = physics::make_fabric(sc.system);
  const physics::Fabric group = physics::strided_fabric(node, 8, sc.layout, 8, 1);
  CHECK(group.gpus_per_node == 8);
  const double rows = 4096.0 * 2 * 4096 * 2;  // b s k h e
  const double layers = 32;
  CHECK(physics::expert_alltoall(node, 8, sc.job.model, *sc.job.training, sc.layout).value() ==
        Approx(physics::all_to_all_time(group, Bytes(rows), 8).value() * 4 * layers));
  // The ranks holding the same experts sit ep = 8 apart: one per node.
  const physics::Fabric same = physics::strided_fabric(node, 8, sc.layout, 2, 8);
  CHECK(same.gpus_per_node == 1);
  CHECK(same.nodes == 2);
}

TEST_CASE("each GPU holds its 1/ep of the routed experts", "[moe][memory]") {
  const Scenario sc = test::scenario(kMixtral, {{"parallelism.zero", "0"}});
  const ModelShape& m = sc.job.model;
  const double experts = workload::expert_params(m);
  CHECK(workload::rank_params(m, sc.layout) == Approx(workload::total_params(m) - experts + experts / 8));
  const Scenario dense = test::scenario(kMixtral, {{"parallelism.zero", "0"}, {"parallelism.expert", "1"}});
  CHECK(workload::rank_params(m, dense.layout) == Approx(workload::total_params(m)));
}

TEST_CASE("bad MoE layouts and shapes are refused with their numbers", "[moe][errors]") {
  auto message = [](const std::vector<Override>& o, const char* toml = kMixtral) {
    const auto ds = test::diagnostics_of([&] { (void)test::scenario(toml, o); });
    REQUIRE(!ds.empty());
    return ds.front().message;
  };
  CHECK_THAT(message({{"parallelism.expert", "3"}}), Catch::Contains("must divide the routed experts (8)"));
  CHECK_THAT(message({{"parallelism.data", "4"}, {"system.gpus", "4"}}), Catch::Contains("must divide data (4)"));
  CHECK_THAT(message({{"parallelism.expert_imbalance", "0.5"}}), Catch::Contains("at least 1"));
  CHECK_THAT(message({{"model.moe.top_k", "9"}}), Catch::Contains("exceeds the routed experts (8)"));
  CHECK_THAT(message({{"parallelism.expert", "2"}}, test::kSmallTraining),
             Catch::Contains("needs a mixture-of-experts"));
}

TEST_CASE("gpusim plan searches expert parallelism for a mixture of experts only", "[moe][plan]") {
  // Mixtral's 8 experts on 8 GPUs: degrees 1, 2, 4, 8 of the data ranks that divide them.
  const Scenario moe = test::scenario(kMixtral, {{"system.gpus", "8"}, {"parallelism.data", "8"}});
  const search::PlanResult r = search::plan(moe, search::PlanOptions{});
  std::set<int> degrees;
  for (const search::PlanPoint& p : r.feasible) {
    CHECK(p.layout.data % p.layout.expert == 0);
    degrees.insert(p.layout.expert);
  }
  CHECK(degrees == std::set<int>{1, 2, 4, 8});
  const search::PlanResult dense = search::plan(test::scenario(test::kSmallTraining), search::PlanOptions{});
  REQUIRE(!dense.feasible.empty());
  for (const search::PlanPoint& p : dense.feasible) {
    CHECK(p.layout.expert == 1);
  }
}
