// Lowering of a dense transformer into per-pass kernels (FLOP and byte rules in
// include/gpusim/lowering.hpp).
#include <algorithm>
#include <cmath>

#include "gpusim/lowering.hpp"

namespace gpusim::lowering {
namespace {

using workload::FfnKind;
using workload::ModelShape;
using workload::PositionKind;
using workload::Recompute;

// What one pass over a layer needs to know.
struct PassShape {
  const ModelShape* m = nullptr;
  DType gemm_dtype = DType::kBf16;
  DType attn_dtype = DType::kBf16;
  double e = 2;         // bytes per activation element
  double w = 2;         // bytes per weight element as read by the GEMM
  double kv_bytes = 2;  // bytes per cached K/V element
  double seqs = 1;      // sequences in the micro-batch
  double q_len = 1;     // query positions per sequence in this pass
  double kv_len = 1;    // key/value positions each query attends over
  bool flash = true;
  bool causal_square = true;  // training/prefill with causal mask: half the score matrix
  double tp = 1;              // tensor-parallel degree: heads, FFN columns and vocabulary are split
  bool sp = false;            // sequence parallelism: norms, residuals and dropout split too
  [[nodiscard]] double tokens() const { return seqs * q_len; }
  // Bytes of an activation that tensor parallelism replicates (split only with sequence parallelism).
  [[nodiscard]] double replicated(double bytes) const { return sp ? bytes / tp : bytes; }
};

enum class Split { kNone, kColumn, kRow };

class Builder {
 public:
  explicit Builder(std::vector<Op>& ops) : ops_(ops) {}
  // Ops added from now on belong to `s`.
  void scope(Scope s) { scope_ = s; }

  void add(Op op, double count) {
    op.count = count;
    op.scope = scope_;
    ops_.push_back(std::move(op));
  }
  void gemm(const std::string& name, Phase ph, DType dt, double m, double n, double k, double count, double ea,
            double eb, double ec) {
    add(gemm_op(name, ph, dt, m, n, k, ea, eb, ec), count);
  }
  // Forward GEMM y[T,n] = x[T,k] · W[k,n] and, for backward, dgrad dx = dy · Wᵀ and wgrad
  // dW = xᵀ · dy (fp32 accumulation of dW is written once per micro-batch in the weight dtype).
  void linear(const std::string& name, const PassShape& p, Phase ph, double n, double k, double count,
              Split split = Split::kNone) {
    if (split == Split::kColumn) {
      n /= p.tp;
    } else if (split == Split::kRow) {
      k /= p.tp;
    }
    const double t = p.tokens();
    if (ph == Phase::kBackward) {
      if (p.gemm_dtype == DType::kFp8) {
        // Hopper fp8 GEMMs take only the "TN" layout (K-major operands), so backward needs the
        // 16-bit dy and x cast and transposed into fp8 (Transformer Engine's fused cast-transpose:
        // read 16-bit, write fp8).
        mem(name + ".fp8_transpose", ph, (t * n + t * k) * (p.e + 1.0), count);
      }
      gemm(name + ".dgrad", ph, p.gemm_dtype, t, k, n, count, p.e, p.w, p.e);
      gemm(name + ".wgrad", ph, p.gemm_dtype, k, n, t, count, p.e, p.e, p.w);
    } else {
      gemm(name, ph, p.gemm_dtype, t, n, k, count, p.e, p.w, p.e);
    }
  }
  void mem(const std::string& name, Phase ph, double bytes, double count) {
    Op op;
    op.name = name;
    op.kind = OpKind::kMemoryBound;
    op.phase = ph;
    op.bytes = Bytes(bytes);
    add(std::move(op), count);
  }
  void attention(const PassShape& p, Phase ph, double count) {
    const ModelShape& m = *p.m;
    // Each tensor-parallel rank holds heads / tp query heads and its share of K/V heads (a K/V
    // head is replicated when there are fewer K/V heads than ranks).
    const double h = static_cast<double>(m.hidden) / p.tp;
    const double kv = std::max(static_cast<double>(m.kv_dim()) / p.tp, static_cast<double>(m.head_dim()));
    const double heads = static_cast<double>(m.heads) / p.tp;
    const double hd = static_cast<double>(m.head_dim());
    const double mask = (m.causal && p.causal_square) ? 0.5 : 1.0;
    const bool bwd = ph == Phase::kBackward;
    if (p.flash) {
      add(flash_attention_op({p.seqs, p.q_len, p.kv_len, h, kv, mask, p.e, p.kv_bytes}, ph, p.attn_dtype), count);
      return;
    }
    // Unfused: scores = Q·Kᵀ (batched over sequences x heads), softmax, O = P·V. The mask does not
    // save work here: the full score matrix is computed and stored.
    const double kv_read = p.seqs * p.kv_len * 2.0 * kv * p.kv_bytes;
    const double scores = p.seqs * heads * p.q_len * p.kv_len;
    const double b = p.seqs * heads;
    const double gemm_bytes = p.tokens() * h * p.e + kv_read / 2.0 + scores * p.e;
    auto batched = [&](const std::string& name, double factor) {
      Op op;
      op.name = name;
      op.kind = OpKind::kGemm;
      op.phase = ph;
      op.dtype = p.attn_dtype;
      op.m = p.q_len;
      op.n = p.kv_len;
      op.k = hd;
      op.batch = b;
      op.flops = Flop(factor * 2.0 * p.q_len * p.kv_len * hd * b);
      op.bytes = Bytes(factor * gemm_bytes);
      add(std::move(op), count);
    };
    batched(bwd ? "attention.scores.bwd" : "attention.scores", bwd ? 2.0 : 1.0);
    mem(bwd ? "attention.softmax.bwd" : "attention.softmax", ph, (bwd ? 3.0 : 2.0) * scores * p.e, count);
    batched(bwd ? "attention.context.bwd" : "attention.context", bwd ? 2.0 : 1.0);
  }

