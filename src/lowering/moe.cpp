// The FFN of a layer: dense, or a mixture of experts as Megatron-Core's MoE layer runs it
// [megatron-core-moe]. Per MoE layer and pass over T tokens on one rank:
//   router     T x h x E GEMM (replicated under tensor parallelism), then softmax/sigmoid and
//              top-k over the fp32 logits: read T·E·4, write T·k·(4 + 8) bytes (weights, indices)
//   permute    each token copied once per chosen expert, in expert order: read T·h·e, write T·k·h·e
//   experts    grouped GEMMs over the rank's experts: R = T·k·load rows in all (all-to-all brings
//              each rank the rows of its E/ep experts; load = the busiest rank's share over the mean,
//              or the capacity factor when experts compute a fixed capacity [lepikhin-2020]), spread
//              over the G experts the tokens touch: G = (E/ep)·(1 − (1 − k/E)^(T·ep)), the expected
//              distinct experts k-of-E picks by T·ep tokens hit (all of them in training; few in
//              small-batch decode, which then reads only their weights)
//   unpermute  the k expert outputs weighted and summed back per token: read T·k·h·e, write T·h·e
//   shared     a dense FFN of shared_ffn_hidden on every token [dai-2024]
// The all-to-all dispatch and combine are communication (physics/parallel.cpp). A layer stack
// mixing dense and MoE layers is lowered as its mean layer: every op of the MoE FFN counted
// moe_share times, every op of the dense FFN (1 − moe_share) times.
#include <cmath>

#include "lowering/builder.hpp"

