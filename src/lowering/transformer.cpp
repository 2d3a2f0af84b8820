// Lowering of a dense transformer into per-step kernels (see ops.hpp for the FLOP and byte rules).
#include "gpusim/workload/ops.hpp"

#include <algorithm>
#include <cmath>

namespace gpusim {
namespace {

// What one pass over a layer needs to know.
struct Pass {
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

// Megatron-LM tensor parallelism (Shoeybi et al. 2019): QKV and FFN-up split their output columns,
// attention-out and FFN-down their input rows, the logits the vocabulary.
enum class Split { kNone, kColumn, kRow };

class Builder {
 public:
  explicit Builder(std::vector<Op>& ops) : ops_(ops) {}
  // Ops added from now on belong to `s`.
  void scope(Scope s) { scope_ = s; }

  void gemm(const std::string& name, Phase ph, DType dt, double m, double n, double k, double count, double ea,
            double eb, double ec) {
    Op op = gemm_op(name, ph, dt, m, n, k, ea, eb, ec);
    op.count = count;
    op.scope = scope_;
    ops_.push_back(op);
  }
  // Forward GEMM y[T,n] = x[T,k] · W[k,n] and, for backward, dgrad dx = dy · W^T and wgrad
  // dW = x^T · dy (fp32 accumulation of dW is written once per micro-batch in the weight dtype).
  void linear(const std::string& name, const Pass& p, Phase ph, double n, double k, double count,
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
    op.count = count;
    op.scope = scope_;
    ops_.push_back(op);
  }
  void attention(const Pass& p, Phase ph, double count) {
    const ModelShape& m = *p.m;
    // Each tensor-parallel rank holds heads / tp query heads and its share of K/V heads (a K/V
    // head is replicated when there are fewer K/V heads than ranks).
    const double h = static_cast<double>(m.hidden) / p.tp;
    const double kv = std::max(static_cast<double>(m.kv_dim()) / p.tp, static_cast<double>(m.head_dim()));
    const double heads = static_cast<double>(m.heads) / p.tp;
    const double hd = static_cast<double>(m.head_dim());
    const double t = p.tokens();
    const double mask = (m.causal && p.causal_square) ? 0.5 : 1.0;
    const bool bwd = ph == Phase::kBackward;
    const double kv_read = p.seqs * p.kv_len * 2.0 * kv * p.kv_bytes;
    if (p.flash) {
      Op op;
      op.name = bwd ? "attention.flash.bwd" : "attention.flash";
      op.kind = OpKind::kAttention;
      op.phase = ph;
      op.dtype = p.attn_dtype;
      const double fwd = 4.0 * p.seqs * p.q_len * p.kv_len * h * mask;
      op.flops = Flop(bwd ? 2.5 * fwd : fwd);
      // Forward reads Q, K, V and writes O; backward reads Q, K, V, O, dO and writes dQ, dK, dV.
      op.bytes = Bytes(bwd ? (4.0 * t * h * p.e + 2.0 * kv_read) : (2.0 * t * h * p.e + kv_read));
      op.count = count;
      op.scope = scope_;
      ops_.push_back(op);
      return;
    }
    // Unfused: scores = Q·K^T (batched over sequences x heads), softmax, O = P·V. The mask does not
    // save work here: the full score matrix is computed and stored.
    const double scores = p.seqs * heads * p.q_len * p.kv_len;
    const double b = p.seqs * heads;
    const double gemm_bytes = t * h * p.e + kv_read / 2.0 + scores * p.e;
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
      op.count = count;
      op.scope = scope_;
      ops_.push_back(op);
    };
    batched(bwd ? "attention.scores.bwd" : "attention.scores", bwd ? 2.0 : 1.0);
    mem(bwd ? "attention.softmax.bwd" : "attention.softmax", ph, (bwd ? 3.0 : 2.0) * scores * p.e, count);
    batched(bwd ? "attention.context.bwd" : "attention.context", bwd ? 2.0 : 1.0);
  }

