// The kernel builder the lowering files share (library-internal): what one pass over a layer
// needs to know, and the GEMM, memory-pass and attention ops it adds (rules in
// include/gpusim/lowering.hpp).
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "gpusim/lowering.hpp"

namespace gpusim::lowering {

using workload::ModelShape;

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
  bool flash3 = false;
  double attention_forward = 1.0;  // the runtime's flash kernel, of the architecture's efficiency
  double attention_backward = 1.0;
  workload::Fusion fusion;
  bool causal_square = true;  // training/prefill with causal mask: half the score matrix
  double tp = 1;              // tensor-parallel degree: heads, FFN columns and vocabulary are split
  bool sp = false;            // sequence parallelism: norms, residuals and dropout split too
  bool dropout = false;       // training with dropout: a mask kernel after each branch and on the scores
  double e_norm = 2;          // bytes per element of a norm's output and of the loss (4 under autocast)
  double e_res = 2;           // bytes per element of the residual stream (4 under autocast with fp32 weights)
  double weight_cast = 0;     // parameters per layer cast fp32 -> 16-bit per micro-batch (autocast, fp32 weights)
  bool composite = false;     // RMSNorm, RoPE and SwiGLU as chains of primitive ops (Hugging Face eager code)
  bool relayout = false;      // sequence-parallel gathers and scatters copy their batch-major tensor
  double ep = 1;              // expert-parallel ranks: each holds experts / ep of a MoE layer's experts
  double expert_load = 1;     // rows of this rank's grouped GEMMs over the mean (imbalance or capacity)
  const workload::Training* tuning = nullptr;  // LoRA / QLoRA: frozen weights with adapters (null: all trained)
  [[nodiscard]] bool frozen() const { return tuning != nullptr && tuning->adapters(); }
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
  // Ops added from now on have role `r` (unless made with one of their own).
  void role(OpRole r) { role_ = r; }

