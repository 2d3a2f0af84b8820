// Kernels the software runs besides the GEMMs and the attention (lowering), how sequence-parallel
// traffic is priced (physics/parallel.cpp), and how the pipeline bubble enters the clock and the
// power (step/evaluator.cpp).
#include "helpers.hpp"

using namespace gpusim;
using lowering::Op;
using lowering::Phase;
using lowering::Scope;

namespace {

// Layer ops of the training lowering named `name` in `phase`.
std::vector<Op> ops_named(const Scenario& sc, const std::string& name, Phase phase, Scope scope = Scope::kLayer) {
  std::vector<Op> out;
  for (const Op& op : lowering::lower_training(sc.job.model, *sc.job.training, sc.layout, sc.runtime)) {
    if (op.name == name && op.phase == phase && op.scope == scope) {
      out.push_back(op);
    }
  }
  return out;
}

// Σ count × bytes and Σ count of `ops`.
std::pair<double, double> traffic(const std::vector<Op>& ops) {
  double bytes = 0;
  double kernels = 0;
  for (const Op& op : ops) {
    bytes += op.bytes.value() * op.count;
    kernels += op.count;
  }
  return {bytes, kernels};
}

// GPT-2 124M (biases, LayerNorm, GELU) training in bf16 without autocast: micro-batch 8 x 1024.
Scenario gpt2(const std::vector<Override>& o = {}) {
  std::vector<Override> all = {{"runtime.autocast", "false"}};
  all.insert(all.end(), o.begin(), o.end());
  return test::scenario(test::kSmallTraining, all);
}

constexpr double kTokens = 8 * 1024;  // micro-batch 8 x seq 1024
constexpr double kHidden = 768;
constexpr double kFfn = 3072;
constexpr double kE = 2;  // bf16 activations

}  // namespace

TEST_CASE("each biased linear's backward sums its output gradient in a pass of its own unless a GEMM epilogue does",
          "[lowering][software]") {
  const auto [bytes, kernels] = traffic(ops_named(gpt2(), "bias.grad", Phase::kBackward));
  // QKV (3h outputs), FFN up (4h), attention out (h) and FFN down (h): read dy once each
  CHECK(kernels == Approx(4));
  CHECK(bytes == Approx(kTokens * (3 * kHidden + kFfn + kHidden + kHidden) * kE));
  CHECK(ops_named(gpt2({{"runtime.fusion.bias_grad", "true"}}), "bias.grad", Phase::kBackward).empty());
  // a model without biases has none to reduce
  CHECK(ops_named(gpt2({{"model.bias", "false"}}), "bias.grad", Phase::kBackward).empty());
  // the pass costs time: the fused runtime is faster
  CHECK(step::evaluate(gpt2()).step.time > step::evaluate(gpt2({{"runtime.fusion.bias_grad", "true"}})).step.time);
}

TEST_CASE("an unfused norm backward reads x and dy again for the weight gradients", "[lowering][software]") {
  const auto layer = ops_named(gpt2(), "norm.weight_grad", Phase::kBackward);
  REQUIRE(layer.size() == 1);
  CHECK(layer[0].count == Approx(2));                                      // two norms per layer
  CHECK(layer[0].bytes.value() == Approx(kTokens * kHidden * (kE + kE)));  // read x (the stream) and dy
  CHECK(ops_named(gpt2(), "final_norm.weight_grad", Phase::kBackward, Scope::kHead).size() == 1);
  const Scenario fused = gpt2({{"runtime.fusion.norm_backward", "true"}});
  CHECK(ops_named(fused, "norm.weight_grad", Phase::kBackward).empty());
  CHECK(ops_named(fused, "final_norm.weight_grad", Phase::kBackward, Scope::kHead).empty());
  // composite RMSNorm's autograd chain already holds its weight product: no second pass
  const Scenario llama =
      gpt2({{"model.preset", "\"llama2-7b\""}, {"model.layers", "2"}, {"runtime.composite_ops", "true"}});
  CHECK(ops_named(llama, "norm.weight_grad", Phase::kBackward).empty());
}