 private:
  std::vector<Op>& ops_;
  Scope scope_ = Scope::kLayer;
};

double ffn_in(const ModelShape& m) {
  return static_cast<double>(m.ffn == FfnKind::kSwiglu ? 2 * m.ffn_hidden : m.ffn_hidden);
}

void layer_forward(Builder& b, const Pass& p, Phase ph, double count) {
  const ModelShape& m = *p.m;
  const double h = static_cast<double>(m.hidden);
  const double kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.ffn_hidden);
  const double t = p.tokens();
  b.mem("norm", ph, p.replicated(2.0 * 2.0 * t * h * p.e), count);  // two norms: read x, write y
  b.linear("qkv", p, ph, h + 2.0 * kv, h, count, Split::kColumn);
  if (m.position == PositionKind::kRope) {
    b.mem("rope", ph, 2.0 * t * (h + kv) * p.e / p.tp, count);
  }
  b.attention(p, ph, count);
  b.linear("attn.out", p, ph, h, h, count, Split::kRow);
  b.mem("residual", ph, p.replicated(2.0 * 3.0 * t * h * p.e), count);  // two adds: read 2, write 1
  b.linear("ffn.up", p, ph, ffn_in(m), h, count, Split::kColumn);
  b.mem(m.ffn == FfnKind::kSwiglu ? "swiglu" : "gelu", ph, (ffn_in(m) + f) * t * p.e / p.tp, count);
  b.linear("ffn.down", p, ph, h, f, count, Split::kRow);
}

void layer_backward(Builder& b, const Pass& p, double count) {
  const ModelShape& m = *p.m;
  const double h = static_cast<double>(m.hidden);
  const double kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.ffn_hidden);
  const double t = p.tokens();
  const Phase ph = Phase::kBackward;
  b.linear("ffn.down", p, ph, h, f, count, Split::kRow);
  // Activation backward reads its input and dy, writes dx.
  b.mem(m.ffn == FfnKind::kSwiglu ? "swiglu.bwd" : "gelu.bwd", ph, (2.0 * ffn_in(m) + f) * t * p.e / p.tp, count);
  b.linear("ffn.up", p, ph, ffn_in(m), h, count, Split::kColumn);
  b.linear("attn.out", p, ph, h, h, count, Split::kRow);
  b.attention(p, ph, count);
  if (m.position == PositionKind::kRope) {
    b.mem("rope.bwd", ph, 2.0 * t * (h + kv) * p.e / p.tp, count);
  }
  b.linear("qkv", p, ph, h + 2.0 * kv, h, count, Split::kColumn);
  b.mem("norm.bwd", ph, p.replicated(2.0 * 3.0 * t * h * p.e), count);      // read x and dy, write dx
  b.mem("residual.bwd", ph, p.replicated(2.0 * 3.0 * t * h * p.e), count);  // gradient sums at the branches
}

double optimizer_bytes_per_param(Optimizer o, DType precision) {
  // Mixed precision keeps fp32 master weights and fp32 gradients and writes back a 16-bit copy.
  const double copy = (precision == DType::kFp32 || precision == DType::kTf32) ? 0.0 : 2.0;
  switch (o) {
    case Optimizer::kAdamW:  // read w, g, m, v; write w, m, v
      return 4.0 * 4.0 + 3.0 * 4.0 + copy;
    case Optimizer::kSgd:  // read w, g, momentum; write w, momentum
      return 3.0 * 4.0 + 2.0 * 4.0 + copy;
    case Optimizer::kAdafactor:  // read w, g; write w; factored second moments are O(rows + cols)
      return 2.0 * 4.0 + 4.0 + copy;
  }
  return 0;
}

Pass base_pass(const Scenario& sc) {
  Pass p;
  p.m = &sc.model;
  return p;
}

}  // namespace

const char* to_string(Phase p) {
  switch (p) {
    case Phase::kForward:
      return "fwd";
    case Phase::kBackward:
      return "bwd";
    case Phase::kRecompute:
      return "recompute";
    case Phase::kOptimizer:
      return "optimizer";
  }
  return "";
}

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
  const double in = bytes_per_element(dtype);
  return gemm_op("gemm", Phase::kForward, dtype, m, n, k, in, in, dtype == DType::kFp8 ? 2.0 : in);
}

Bytes optimizer_step_bytes(const ModelShape& m, const TrainingConfig& tc, const ParallelConfig& par) {
  const double params_per_rank = total_params(m) / (static_cast<double>(par.tensor) * par.pipeline);
  const double shard = par.zero >= 1 ? static_cast<double>(par.data) : 1.0;
  return Bytes(params_per_rank / shard * optimizer_bytes_per_param(tc.optimizer, tc.precision));
}

double training_flops_per_token(const ModelShape& m, double seq_len) {
  return 6.0 * matmul_params(m) + 12.0 * static_cast<double>(m.layers) * static_cast<double>(m.hidden) * seq_len;
}