  void add(Op op, double count) {
    op.count = count;
    op.scope = scope_;
    if (op.role == OpRole::kOther) {
      op.role = role_;
    }
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
    if (p.frozen()) {
      frozen_linear(name, p, ph, n, k, count, split);
      return;
    }
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
  // A frozen weight (LoRA [hu-lora-2021]): forward, and backward only its input gradient. QLoRA's
  // NF4 block matrices are dequantized to 16 bits before every GEMM that reads them (bitsandbytes
  // dequantize_4bit, then a 16-bit GEMM [dettmers-qlora-2023]): read 4.127 bits, write 16 per weight.
  // Targeted matrices add the adapter path y += s·B(A(x)): two thin GEMMs, the scaling and the add.
  void frozen_linear(const std::string& name, const PassShape& p, Phase ph, double n, double k, double count,
                     Split split) {
    const double t = p.tokens();
    const bool quantized = p.tuning->method == workload::Method::kQlora && role_ != OpRole::kLogits;
    if (quantized) {
      mem(name + ".dequant", ph, k * n * (workload::kNf4BytesPerParam + p.e), count);
    }
    if (ph == Phase::kBackward) {
      gemm(name + ".dgrad", ph, p.gemm_dtype, t, k, n, count, p.e, p.w, p.e);
    } else {
      gemm(name, ph, p.gemm_dtype, t, n, k, count, p.e, p.w, p.e);
    }
    const double r = static_cast<double>(p.tuning->lora_rank);
    for (auto [in, out] : adapter_shapes(*p.m, *p.tuning, name)) {
      // Column-parallel layers split B's outputs, row-parallel ones A's inputs.
      (split == Split::kRow ? in : out) /= p.tp;
      if (ph == Phase::kBackward) {
        mem(name + ".lora.scale", ph, 2.0 * t * out * p.e, count);
        gemm(name + ".lora_b.dgrad", ph, p.gemm_dtype, t, r, out, count, p.e, p.e, p.e);
        gemm(name + ".lora_b.wgrad", ph, p.gemm_dtype, r, out, t, count, p.e, p.e, p.e);
        gemm(name + ".lora_a.dgrad", ph, p.gemm_dtype, t, in, r, count, p.e, p.e, p.e);
        gemm(name + ".lora_a.wgrad", ph, p.gemm_dtype, in, r, t, count, p.e, p.e, p.e);
        mem(name + ".lora.dx_add", ph, 3.0 * t * in * p.e, count);
      } else {
        gemm(name + ".lora_a", ph, p.gemm_dtype, t, r, in, count, p.e, p.e, p.e);
        gemm(name + ".lora_b", ph, p.gemm_dtype, t, out, r, count, p.e, p.e, p.e);
        mem_kernels(name + ".lora.scale_add", ph, 5.0 * t * out * p.e, count, 2);  // y·s, then the add
      }
    }
  }
  // (in, out) of each adapter on the fused matrix `name` (qkv, attn.out, ffn.up, ffn.down).
  static std::vector<std::pair<double, double>> adapter_shapes(const ModelShape& m, const workload::Training& t,
                                                               const std::string& name) {
    const double h = static_cast<double>(m.hidden);
    const double kv = static_cast<double>(m.kv_dim());
    const double f = static_cast<double>(m.ffn_hidden);
    const bool attention = t.lora_targets != workload::LoraTargets::kQv;
    const bool ffn = t.lora_targets == workload::LoraTargets::kAllLinear;
    if (name == "qkv") {
      return attention ? std::vector<std::pair<double, double>>{{h, h}, {h, kv}, {h, kv}}
                       : std::vector<std::pair<double, double>>{{h, h}, {h, kv}};
    }
    if (name == "attn.out" && attention) {
      return {{h, h}};
    }
    if (name == "ffn.up" && ffn) {
      return m.ffn == workload::FfnKind::kSwiglu ? std::vector<std::pair<double, double>>{{h, f}, {h, f}}
                                                 : std::vector<std::pair<double, double>>{{h, f}};
    }
    if (name == "ffn.down" && ffn) {
      return {{f, h}};
    }
    return {};
  }
  void mem(const std::string& name, Phase ph, double bytes, double count) {
    Op op;
    op.name = name;
    op.kind = OpKind::kMemoryBound;
    op.phase = ph;
    op.bytes = Bytes(bytes);
    add(std::move(op), count);
  }
  // A memory-bound kernel that reduces before it writes (physics::kernel_time bounds its rate by
  // the bytes its SMs keep in flight).
  void reduce(const std::string& name, Phase ph, double bytes, double count) {
    mem(name, ph, bytes, count);
    ops_.back().reduction = true;
  }
  // `bytes` per instance spread over `kernels` kernels (count × kernels launches).
  void mem_kernels(const std::string& name, Phase ph, double bytes, double count, double kernels) {
    mem(name, ph, bytes / kernels, count * kernels);
  }
  void attention(const PassShape& p, Phase ph, double count) {
    const OpRole outer = role_;
    role_ = OpRole::kAttention;
    attention_ops(p, ph, count);
    role_ = outer;
  }

 private:
  void attention_ops(const PassShape& p, Phase ph, double count) {
    const ModelShape& m = *p.m;
    // Each tensor-parallel rank holds heads / tp query heads and its share of K/V heads (a K/V
    // head is replicated when there are fewer K/V heads than ranks).
    const double h = static_cast<double>(m.attention_width()) / p.tp;
    // MLA decode attends over the cached latent and rotary key, read whole by every rank
    // (kv_cache_width = 2·kv); training and prefill attend over the K and V they decompress.
    const double kv = m.mla && !p.causal_square
                          ? m.cached_kv_width(p.tp)
                          : m.kv_width_per_rank(static_cast<double>(m.attention_kv_width()), p.tp);
    const double heads = static_cast<double>(m.heads) / p.tp;
    const double hd = static_cast<double>(m.head_dim());
    const double mask = (m.causal && p.causal_square) ? 0.5 : 1.0;
    const bool bwd = ph == Phase::kBackward;
    if (p.flash) {
      Op op = flash_attention_op({p.seqs, p.q_len, p.kv_len, h, kv, mask, p.e, p.kv_bytes}, ph, p.attn_dtype);
      op.flash3 = p.flash3;
      op.attn_share = bwd ? p.attention_backward : p.attention_forward;
      add(std::move(op), count);
      if (bwd) {
        // FlashAttention's backward runs two passes of its own [flash-attention-bwd-preprocess]:
        // dot(dO, O) per row (read dO and O, write the fp32 row sums, zero the fp32 dQ accumulator)
        // before, and the fp32 dQ accumulator converted to the activation dtype after.
        const double t = p.tokens();
        mem("attention.flash.bwd.prep", ph, t * h * (2.0 * p.e + 4.0) + t * heads * 4.0, count);
        mem("attention.flash.bwd.dq", ph, t * h * (4.0 + p.e), count);
      }
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
    // Softmax reads the scores and writes the probabilities (fp32 under autocast, cast back for P·V).
    mem(bwd ? "attention.softmax.bwd" : "attention.softmax", ph,
        bwd ? 3.0 * scores * p.e_norm : scores * (p.e + p.e_norm) + (p.e_norm != p.e ? scores * (p.e_norm + p.e) : 0.0),
        count);
    if (p.dropout) {
      // On the probabilities: read p (or dp), write the result and a one-byte mask (or read it).
      mem(bwd ? "attention.dropout.bwd" : "attention.dropout", ph, scores * (2.0 * p.e + 1.0), count);
    }
    batched(bwd ? "attention.context.bwd" : "attention.context", bwd ? 2.0 : 1.0);
  }

  std::vector<Op>& ops_;
  Scope scope_ = Scope::kLayer;
  OpRole role_ = OpRole::kOther;
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

// The FFN of one layer (moe.cpp): the dense FFN, or for a mixture of experts its MoE layers and
// dense layers each weighted by their share of the layers (per-layer ops stand for the mean layer).
void ffn_forward(Builder& b, const PassShape& p, Phase ph, double gemm_share);
void ffn_backward(Builder& b, const PassShape& p);
// The dense FFN with every op's count scaled by `weight` (the share of layers it is in).
void dense_ffn_forward(Builder& b, const PassShape& p, Phase ph, double gemm_share, double weight);
void dense_ffn_backward(Builder& b, const PassShape& p, double weight);

// Attention's input projections (Q, K and V) and its output projection (mla.cpp): one QKV GEMM
// and an h x h output for multi-head attention, MLA's down and up projections under MLA.
void attention_in(Builder& b, const PassShape& p, Phase ph, double gemm_share);
void attention_out(Builder& b, const PassShape& p, Phase ph, double gemm_share);

}  // namespace gpusim::lowering
