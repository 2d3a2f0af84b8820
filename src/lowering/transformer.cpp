// Lowering of a dense transformer into per-pass kernels (FLOP and byte rules in
// include/gpusim/lowering.hpp).
#include <algorithm>
#include <cmath>

#include "gpusim/lowering.hpp"
#include "lowering/builder.hpp"

namespace gpusim::lowering {
namespace {

using workload::FfnKind;
using workload::ModelShape;
using workload::NormKind;
using workload::PositionKind;
using workload::Recompute;

// Sequence parallelism on batch-major [b, s, h] activations gathers and scatters along the
// sequence dimension, while NCCL concatenates along dimension 0: PyTorch's functional collectives
// re-lay the tensor out with a chunk + cat copy of the full b·s·h tensor (read and write) after
// each all-gather and before each reduce-scatter [pytorch-functional-collectives] (a view when
// b = 1 in later releases). Megatron's [s, b, h] needs none. A recompute that redoes half the
// matmuls (`share` 0.5) redoes half the collectives, as physics::parallel_comm counts them.
void relayout(Builder& b, const PassShape& p, Phase ph, double share) {
  if (p.relayout) {
    b.mem("tp.relayout", ph, 2.0 * p.tokens() * static_cast<double>(p.m->hidden) * p.e, share);
  }
}

// One layer's forward. `gemm_share` of each matmul runs (torchtitan's per-op recompute redoes
// every second one) and the attention kernel only `with_attention`.
void layer_forward(Builder& b, const PassShape& p, Phase ph, double gemm_share = 1.0, bool with_attention = true) {
  const ModelShape& m = *p.m;
  const auto [h, kv, f, f_in, t] = LayerDims(p);
  const workload::Fusion& fu = p.fusion;
  // Two norms per layer, one kernel each (read x, write y); with norm_residual each also does the
  // residual add that precedes it (read x and the branch, write the sum and y).
  if (p.weight_cast > 0) {
    // autocast with fp32 weights: each GEMM reads its fp32 weight and writes the 16-bit copy
    b.mem("weight.cast", ph, p.weight_cast * (4.0 + p.e) / p.tp, 1);
  }
  if (fu.norm_residual) {
    b.mem("add_norm", ph, p.replicated(4.0 * t * h * p.e), 2);
  } else if (p.composite && m.norm == NormKind::kRmsNorm) {
    // x.float(), pow, mean, mul by rsqrt, cast back, mul by the weight [hf-transformers-llama-eager]:
    // (e + 4) + 8 + 4 + 8 + (4 + e) + 2e bytes per element over six kernels.
    b.mem_kernels("norm", ph, p.replicated(t * h * (28.0 + 4.0 * p.e)), 2, 6);
  } else {
    b.reduce("norm", ph, p.replicated(t * h * (p.e_res + p.e_norm)), 2);
    if (p.e_norm != p.e) {
      b.mem("norm.cast", ph, p.replicated(t * h * (p.e_norm + p.e)), 2);  // autocast: fp32 out, 16-bit for the GEMM
    }
  }
  relayout(b, p, ph, gemm_share);  // all-gather before the QKV projection
  attention_in(b, p, ph, gemm_share);
  if (m.position == PositionKind::kRope && !fu.rope) {
    if (p.composite) {
      // q·cos + rotate_half(q)·sin for q and k: neg (1 pass), cat (2), two muls (3 each), add (3)
      // over five kernels each [hf-transformers-llama-eager]
      b.mem_kernels("rope", ph, 12.0 * t * (h + kv) * p.e / p.tp, 1, 10);
    } else {
      b.mem("rope", ph, 2.0 * t * (h + kv) * p.e / p.tp, 1);
    }
  }
  if (with_attention) {
    b.attention(p, ph, 1);
  }
  attention_out(b, p, ph, gemm_share);
  relayout(b, p, ph, gemm_share);  // reduce-scatter after the output projection
  if (p.dropout) {
    // After each branch (attention output, FFN output): read x, write y and a one-byte mask.
    b.mem("dropout", ph, p.replicated(t * h * (2.0 * p.e + 1.0)), 2);
  }
  if (!fu.norm_residual) {
    b.mem("residual", ph, p.replicated(t * h * (2.0 * p.e_res + p.e)),
          2);  // two adds: read the stream and the branch, write the stream
  }
  relayout(b, p, ph, gemm_share);  // all-gather before the FFN
  ffn_forward(b, p, ph, gemm_share);
  relayout(b, p, ph, gemm_share);  // reduce-scatter after the FFN
}

// Bias gradients: the sum of dy over the tokens, one reduction pass per biased linear in PyTorch's
// autograd (a separate reduce kernel after each linear's backward) and in llm.c
// (matmul_backward_bias), unless the weight-gradient GEMM's epilogue produces it (cuBLASLt BGRADB,
// Transformer Engine) [gpusim-h100-profile-2026-11]. Column-parallel outputs are split across the
// tensor-parallel ranks; row-parallel outputs are whole (split by sequence parallelism).
void bias_grads(Builder& b, const PassShape& p) {
  if (!p.m->bias || p.fusion.bias_grad || p.frozen()) {
    return;
  }
  const auto [h, kv, f, f_in, t] = LayerDims(p);
  b.reduce("bias.grad", Phase::kBackward, t * (h + 2.0 * kv + f_in) * p.e / p.tp / 2.0, 2);  // QKV, FFN up: read dy
  b.reduce("bias.grad", Phase::kBackward, p.replicated(t * h * p.e), 2);  // attention out and FFN down
}

// Norm weight gradients as a second pass over the norm's input and dy (PyTorch's native LayerNorm
// backward runs GammaBetaBackward after the input gradient; Inductor reduces them apart)
// [gpusim-h100-profile-2026-11]; a fused norm backward (llm.c, Transformer Engine) has none.
// Composite RMSNorm's autograd chain already counts its weight product.
void norm_weight_grads(Builder& b, const PassShape& p, const std::string& name, double count) {
  if (p.fusion.norm_backward || (p.composite && p.m->norm == NormKind::kRmsNorm) || p.frozen()) {
    return;
  }
  const double h = static_cast<double>(p.m->hidden);
  b.reduce(name, Phase::kBackward, p.replicated(p.tokens() * h * (p.e_res + p.e)), count);
}

void layer_backward(Builder& b, const PassShape& p) {
  const ModelShape& m = *p.m;
  const auto [h, kv, f, f_in, t] = LayerDims(p);
  const workload::Fusion& fu = p.fusion;
  const Phase ph = Phase::kBackward;
  bias_grads(b, p);
  norm_weight_grads(b, p, "norm.weight_grad", 2);
  if (p.dropout) {
    b.mem("dropout.bwd", ph, p.replicated(t * h * (2.0 * p.e + 1.0)), 2);  // read dy and the mask, write dx
  }
  relayout(b, p, ph, 1.0);  // the FFN's reduce-scatter: an all-gather of its gradient
  ffn_backward(b, p);
  relayout(b, p, ph, 1.0);  // the FFN's all-gather: a reduce-scatter of its gradient
  relayout(b, p, ph, 1.0);  // the attention's reduce-scatter: an all-gather
  attention_out(b, p, ph, 1);
  b.attention(p, ph, 1);
  if (m.position == PositionKind::kRope && !fu.rope) {
    if (p.composite) {
      b.mem_kernels("rope.bwd", ph, 12.0 * t * (h + kv) * p.e / p.tp, 1, 8);
    } else {
      b.mem("rope.bwd", ph, 2.0 * t * (h + kv) * p.e / p.tp, 1);
    }
  }
  attention_in(b, p, ph, 1);
  relayout(b, p, ph, 1.0);  // the attention's all-gather: a reduce-scatter
  if (fu.norm_residual) {
    // norm backward with the residual gradient sum: read x, dy and the branch gradient, write dx
    b.mem("add_norm.bwd", ph, p.replicated(4.0 * t * h * p.e), 2);
  } else if (p.composite && m.norm == NormKind::kRmsNorm) {
    // autograd through the six primitives: about twice the forward's traffic
    b.mem_kernels("norm.bwd", ph, p.replicated(2.0 * t * h * (28.0 + 4.0 * p.e)), 2, 8);
    b.mem("residual.bwd", ph, p.replicated(t * h * (2.0 * p.e_res + p.e)), 2);
  } else {
    b.mem("norm.bwd", ph, p.replicated(t * h * (2.0 * p.e_res + p.e_norm)), 2);  // read x and dy, write dx
    if (p.e_norm != p.e) {
      b.mem("norm.cast.bwd", ph, p.replicated(t * h * (p.e_norm + p.e)), 2);
    }
    b.mem("residual.bwd", ph, p.replicated(t * h * (2.0 * p.e_res + p.e)), 2);  // gradient sums at the branches
  }
  if (p.weight_cast > 0) {
    // the weight casts' backward: 16-bit gradient to fp32, accumulated into .grad (read, add, write)
    b.mem("weight.cast.bwd", ph, p.weight_cast * (p.e + 8.0) / p.tp, 1);
  }
}

// Bytes an optimizer step moves per parameter. A fused kernel reads the parameter (its fp32 master
// copy when there is one), the gradient and the moments once and writes the parameter and the
// moments once; with a master copy it also writes the 16-bit working copy back, and reads an fp32
// gradient (autocast's fp32 .grad, FSDP's fp32 flat-parameter gradient, Megatron's main_grad).
// PyTorch's foreach and per-tensor implementations run one kernel per elementwise operation, each a
// pass over memory of its own (AdamW: lerp m, mul v, addcmul v, decay w, sqrt, div, add eps,
// addcdiv w [pytorch-adamw]), each element as wide as the widest of parameter and state.
// bitsandbytes' optimizers (8-bit, paged) are one fused kernel per tensor [dettmers-8bit-optim-2022].
struct OptimizerPasses {
  double bytes_per_param = 0;
  double operations = 1;  // elementwise operations, each a kernel (fused: 1)
};

OptimizerPasses optimizer_passes(const workload::Training& t, const workload::ParameterBytes& pb,
                                 workload::OptimizerImpl impl) {
  const double param = pb.master > 0 ? pb.master : pb.weight;
  const double grad = pb.master > 0 ? 4.0 : pb.gradient;
  const double copy = pb.master > 0 ? pb.weight : 0.0;
  const double moments = pb.moments * pb.moment;
  const bool bnb = t.states() == workload::StatePrecision::k8bit || t.paged_optimizer;
  if (impl == workload::OptimizerImpl::kFused || bnb) {
    return {2.0 * param + grad + 2.0 * moments + copy, 1};
  }
  const double element = std::max(param, pb.moment);
  switch (t.optimizer) {
    case workload::Optimizer::kAdamW:
    case workload::Optimizer::kAdamW8bit:
      return {20.0 * element + copy, 8};
    case workload::Optimizer::kSgd:
      return {8.0 * element + copy, 3};
    case workload::Optimizer::kAdafactor:
      return {8.0 * element + copy, 6};
  }
  return {};
}

// Parameter tensors per transformer layer: the projections (QKV as one, or Q, K, V and gate, up
// apart for SwiGLU models as the Llama checkpoints store them), two norms, biases.
double tensors_per_layer(const ModelShape& m) {
  if (m.family == workload::Family::kResNet) {
    return workload::resnet_param_tensors(m.resnet);  // its one layer holds them all
  }
  const double matrices = m.ffn == FfnKind::kSwiglu ? 7.0 : 4.0;
  const double norms = m.norm == workload::NormKind::kLayerNorm ? 4.0 : 2.0;
  return matrices + norms + (m.bias ? matrices : 0.0);
}

// Kernels one multi-tensor operation takes: PyTorch's multi_tensor_apply launches chunks of 65,536
// elements, at most 320 blocks per launch, and at most 110, 64, 48 or 36 tensors per list for one
// to four tensor lists [pytorch-multi-tensor-apply]: fused AdamW passes four lists (parameters,
// gradients, two moments), a foreach elementwise operation two on average.
double multi_tensor_launches(double elements, double tensors, bool fused) {
  constexpr double kChunk = 65536, kBlocks = 320;
  const double per_launch = fused ? 36.0 : 64.0;
  return std::max(std::ceil(elements / (kChunk * kBlocks)), std::ceil(tensors / per_launch));
}

}  // namespace

// The dense FFN: GELU can run in the up-projection's epilogue; SwiGLU combines two GEMM outputs
// in a pass (as composite ops: silu(gate), then its product with up, 5 f passes over two kernels).
void dense_ffn_forward(Builder& b, const PassShape& p, Phase ph, double gemm_share, double weight) {
  const ModelShape& m = *p.m;
  const auto [h, kv, f, f_in, t] = LayerDims(p);
  if (m.ffn == FfnKind::kSwiglu && !p.fusion.projections && !p.frozen()) {
    b.linear("ffn.up", p, ph, f, h, 2.0 * gemm_share * weight, Split::kColumn);  // gate and up apart
  } else {
    b.linear("ffn.up", p, ph, f_in, h, gemm_share * weight, Split::kColumn);
  }
  if (m.ffn == FfnKind::kSwiglu && p.composite) {
    b.mem_kernels("swiglu", ph, 5.0 * f * t * p.e / p.tp, weight, 2);
  } else if (m.ffn == FfnKind::kSwiglu || !p.fusion.bias_activation) {
    b.mem(m.ffn == FfnKind::kSwiglu ? "swiglu" : "gelu", ph, (f_in + f) * t * p.e / p.tp, weight);
  }
  b.linear("ffn.down", p, ph, h, f, gemm_share * weight, Split::kRow);
}

// Activation backward reads its input and dy, writes dx (GELU's can run in the dgrad epilogue);
// composite SwiGLU: the product's backward (5 f) and silu's (3 f) over three kernels.
void dense_ffn_backward(Builder& b, const PassShape& p, double weight) {
  const ModelShape& m = *p.m;
  const auto [h, kv, f, f_in, t] = LayerDims(p);
  const Phase ph = Phase::kBackward;
  b.linear("ffn.down", p, ph, h, f, weight, Split::kRow);
  if (m.ffn == FfnKind::kSwiglu && p.composite) {
    b.mem_kernels("swiglu.bwd", ph, 8.0 * f * t * p.e / p.tp, weight, 3);
  } else if (m.ffn == FfnKind::kSwiglu || !p.fusion.bias_activation) {
    b.mem(m.ffn == FfnKind::kSwiglu ? "swiglu.bwd" : "gelu.bwd", ph, (2.0 * f_in + f) * t * p.e / p.tp, weight);
  }
  if (m.ffn == FfnKind::kSwiglu && !p.fusion.projections && !p.frozen()) {
    b.linear("ffn.up", p, ph, f, h, 2.0 * weight, Split::kColumn);  // gate and up apart
  } else {
    b.linear("ffn.up", p, ph, f_in, h, weight, Split::kColumn);
  }
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
  const double in = units::bytes_per_element(dtype);
  const bool low_float = dtype == DType::kFp8 || dtype == DType::kFp4;  // these write 16-bit outputs
  return gemm_op("gemm", Phase::kForward, dtype, m, n, k, in, in, low_float ? 2.0 : in);
}

Op flash_attention_op(const AttentionShape& s, Phase phase, DType dtype) {
  const bool bwd = phase == Phase::kBackward;
  Op op;
  op.name = bwd ? "attention.flash.bwd" : "attention.flash";
  op.kind = OpKind::kAttention;
  op.role = OpRole::kAttention;
  op.phase = phase;
  op.dtype = dtype;
  const Flop fwd = workload::attention_matmul_flops(s.seqs, s.q_len, s.kv_len, s.hidden, s.mask);
  op.flops = bwd ? fwd * workload::kAttentionBackwardFactor : fwd;
  const double t = s.seqs * s.q_len;
  const double kv_read = s.seqs * s.kv_len * 2.0 * s.kv_width * s.kv_bytes;
  op.bytes = Bytes(bwd ? (4.0 * t * s.hidden * s.e + 2.0 * kv_read) : (2.0 * t * s.hidden * s.e + kv_read));
  return op;
}

Op optimizer_op(const ModelShape& m, const workload::Training& t, const workload::Layout& layout,
                const workload::Runtime& rt) {
  return optimizer_op(m, t, workload::model_counts(m, t), layout, rt);
}

Op optimizer_op(const ModelShape& m, const workload::Training& t, const workload::ModelCounts& counts,
                const workload::Layout& layout, const workload::Runtime& rt) {
  Op op;
  op.name = "optimizer";
  op.kind = OpKind::kMemoryBound;
  op.phase = Phase::kOptimizer;
  op.scope = Scope::kOptimizer;
  if (t.offload_optimizer != workload::Offload::kNone) {
    op.count = 0;  // the step runs on the host (physics/offload.cpp)
    return op;
  }
  const workload::ParamRoles& roles = counts.roles;
  // ZeRO >= 1 shards the optimizer over the data ranks: N/(t·p·d) with or without experts; without
  // it each rank updates its own 1/ep of the routed experts.
  const double params_per_rank = layout.zero >= 1 || t.adapters()
                                     ? roles.trainable / (static_cast<double>(layout.tensor) * layout.pipeline)
                                     : workload::rank_params(counts, layout);
  const double shard = layout.zero >= 1 ? static_cast<double>(layout.replicas()) : 1.0;
  const double elements = params_per_rank / shard;
  const double stage_layers = std::ceil(static_cast<double>(m.layers) / layout.pipeline);
  const double tensors =
      t.adapters() ? roles.adapter_tensors / static_cast<double>(m.layers) * stage_layers
                   : tensors_per_layer(m) * stage_layers + (m.family == workload::Family::kResNet ? 0.0 : 3.0);
  // An fp32 model (fp32 training, or autocast over unsharded fp32 parameters) has no 16-bit copy to
  // write back; pure 16-bit training moves 16-bit parameters and gradients.
  const OptimizerPasses passes = optimizer_passes(t, workload::precision_policy(t, layout, rt), rt.optimizer);
  // bitsandbytes launches its optimizer kernel once per parameter tensor [dettmers-8bit-optim-2022];
  // so does the step in the backward pass, one optimizer per parameter [torchtune-memory-docs].
  const bool per_tensor = rt.optimizer == workload::OptimizerImpl::kPerTensor ||
                          t.states() == workload::StatePrecision::k8bit || t.paged_optimizer || t.optimizer_in_backward;
  const double kernels =
      passes.operations *
      (per_tensor ? tensors
                  : multi_tensor_launches(elements, tensors, rt.optimizer == workload::OptimizerImpl::kFused));
  op.bytes = Bytes(elements * passes.bytes_per_param / kernels);
  op.count = kernels;
  return op;
}

std::vector<Op> lower_training(const ModelShape& m, const workload::Training& tc, const workload::Layout& layout,
                               const workload::Runtime& rt) {
  if (m.family == workload::Family::kResNet) {
    return lower_resnet(m, tc.precision, static_cast<double>(layout.micro_batch), true,
                        rt.autocast && tc.master_weights, tc.memory_format);
  }
  std::vector<Op> ops;
  PassShape p;
  p.m = &m;
  p.gemm_dtype = tc.precision;
  p.e = units::is_wide(tc.precision) ? 4.0 : 2.0;  // fp8 training keeps activations in 16-bit (TE casts per GEMM)
  p.w = tc.precision == DType::kFp8 ? 1.0 : p.e;
  p.attn_dtype = tc.precision == DType::kFp8 ? DType::kBf16 : tc.precision;
  p.kv_bytes = p.e;
  p.seqs = static_cast<double>(layout.micro_batch);
  // Context parallelism: a rank's queries are 1/c of each sequence (two chunks, one from each end,
  // so that causal work balances) attending over all of its keys as the ring brings them
  // [megatron-context-parallel].
  p.kv_len = static_cast<double>(tc.seq_len);
  p.q_len = p.kv_len / layout.context;
  p.flash = rt.flash_attention();
  p.flash3 = rt.attention == workload::AttentionKernel::kFlash3;
  p.attention_forward = rt.attention_forward;
  p.attention_backward = rt.attention_backward;
  p.fusion = rt.fusion;
  p.tp = layout.tensor;
  p.sp = layout.sequence;
  p.relayout = layout.tensor > 1 && layout.sequence && layout.micro_batch > 1 &&
               rt.activation_layout == workload::ActivationLayout::kBatchMajor;
  p.dropout = m.dropout > 0;
  p.composite = rt.composite_ops;
  p.tuning = &tc;
  p.ep = layout.expert;
  if (m.moe) {
    p.expert_load = m.moe->capacity_factor > 0 ? m.moe->capacity_factor : layout.expert_imbalance;
  }
  if (rt.autocast && !units::is_wide(tc.precision)) {
    p.e_norm = 4.0;
    // ZeRO-3 / FSDP gather 16-bit parameters, LoRA's frozen base is loaded in 16 bits, and pure
    // 16-bit training has no fp32 parameters: the stream stays 16-bit.
    if (layout.zero < 3 && !tc.adapters() && tc.master_weights) {
      p.e_res = 4.0;
      p.weight_cast = workload::count_params(m).per_layer;
    }
  } else {
    p.e_norm = p.e_res = p.e;
  }

  const double h = static_cast<double>(m.hidden);
  const double v = static_cast<double>(m.vocab);
  const double t = p.tokens();
  Builder b(ops);
  b.scope(Scope::kEmbedding);
  b.mem("embedding", Phase::kForward, p.replicated(2.0 * t * h * p.e), 1);
  b.scope(Scope::kLayer);
  layer_forward(b, p, Phase::kForward);
  b.scope(Scope::kHead);
  b.reduce("final_norm", Phase::kForward, p.replicated(t * h * (p.e_res + p.e_norm)), 1);
  b.role(OpRole::kLogits);
  b.linear("logits", p, Phase::kForward, v, h, 1, Split::kColumn);
  // Softmax-cross-entropy over the rank's vocabulary shard. Fused: two reads of the logits
  // forward, one read and one write backward. Unfused (log_softmax, then NLL): log-probabilities
  // written and read forward; backward writes the NLL gradient and the softmax backward reads it
  // with the log-probabilities and writes the logits' gradient.
  if (p.fusion.cross_entropy) {
    b.role(OpRole::kLoss);
    b.mem("cross_entropy", Phase::kForward, 2.0 * t * v * p.e / p.tp, 1);
    b.mem("cross_entropy.bwd", Phase::kBackward, 2.0 * t * v * p.e / p.tp, 1);
  } else {
    if (p.e_norm != p.e) {
      // autocast runs the loss in fp32: the logits are cast up first, and their gradient back down
      b.mem("logits.cast", Phase::kForward, t * v * (p.e + p.e_norm) / p.tp, 1);
      b.mem("logits.cast.bwd", Phase::kBackward, t * v * (p.e + p.e_norm) / p.tp, 1);
    }
    b.role(OpRole::kLoss);
    b.mem("cross_entropy", Phase::kForward, 3.0 * t * v * p.e_norm / p.tp, 1);
    b.mem("cross_entropy.bwd", Phase::kBackward, 2.0 * t * v * p.e_norm / p.tp, 2);
  }
  b.role(OpRole::kLogits);
  b.linear("logits", p, Phase::kBackward, v, h, 1, Split::kColumn);
  b.role(OpRole::kOther);
  b.mem("final_norm.bwd", Phase::kBackward, p.replicated(3.0 * t * h * p.e), 1);
  norm_weight_grads(b, p, "final_norm.weight_grad", 1);
  b.scope(Scope::kLayer);
  if (layout.recompute == Recompute::kFull) {
    layer_forward(b, p, Phase::kRecompute);
  } else if (layout.recompute == Recompute::kOp) {
    layer_forward(b, p, Phase::kRecompute, 0.5, false);
  } else if (layout.recompute == Recompute::kSelective && !rt.flash_attention()) {
    b.attention(p, Phase::kRecompute, 1);
  }
  layer_backward(b, p);
  b.scope(Scope::kEmbedding);
  // Embedding backward: scatter-add of dy into fp32 gradient rows (read-modify-write); a frozen
  // embedding has no gradient.
  if (!p.frozen()) {
    b.mem("embedding.bwd", Phase::kBackward, p.replicated(t * h * (p.e + 8.0)), 1);
  }
  if (m.family == workload::Family::kVit) {
    adapt_vit(ops, m, p.gemm_dtype, p.e, p.seqs, true);
  }
  return ops;
}

std::vector<Op> lower_forward(const ModelShape& m, const workload::Inference& ic, const workload::Runtime& rt,
                              int tensor, double batch, double q_len, double kv_len) {
  std::vector<Op> ops;
  PassShape p;
  p.m = &m;
  p.fusion = rt.fusion;
  p.flash = rt.flash_attention();
  p.flash3 = rt.attention == workload::AttentionKernel::kFlash3;
  p.attention_forward = rt.attention_forward;
  p.gemm_dtype = ic.weight_precision;
  // fp8 and fp4 weights feed fp8/fp4 GEMMs; attention runs in fp16 over the KV cache.
  const bool low_float = ic.weight_precision == DType::kFp8 || ic.weight_precision == DType::kFp4;
  p.attn_dtype = low_float ? DType::kFp16 : ic.weight_precision;
  p.e = 2.0;
  p.w = ic.weight_bytes;
  p.kv_bytes = ic.kv_bytes;
  p.seqs = batch;
  p.q_len = q_len;
  p.kv_len = std::max(1.0, kv_len);
  p.causal_square = q_len > 1.0;  // decode attends one new query over the whole cache
  p.composite = rt.composite_ops;
  p.tp = tensor;
  if (rt.autocast) {  // fp32 activations (norms, residual stream, softmax), 16-bit GEMM inputs
    p.e_norm = p.e_res = 4.0;
  }
  const double h = static_cast<double>(m.hidden);
  const double t = p.tokens();
  Builder b(ops);
  b.scope(Scope::kEmbedding);
  b.mem("embedding", Phase::kForward, 2.0 * t * h * p.e, 1);
  b.scope(Scope::kLayer);
  layer_forward(b, p, Phase::kForward);
  // Each rank writes its KV heads (a head is replicated when tensor > kv_heads).
  // MLA caches its latent and rotary key on every rank.
  const double kv_width = m.cached_kv_width(p.tp);
  b.role(OpRole::kKvWrite);
  b.mem("kv_cache.write", Phase::kForward, t * 2.0 * kv_width * p.kv_bytes, 1);
  b.role(OpRole::kOther);
  b.scope(Scope::kHead);
  b.mem("final_norm", Phase::kForward, 2.0 * p.seqs * h * p.e, 1);
  // Only the last position of each sequence needs logits; the vocabulary is split across ranks.
  b.role(OpRole::kLogits);
  b.gemm("logits", Phase::kForward, p.gemm_dtype, p.seqs, static_cast<double>(m.vocab) / p.tp, h, 1, p.e, p.w, p.e);
  b.role(OpRole::kOther);
  for (Op& op : ops) {
    if (op.kind == OpKind::kGemm) {
      op.inflight = rt.gemv_inflight;
    }
  }
  if (m.family == workload::Family::kVit) {
    adapt_vit(ops, m, p.gemm_dtype, p.e, p.seqs, false);
  }
  // Weights stored below their compute width (int8/int4 and block formats): the runtime's
  // quantized matmul path (lowering/quantized.cpp).
  if (ic.weight_bytes < units::bytes_per_element(ic.weight_precision)) {
    quantized_matmuls(ops, rt, p.w);
  }
  return ops;
}

}  // namespace gpusim::lowering