StepPlan lower_training(const Scenario& sc) {
  const TrainingConfig& tc = *sc.training;
  const ModelShape& m = sc.model;
  const ParallelConfig& par = sc.parallel;
  StepPlan plan;
  Pass p = base_pass(sc);
  p.gemm_dtype = tc.precision;
  const bool wide = tc.precision == DType::kFp32 || tc.precision == DType::kTf32;
  p.e = wide ? 4.0 : 2.0;  // fp8 training keeps activations in 16-bit (Transformer Engine casts per GEMM)
  p.w = tc.precision == DType::kFp8 ? 1.0 : p.e;
  p.attn_dtype = tc.precision == DType::kFp8 ? DType::kBf16 : tc.precision;
  p.kv_bytes = p.e;
  p.seqs = static_cast<double>(tc.micro_batch);
  p.q_len = static_cast<double>(tc.seq_len);
  p.kv_len = p.q_len;
  p.flash = tc.flash_attention;
  p.tp = par.tensor;
  p.sp = par.sequence;

  // One micro-batch through one pipeline stage: the last one, which holds the output layer and
  // is the slowest; with a single stage it also holds the embedding.
  const double layers = std::ceil(static_cast<double>(m.layers) / par.pipeline);
  const double h = static_cast<double>(m.hidden);
  const double v = static_cast<double>(m.vocab);
  const double t = p.tokens();
  Builder b(plan.ops);
  if (par.pipeline == 1) {
    b.scope(Scope::kEmbedding);
    b.mem("embedding", Phase::kForward, p.replicated(2.0 * t * h * p.e), 1);
  }
  b.scope(Scope::kLayer);
  layer_forward(b, p, Phase::kForward, layers);
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
  if (tc.recompute == Recompute::kFull) {
    layer_forward(b, p, Phase::kRecompute, layers);
  } else if (tc.recompute == Recompute::kSelective && !tc.flash_attention) {
    b.attention(p, Phase::kRecompute, layers);
  }
  layer_backward(b, p, layers);
  if (par.pipeline == 1) {
    b.scope(Scope::kEmbedding);
    // Embedding backward: scatter-add of dy into fp32 gradient rows (read-modify-write).
    b.mem("embedding.bwd", Phase::kBackward, p.replicated(t * h * (p.e + 8.0)), 1);
  }

  b.scope(Scope::kOptimizer);
  b.mem("optimizer", Phase::kOptimizer, optimizer_step_bytes(m, tc, par).value(), 1.0);

  plan.micro_batches = static_cast<double>(tc.global_batch) / (static_cast<double>(tc.micro_batch) * par.data);
  // Tokens that pass through this GPU's model shard per step (all of its data-parallel rank's).
  plan.tokens_per_gpu = t * plan.micro_batches;
  const double gpus = static_cast<double>(par.tensor) * par.pipeline * par.data;
  plan.model_flops_per_gpu = Flop(training_flops_per_token(m, p.q_len) * static_cast<double>(tc.global_batch) *
                                  static_cast<double>(tc.seq_len) / gpus);
  double recompute = 0;
  for (const Op& op : plan.ops) {
    if (op.phase == Phase::kRecompute) {
      recompute += op.flops.value() * op.count;
    }
  }
  plan.hardware_flops_per_gpu = plan.model_flops_per_gpu + Flop(recompute * plan.micro_batches);
  return plan;
}

namespace {
Pass inference_pass(const Scenario& sc) {
  const InferenceConfig& ic = *sc.inference;
  Pass p = base_pass(sc);
  p.gemm_dtype = ic.weight_precision;
  p.attn_dtype = ic.weight_precision == DType::kFp8 ? DType::kFp16 : ic.weight_precision;
  p.e = 2.0;
  p.w = ic.weight_bytes;
  p.kv_bytes = ic.kv_bytes;
  p.seqs = static_cast<double>(ic.batch);
  return p;
}

void forward_pass(StepPlan& plan, const Scenario& sc, const Pass& p) {
  const ModelShape& m = sc.model;
  const double h = static_cast<double>(m.hidden);
  const double t = p.tokens();
  Builder b(plan.ops);
  b.mem("embedding", Phase::kForward, 2.0 * t * h * p.e, 1.0);
  layer_forward(b, p, Phase::kForward, static_cast<double>(m.layers));
  b.mem("kv_cache.write", Phase::kForward, t * 2.0 * static_cast<double>(m.kv_dim()) * p.kv_bytes,
        static_cast<double>(m.layers));
  b.mem("final_norm", Phase::kForward, 2.0 * p.seqs * h * p.e, 1.0);
  // Only the last position of each sequence needs logits.
  b.gemm("logits", Phase::kForward, p.gemm_dtype, p.seqs, static_cast<double>(m.vocab), h, 1.0, p.e, p.w, p.e);
  plan.tokens_per_gpu = t;
  double flops = 0;
  for (const Op& op : plan.ops) {
    flops += op.flops.value() * op.count;
  }
  plan.model_flops_per_gpu = Flop(flops);
  plan.hardware_flops_per_gpu = Flop(flops);
}
}  // namespace

StepPlan lower_prefill(const Scenario& sc) {
  Pass p = inference_pass(sc);
  p.q_len = static_cast<double>(sc.inference->prompt_tokens);
  p.kv_len = p.q_len;
  StepPlan plan;
  forward_pass(plan, sc, p);
  return plan;
}

StepPlan lower_decode(const Scenario& sc, double context) {
  Pass p = inference_pass(sc);
  p.q_len = 1.0;
  p.kv_len = std::max(1.0, context);
  p.causal_square = false;
  StepPlan plan;
  forward_pass(plan, sc, p);
  return plan;
}

}  // namespace gpusim
