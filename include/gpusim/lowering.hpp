// Lowering: a job on a layout becomes the kernels one GPU runs.
//
// Training: the ops of one micro-batch through one pipeline stage of one tensor-parallel rank —
// each transformer layer's ops once (Scope::kLayer, to be repeated for every layer of the stage),
// the embedding (first stage) and the output head (last stage) — and the optimizer step, once per
// optimizer step. Inference: one forward pass (the prefill of the prompts, or one decode step).
// Each GEMM is 2·m·n·k FLOPs; backward is dgrad + wgrad (2x forward); flash attention forward is
// attention_matmul_flops (4·b·s²·h, x0.5 causal) and backward 2.5x forward [dao-2023]. Tensor
// parallelism splits QKV and FFN-up by columns, attention-out and FFN-down by rows and the logits
// by vocabulary [shoeybi-2019]. DRAM bytes of memory-bound kernels assume one read of each input
// and one write of each output per kernel, unfused (eager PyTorch), with a fused
// softmax-cross-entropy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpusim/base.hpp"
#include "gpusim/units.hpp"
#include "gpusim/workload.hpp"

namespace gpusim::lowering {

enum class Phase { kForward, kBackward, kRecompute, kOptimizer };
inline constexpr base::Named<Phase> kPhaseNames[] = {{Phase::kForward, "fwd"},
                                                     {Phase::kBackward, "bwd"},
                                                     {Phase::kRecompute, "recompute"},
                                                     {Phase::kOptimizer, "optimizer"}};
constexpr const char* to_string(Phase p) { return base::name_in(kPhaseNames, p); }

enum class OpKind { kGemm, kAttention, kMemoryBound };
// Where an op sits in the model: a transformer layer (repeated per layer of the stage), the
// embedding (first pipeline stage), the output head (last stage), or the optimizer step.
enum class Scope { kLayer, kEmbedding, kHead, kOptimizer };
// What an op is for, where a consumer of the lowering decides on it (an op's name is for display):
// attention (its matmuls, softmax and dropout, or the fused kernel), the KV-cache write, the
// output logits and their casts, the loss.
enum class OpRole : std::uint8_t { kOther, kAttention, kKvWrite, kLogits, kLoss };

struct Op {
  std::string name;
  OpKind kind = OpKind::kMemoryBound;
  Phase phase = Phase::kForward;
  DType dtype = DType::kBf16;
  double m = 0, n = 0, k = 0;     // GEMM shape of one instance
  double ea = 0, eb = 0, ec = 0;  // GEMM bytes per element of A (m x k), B (k x n), C (m x n); 0 = use bytes
  double batch = 1;               // independent GEMMs in one kernel (batched attention scores)
  Flop flops;                     // per instance (all of `batch`)
  Bytes bytes;                    // DRAM traffic per instance
  double count = 1;               // instances per layer (kLayer) or per pass (other scopes)
  Scope scope = Scope::kLayer;
  OpRole role = OpRole::kOther;
  bool flash3 = false;       // attention: a FlashAttention-3-class kernel (Hopper warp specialization)
  double attn_share = 1.0;   // attention: share of the architecture's attention efficiency its kernel reaches
  double write_share = 0.5;  // memory-bound: share of `bytes` written (an elementwise pass: half)
  double stream = 1.0;       // GEMM: share of the bandwidth its operands stream at (a dequantizing kernel: less)
  Bytes inflight;            // GEMM at small M: bytes per SM its kernel keeps in flight (0: the architecture's)
  // GEMM on int8 tensor cores through mma.sync (llama.cpp's MMQ): its share of that rate; 0: a
  // GEMM of `dtype` at the architecture's GEMM efficiency.
  double int8_mma = 0;
  bool reduction = false;  // memory-bound: a kernel that reduces each row or column before it writes (a norm,
                           // a sum over the tokens), whose loads stop at the reduction: latency-bound
};

// A GEMM C[m,n] = A[m,k] · B[k,n] with ea/eb/ec bytes per element: 2·m·n·k FLOPs.
Op gemm_op(const std::string& name, Phase phase, DType dtype, double m, double n, double k, double ea, double eb,
           double ec);
// A standalone GEMM of `dtype` as a benchmark runs it (fp8 writes a 16-bit result).
Op benchmark_gemm(DType dtype, double m, double n, double k);

// A FlashAttention kernel over `seqs` sequences: `q_len` queries attending `kv_len` keys with
// `hidden` query width (all heads) and `kv_width` key/value width, `e` bytes per activation and
// `kv_bytes` per cached K/V element. Forward reads Q, K, V and writes O; backward reads Q, K, V,
// O, dO and writes dQ, dK, dV.
struct AttentionShape {
  double seqs = 1;
  double q_len = 1;
  double kv_len = 1;
  double hidden = 0;
  double kv_width = 0;
  double mask = 1;  // 0.5: causal square
  double e = 2;
  double kv_bytes = 2;
};
Op flash_attention_op(const AttentionShape& s, Phase phase, DType dtype);

// Training, one micro-batch of one tensor-parallel rank: one layer's ops (Scope::kLayer), the
// embedding's and the output head's. Which of them a pipeline stage runs, and how often, is the
// step model's business. Only the layout's tensor, sequence, micro_batch and recompute matter.
std::vector<Op> lower_training(const workload::ModelShape& m, const workload::Training& t,
                               const workload::Layout& layout, const workload::Runtime& rt);
// The optimizer step of one rank: its N/(t·p) parameters, sharded over data ranks by ZeRO >= 1,
// as the runtime's optimizer implementation runs it (count = kernels, bytes per kernel).
Op optimizer_op(const workload::ModelShape& m, const workload::Training& t, const workload::Layout& layout,
                const workload::Runtime& rt);
Op optimizer_op(const workload::ModelShape& m, const workload::Training& t, const workload::ModelCounts& counts,
                const workload::Layout& layout, const workload::Runtime& rt);
// A ResNet (lowering/resnet.cpp): `images` through the network in `precision`, forward only or
// forward and backward, every op Scope::kLayer of its one layer; `autocast`: fp32 parameters cast
// to 16 bits per forward; `format`: the activations' layout (NCHW adds cuDNN's transposes around
// each tensor-core convolution). lower_training dispatches here for Family::kResNet.
std::vector<Op> lower_resnet(const workload::ModelShape& m, DType precision, double images, bool training,
                             bool autocast, workload::MemoryFormat format = workload::MemoryFormat::kChannelsLast);
// A ViT (lowering/vit.cpp): the transformer's ops of `images` images with their embedding, loss
// and logits replaced by the patch projection and a classifier on the class token (and the KV-cache
// write dropped). lower_training and lower_forward call it for Family::kVit.
void adapt_vit(std::vector<Op>& ops, const workload::ModelShape& m, DType dtype, double e, double images,
               bool training);
// Inference: one forward pass of `batch` sequences with `q_len` new tokens each over a context of
// `kv_len` (prefill: q_len = kv_len = prompt; decode: q_len = 1) on one of `tensor` ranks (weights,
// heads, KV heads and the vocabulary split; norms and residuals replicated); layer ops once, as in
// training. Each sequence samples one token: the head runs on `batch` rows.
std::vector<Op> lower_forward(const workload::ModelShape& m, const workload::Inference& inf,
                              const workload::Runtime& rt, int tensor, double batch, double q_len, double kv_len);
// Weights stored below their compute width (lowering/quantized.cpp): every forward GEMM that reads
// `weight_bytes` per weight (the projections and the head, not attention) as the runtime's
// quantized matmul path runs it; a path's extra kernels are inserted before their GEMM.
void quantized_matmuls(std::vector<Op>& ops, const workload::Runtime& rt, double weight_bytes);

}  // namespace gpusim::lowering