TEST_CASE("FlashAttention's backward adds dot(dO, O) and the dQ conversion: t h (2e + 4) + 4 t heads, then t h (4 + e)",
          "[lowering][software]") {
  const double heads = 12;
  const auto prep = ops_named(gpt2(), "attention.flash.bwd.prep", Phase::kBackward);
  const auto dq = ops_named(gpt2(), "attention.flash.bwd.dq", Phase::kBackward);
  REQUIRE(prep.size() == 1);
  REQUIRE(dq.size() == 1);
  // read dO and O, zero the fp32 dQ accumulator, write the fp32 row sums
  CHECK(prep[0].bytes.value() == Approx(kTokens * kHidden * (2 * kE + 4) + kTokens * heads * 4));
  // read the fp32 accumulator, write dQ
  CHECK(dq[0].bytes.value() == Approx(kTokens * kHidden * (4 + kE)));
  // the forward has neither, and unfused attention neither
  CHECK(ops_named(gpt2(), "attention.flash.bwd.prep", Phase::kForward).empty());
  CHECK(ops_named(gpt2({{"training.flash_attention", "false"}}), "attention.flash.bwd.prep", Phase::kBackward).empty());
}

TEST_CASE("sequence parallelism on batch-major activations copies b s h around every all-gather and reduce-scatter",
          "[lowering][software][parallel]") {
  const std::vector<Override> tp = {
      {"parallelism.tensor", "2"}, {"parallelism.data", "4"}, {"parallelism.sequence", "true"}};
  auto with = [&](std::vector<Override> o) {
    o.insert(o.end(), tp.begin(), tp.end());
    return gpt2(o);
  };
  const Scenario batch_major = with({{"runtime.activation_layout", "\"batch-major\""}});
  // forward: gather before QKV and FFN, scatter after their outputs; backward: the four gradients
  for (const Phase ph : {Phase::kForward, Phase::kBackward}) {
    const auto [bytes, kernels] = traffic(ops_named(batch_major, "tp.relayout", ph));
    CHECK(kernels == Approx(4));
    CHECK(bytes == Approx(4 * 2 * kTokens * kHidden * kE));  // read and write the whole b·s·h tensor
  }
  // Megatron's [s, b, h] gathers along dimension 0: no copy; nor with one sequence, nor without SP
  CHECK(ops_named(with({{"runtime.activation_layout", "\"sequence-major\""}}), "tp.relayout", Phase::kForward).empty());
  CHECK(ops_named(with({{"training.micro_batch", "1"}, {"runtime.activation_layout", "\"batch-major\""}}),
                  "tp.relayout", Phase::kForward)
            .empty());
  CHECK(ops_named(gpt2({{"parallelism.tensor", "2"}, {"parallelism.data", "4"}}), "tp.relayout", Phase::kForward)
            .empty());
  // a recompute that redoes half the matmuls redoes half the collectives
  const auto op = ops_named(with({{"runtime.activation_layout", "\"batch-major\""}, {"training.recompute", "\"op\""}}),
                            "tp.relayout", Phase::kRecompute);
  CHECK(traffic(op).second == Approx(2));
}

TEST_CASE("sequence-parallel tensor traffic is a reduce-scatter and an all-gather per all-reduce, without NVLS",
          "[parallel][comm]") {
  const std::vector<Override> node = {
      {"system.gpu", "\"h100-sxm5-80gb\""}, {"parallelism.tensor", "4"}, {"parallelism.data", "2"}};
  auto with = [&](const char* sequence) {
    std::vector<Override> o = node;
    o.push_back({"parallelism.sequence", sequence});
    return gpt2(o);
  };
  const Scenario sp = with("true");
  const Scenario plain = with("false");
  const physics::Fabric f = physics::make_fabric(sp.system);
  REQUIRE(f.nvls_bus.value() > 0);  // the H100 node reduces in the switch for all-reduce
  const Bytes activation(kTokens * kHidden * kE);
  const double layers = 12;
  const double per_layer = 4;  // 2 forward and 2 backward, no recompute
  auto comm = [&](const Scenario& sc) {
    return physics::parallel_comm(f, sc.system.gpus_per_node, sc.job.model, *sc.job.training, sc.layout, sc.runtime)
        .tensor_per_microbatch.value();
  };
  using physics::Collective;
  const double halves = (physics::collective_time(f, Collective::kReduceScatter, activation, 4) +
                         physics::collective_time(f, Collective::kAllGather, activation, 4))
                            .value();
  CHECK(comm(sp) == Approx(halves * per_layer * layers));
  CHECK(comm(plain) ==
        Approx(physics::collective_time(f, Collective::kAllReduce, activation, 4).value() * per_layer * layers));
  CHECK(comm(sp) > comm(plain));  // NVLS speeds the whole all-reduce only
}