namespace gpusim::lowering {
namespace {

using workload::FfnKind;

// The widths and rows one MoE layer's kernels are sized by on this rank.
struct MoeDims {
  explicit MoeDims(const PassShape& p) {
    const workload::MoeShape& e = *p.m->moe;
    h = static_cast<double>(p.m->hidden);
    experts = static_cast<double>(e.experts);
    k = static_cast<double>(e.top_k);
    f = static_cast<double>(e.expert_ffn_hidden);
    f_in = p.m->ffn == FfnKind::kSwiglu ? 2.0 * f : f;
    t = p.tokens();
    rows = t * k * p.expert_load;
    const double local = experts / p.ep;
    groups = local * (1.0 - std::pow(1.0 - k / experts, t * p.ep));
  }
  double h = 0, experts = 0, k = 0, f = 0, f_in = 0, t = 0, rows = 0, groups = 0;
};

// A grouped GEMM: `groups` GEMMs of rows/groups x n x k in one kernel; backward as dgrad and
// wgrad, with the fp8 cast-transposes of Builder::linear.
void grouped(Builder& b, const PassShape& p, const std::string& name, Phase ph, double rows, double n, double k,
             double groups, double count) {
  if (groups <= 0 || rows <= 0) {
    return;
  }
  auto add = [&](const std::string& nm, double m_, double n_, double k_, double ea, double eb, double ec) {
    Op op = gemm_op(nm, ph, p.gemm_dtype, m_, n_, k_, ea, eb, ec);
    op.batch = groups;
    op.flops = op.flops * groups;
    op.bytes = op.bytes * groups;
    b.add(std::move(op), count);
  };
  const double m = rows / groups;
  if (ph == Phase::kBackward) {
    if (p.gemm_dtype == DType::kFp8) {
      b.mem(name + ".fp8_transpose", ph, (rows * n + rows * k) * (p.e + 1.0), count);
    }
    add(name + ".dgrad", m, k, n, p.e, p.w, p.e);
    add(name + ".wgrad", k, n, m, p.e, p.e, p.w);
  } else {
    add(name, m, n, k, p.e, p.w, p.e);
  }
}

void moe_forward(Builder& b, const PassShape& p, Phase ph, double gemm_share, double weight) {
  const MoeDims d(p);
  const workload::MoeShape& e = *p.m->moe;
  b.linear("moe.router", p, ph, d.experts, d.h, gemm_share * weight);
  b.mem("moe.topk", ph, d.t * d.experts * 4.0 + d.t * d.k * 12.0, weight);
  b.mem("moe.permute", ph, d.t * d.h * p.e + d.rows * d.h * p.e, weight);
  grouped(b, p, "moe.expert.up", ph, d.rows, d.f_in / p.tp, d.h, d.groups, gemm_share * weight);
  const bool swiglu = p.m->ffn == FfnKind::kSwiglu;
  if (swiglu || !p.fusion.bias_activation) {
    b.mem(swiglu ? "moe.swiglu" : "moe.gelu", ph, (d.f_in + d.f) * d.rows * p.e / p.tp, weight);
  }
  grouped(b, p, "moe.expert.down", ph, d.rows, d.h, d.f / p.tp, d.groups, gemm_share * weight);
  b.mem("moe.unpermute", ph, d.rows * d.h * p.e + d.t * d.h * p.e, weight);
  if (e.shared_ffn_hidden > 0) {
    const double fs = static_cast<double>(e.shared_ffn_hidden);
    const double fs_in = swiglu ? 2.0 * fs : fs;
    b.linear("moe.shared.up", p, ph, fs_in, d.h, gemm_share * weight, Split::kColumn);
    if (swiglu || !p.fusion.bias_activation) {
      b.mem(swiglu ? "moe.shared.swiglu" : "moe.shared.gelu", ph, (fs_in + fs) * d.t * p.e / p.tp, weight);
    }
    b.linear("moe.shared.down", p, ph, d.h, fs, gemm_share * weight, Split::kRow);
  }
}

void moe_backward(Builder& b, const PassShape& p, double weight) {
  const MoeDims d(p);
  const workload::MoeShape& e = *p.m->moe;
  const Phase ph = Phase::kBackward;
  const bool swiglu = p.m->ffn == FfnKind::kSwiglu;
  if (e.shared_ffn_hidden > 0) {
    const double fs = static_cast<double>(e.shared_ffn_hidden);
    const double fs_in = swiglu ? 2.0 * fs : fs;
    b.linear("moe.shared.down", p, ph, d.h, fs, weight, Split::kRow);
    if (swiglu || !p.fusion.bias_activation) {
      b.mem(swiglu ? "moe.shared.swiglu.bwd" : "moe.shared.gelu.bwd", ph, (2.0 * fs_in + fs) * d.t * p.e / p.tp,
            weight);
    }
    b.linear("moe.shared.up", p, ph, fs_in, d.h, weight, Split::kColumn);
  }
  // The weighted sum's backward: dy to each of the k copies (and the routing weights' gradient).
  b.mem("moe.unpermute.bwd", ph, d.rows * d.h * p.e * 2.0 + d.t * d.h * p.e, weight);
  grouped(b, p, "moe.expert.down", ph, d.rows, d.h, d.f / p.tp, d.groups, weight);
  if (swiglu || !p.fusion.bias_activation) {
    b.mem(swiglu ? "moe.swiglu.bwd" : "moe.gelu.bwd", ph, (2.0 * d.f_in + d.f) * d.rows * p.e / p.tp, weight);
  }
  grouped(b, p, "moe.expert.up", ph, d.rows, d.f_in / p.tp, d.h, d.groups, weight);
  // The permutation's backward sums each token's k gradient copies.
  b.mem("moe.permute.bwd", ph, d.rows * d.h * p.e + d.t * d.h * p.e, weight);
  b.mem("moe.topk.bwd", ph, d.t * d.experts * 8.0 + d.t * d.k * 8.0, weight);
  b.linear("moe.router", p, ph, d.experts, d.h, weight);
}

}  // namespace

void ffn_forward(Builder& b, const PassShape& p, Phase ph, double gemm_share) {
  const double share = p.m->moe_share();
  if (share <= 0) {
    dense_ffn_forward(b, p, ph, gemm_share, 1.0);
    return;
  }
  if (share < 1) {
    dense_ffn_forward(b, p, ph, gemm_share, 1.0 - share);
  }
  moe_forward(b, p, ph, gemm_share, share);
}

void ffn_backward(Builder& b, const PassShape& p) {
  const double share = p.m->moe_share();
  if (share <= 0) {
    dense_ffn_backward(b, p, 1.0);
    return;
  }
  moe_backward(b, p, share);
  if (share < 1) {
    dense_ffn_backward(b, p, 1.0 - share);
  }
}

}  // namespace gpusim::lowering