 private:
  std::vector<Op>& ops_;
  Scope scope_ = Scope::kLayer;
};

// The widths one layer's kernels are sized by, and the tokens of the pass.
struct LayerDims {
  explicit LayerDims(const PassShape& p)
      : h(static_cast<double>(p.m->hidden)),
        kv(static_cast<double>(p.m->kv_dim())),
        f(static_cast<double>(p.m->ffn_hidden)),
        f_in(static_cast<double>(p.m->ffn_in())),
        t(p.tokens()) {}
  double h, kv, f, f_in, t;
};

void layer_forward(Builder& b, const PassShape& p, Phase ph) {
  const ModelShape& m = *p.m;
  const auto [h, kv, f, f_in, t] = LayerDims(p);
  b.mem("norm", ph, p.replicated(2.0 * 2.0 * t * h * p.e), 1);  // two norms: read x, write y
  b.linear("qkv", p, ph, h + 2.0 * kv, h, 1, Split::kColumn);
  if (m.position == PositionKind::kRope) {
    b.mem("rope", ph, 2.0 * t * (h + kv) * p.e / p.tp, 1);
  }
  b.attention(p, ph, 1);
  b.linear("attn.out", p, ph, h, h, 1, Split::kRow);
  b.mem("residual", ph, p.replicated(2.0 * 3.0 * t * h * p.e), 1);  // two adds: read 2, write 1
  b.linear("ffn.up", p, ph, f_in, h, 1, Split::kColumn);
  b.mem(m.ffn == FfnKind::kSwiglu ? "swiglu" : "gelu", ph, (f_in + f) * t * p.e / p.tp, 1);
  b.linear("ffn.down", p, ph, h, f, 1, Split::kRow);
}

void layer_backward(Builder& b, const PassShape& p) {
  const ModelShape& m = *p.m;
  const auto [h, kv, f, f_in, t] = LayerDims(p);
  const Phase ph = Phase::kBackward;
  b.linear("ffn.down", p, ph, h, f, 1, Split::kRow);
  // Activation backward reads its input and dy, writes dx.
  b.mem(m.ffn == FfnKind::kSwiglu ? "swiglu.bwd" : "gelu.bwd", ph, (2.0 * f_in + f) * t * p.e / p.tp, 1);
  b.linear("ffn.up", p, ph, f_in, h, 1, Split::kColumn);
  b.linear("attn.out", p, ph, h, h, 1, Split::kRow);
  b.attention(p, ph, 1);
  if (m.position == PositionKind::kRope) {
    b.mem("rope.bwd", ph, 2.0 * t * (h + kv) * p.e / p.tp, 1);
  }
  b.linear("qkv", p, ph, h + 2.0 * kv, h, 1, Split::kColumn);
  b.mem("norm.bwd", ph, p.replicated(2.0 * 3.0 * t * h * p.e), 1);      // read x and dy, write dx
  b.mem("residual.bwd", ph, p.replicated(2.0 * 3.0 * t * h * p.e), 1);  // gradient sums at the branches
}

double optimizer_bytes_per_param(workload::Optimizer o, DType precision) {
  // Mixed precision keeps fp32 master weights and fp32 gradients and writes back a 16-bit copy.
  const double copy = units::is_wide(precision) ? 0.0 : 2.0;
  switch (o) {
    case workload::Optimizer::kAdamW:  // read w, g, m, v; write w, m, v
      return 4.0 * 4.0 + 3.0 * 4.0 + copy;
    case workload::Optimizer::kSgd:  // read w, g, momentum; write w, momentum
      return 3.0 * 4.0 + 2.0 * 4.0 + copy;
    case workload::Optimizer::kAdafactor:  // read w, g; write w; factored second moments are O(rows + cols)
      return 2.0 * 4.0 + 4.0 + copy;
  }
  return 0;
}

}  // namespace

Op gemm_op(const std::string& name, Phase phase, DType dtype, double m, double n, double k, double ea, double eb,
           double ec) {
  Op op;
  op.name = name;
  op.kind = OpKind::kGemm;
  op.phase = phase;
  op.dtype = dtype;
  op.m = m;
  op.n = n;
  op.k = k;
  op.flops = Flop(2.0 * m * n * k);
  op.bytes = Bytes(m * k * ea + k * n * eb + m * n * ec);
  op.ea = ea;
  op.eb = eb;
  op.ec = ec;
  return op;
}

Op benchmark_gemm(DType dtype, double m, double n, double k) {
  const double in = units::bytes_per_element(dtype);
  return gemm_op("gemm", Phase::kForward, dtype, m, n, k, in, in, dtype == DType::kFp8 ? 2.0 : in);
}

Op flash_attention_op(const AttentionShape& s, Phase phase, DType dtype) {
  const bool bwd = phase == Phase::kBackward;
  Op op;
  op.name = bwd ? "attention.flash.bwd" : "attention.flash";
  op.kind = OpKind::kAttention;
  op.phase = phase;
  op.dtype = dtype;
  const Flop fwd = workload::attention_matmul_flops(s.seqs, s.q_len, s.kv_len, s.hidden, s.mask);
  op.flops = bwd ? fwd * workload::kAttentionBackwardFactor : fwd;
  const double t = s.seqs * s.q_len;
  const double kv_read = s.seqs * s.kv_len * 2.0 * s.kv_width * s.kv_bytes;
  op.bytes = Bytes(bwd ? (4.0 * t * s.hidden * s.e + 2.0 * kv_read) : (2.0 * t * s.hidden * s.e + kv_read));
  return op;
}

Op optimizer_op(const ModelShape& m, const workload::Training& t, const workload::Layout& layout) {
  const double params_per_rank = workload::total_params(m) / (static_cast<double>(layout.tensor) * layout.pipeline);
  const double shard = layout.zero >= 1 ? static_cast<double>(layout.data) : 1.0;
  Op op;
  op.name = "optimizer";
  op.kind = OpKind::kMemoryBound;
  op.phase = Phase::kOptimizer;
  op.scope = Scope::kOptimizer;
  op.bytes = Bytes(params_per_rank / shard * optimizer_bytes_per_param(t.optimizer, t.precision));
  return op;
}

std::vector<Op> lower_training(const ModelShape& m, const workload::Training& tc, const workload::Layout& layout,
                               const workload::Runtime& rt) {
  std::vector<Op> ops;
  PassShape p;
  p.m = &m;
  p.gemm_dtype = tc.precision;
  p.e = units::is_wide(tc.precision) ? 4.0 : 2.0;  // fp8 training keeps activations in 16-bit (TE casts per GEMM)
  p.w = tc.precision == DType::kFp8 ? 1.0 : p.e;
  p.attn_dtype = tc.precision == DType::kFp8 ? DType::kBf16 : tc.precision;
  p.kv_bytes = p.e;
  p.seqs = static_cast<double>(layout.micro_batch);
  p.q_len = static_cast<double>(tc.seq_len);
  p.kv_len = p.q_len;
  p.flash = rt.flash_attention;
  p.tp = layout.tensor;
  p.sp = layout.sequence;

  const double h = static_cast<double>(m.hidden);
  const double v = static_cast<double>(m.vocab);
  const double t = p.tokens();
  Builder b(ops);
  b.scope(Scope::kEmbedding);
  b.mem("embedding", Phase::kForward, p.replicated(2.0 * t * h * p.e), 1);
  b.scope(Scope::kLayer);
  layer_forward(b, p, Phase::kForward);
  b.scope(Scope::kHead);
  b.mem("final_norm", Phase::kForward, p.replicated(2.0 * t * h * p.e), 1);
  b.linear("logits", p, Phase::kForward, v, h, 1, Split::kColumn);
  // Fused softmax-cross-entropy over the rank's vocabulary shard: two reads of the logits forward,
  // one read and one write backward.
  b.mem("cross_entropy", Phase::kForward, 2.0 * t * v * p.e / p.tp, 1);
  b.mem("cross_entropy.bwd", Phase::kBackward, 2.0 * t * v * p.e / p.tp, 1);
  b.linear("logits", p, Phase::kBackward, v, h, 1, Split::kColumn);
  b.mem("final_norm.bwd", Phase::kBackward, p.replicated(3.0 * t * h * p.e), 1);
  b.scope(Scope::kLayer);
  if (layout.recompute == Recompute::kFull) {
    layer_forward(b, p, Phase::kRecompute);
  } else if (layout.recompute == Recompute::kSelective && !rt.flash_attention) {
    b.attention(p, Phase::kRecompute, 1);
  }
  layer_backward(b, p);
  b.scope(Scope::kEmbedding);
  // Embedding backward: scatter-add of dy into fp32 gradient rows (read-modify-write).
  b.mem("embedding.bwd", Phase::kBackward, p.replicated(t * h * (p.e + 8.0)), 1);
  return ops;
}

std::vector<Op> lower_forward(const ModelShape& m, const workload::Inference& ic, double batch, double q_len,
                              double kv_len) {
  std::vector<Op> ops;
  PassShape p;
  p.m = &m;
  p.gemm_dtype = ic.weight_precision;
  p.attn_dtype = ic.weight_precision == DType::kFp8 ? DType::kFp16 : ic.weight_precision;
  p.e = 2.0;
  p.w = ic.weight_bytes;
  p.kv_bytes = ic.kv_bytes;
  p.seqs = batch;
  p.q_len = q_len;
  p.kv_len = std::max(1.0, kv_len);
  p.causal_square = q_len > 1.0;  // decode attends one new query over the whole cache
  const double h = static_cast<double>(m.hidden);
  const double t = p.tokens();
  Builder b(ops);
  b.scope(Scope::kEmbedding);
  b.mem("embedding", Phase::kForward, 2.0 * t * h * p.e, 1);
  b.scope(Scope::kLayer);
  layer_forward(b, p, Phase::kForward);
  b.mem("kv_cache.write", Phase::kForward, t * 2.0 * static_cast<double>(m.kv_dim()) * p.kv_bytes, 1);
  b.scope(Scope::kHead);
  b.mem("final_norm", Phase::kForward, 2.0 * p.seqs * h * p.e, 1);
  // Only the last position of each sequence needs logits.
  b.gemm("logits", Phase::kForward, p.gemm_dtype, p.seqs, static_cast<double>(m.vocab), h, 1, p.e, p.w, p.e);
  return ops;
}

}  // namespace gpusim::lowering