TEST_CASE("the pipeline bubble neither raises the busy stages' clock nor draws more than idle power", "[power][step]") {
  // Two pipeline stages on an H100 capped at 400 W: the stages' kernels alone would exceed it.
  const Scenario sc = gpt2({{"system.gpu", "\"h100-sxm5-80gb\""},
                            {"system.power_limit", "\"400 W\""},
                            {"parallelism.pipeline", "2"},
                            {"parallelism.data", "4"}});
  const step::Evaluation e = step::evaluate(sc);
  REQUIRE(e.step.bubble.value() > 0);
  REQUIRE(e.clock < physics::max_clock_ratio(sc.system.gpu));  // the limit binds
  // busy period at the limit (within the 0.1 % clock grid the evaluator settles on), the bubble at
  // the idle board's power at that clock
  const double busy = (e.step.time - e.step.bubble).value();
  const double idle = physics::board_power(sc.system.gpu, physics::PowerMix{}, e.clock).value();
  CHECK(e.gpu_avg_power.value() ==
        Approx((400.0 * busy + idle * e.step.bubble.value()) / e.step.time.value()).epsilon(0.003));
  CHECK(e.gpu_avg_power.value() < 400.0);
}

TEST_CASE("a runtime's attention kernel shares scale the flash attention's compute time, forward and backward",
          "[lowering][software][kernel]") {
  const double fwd_share = 0.71;
  const double bwd_share = 0.5;
  const Scenario fa2 = gpt2();
  const Scenario triton = gpt2({{"runtime.efficiency.attention_forward", std::to_string(fwd_share)},
                                {"runtime.efficiency.attention_backward", std::to_string(bwd_share)}});
  CHECK(fa2.runtime.attention_forward == 1.0);  // absent: FlashAttention-2 itself
  CHECK(fa2.runtime.attention_backward == 1.0);
  const hardware::GpuSpec& g = fa2.system.gpu;
  for (const auto& [name, phase, share] : {std::tuple{"attention.flash", Phase::kForward, fwd_share},
                                           std::tuple{"attention.flash.bwd", Phase::kBackward, bwd_share}}) {
    const auto base = ops_named(fa2, name, phase);
    const auto slow = ops_named(triton, name, phase);
    REQUIRE(base.size() == 1);
    REQUIRE(slow.size() == 1);
    CHECK(base[0].attn_share == 1.0);
    CHECK(slow[0].attn_share == Approx(share));
    CHECK(slow[0].flops.value() == Approx(base[0].flops.value()));  // the same work
    // t = FLOPs / (peak x η_attention x share) at the rated clock.
    const double expected = base[0].flops.value() / (g.peak_for(DType::kBf16).value() * g.efficiency.attention * share);
    CHECK(physics::kernel_time(slow[0], g, 1.0).compute.value() == Approx(expected));
    CHECK(physics::kernel_time(slow[0], g, 1.0).compute.value() ==
          Approx(physics::kernel_time(base[0], g, 1.0).compute.value() / share));
  }
}

TEST_CASE("an attention kernel share of 0 or above 1 is an error with its key", "[software][runtime][errors]") {
  for (const char* value : {"0", "1.2"}) {
    const auto ds = test::diagnostics_of([&] {
      (void)test::scenario(test::kSmallTraining, {{"runtime.efficiency.attention_backward", value}});
    });
    REQUIRE(ds.size() == 1);
    CHECK(ds[0].key == "runtime.efficiency.attention_backward");
    CHECK(ds[0].message.find("fraction in (0, 1]") != std::string::npos);
  }
}
