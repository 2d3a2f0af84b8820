// Workload: what is computed, independent of the hardware. The shape of a dense transformer and
// the parameters and FLOPs it implies; the job (training or inference, and the host input
// pipeline); the layout of the job on the GPUs (what `gpusim plan` searches); and the runtime's
// software choices.
//
// Parameter accounting follows the released GPT-2 and Llama configurations [radford-2019,
// touvron-2023]: per layer QKV h·(h + 2·kv_heads·head_dim) + output projection h² + FFN (2 or 3
// matrices of h × ffn_hidden) + two norms; token embedding V·h (twice when untied); learned
// positions max_seq·h; a final norm. Checks: GPT-2 124M = 124,439,808; Llama-2-7B = 6,738,415,616.
// Model FLOPs per training token follow PaLM [chowdhery-2022, App. B]: 6·N + 12·L·h·s, with N the
// parameters that take part in matrix multiplies and 12·L·h·s the two attention matmuls (Q·Kᵀ and
// P·V) forward and backward over the full s×s matrix.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpusim/base.hpp"
#include "gpusim/units.hpp"

namespace gpusim::workload {

enum class FfnKind { kGelu, kSwiglu };
inline constexpr base::Named<FfnKind> kFfnNames[] = {{FfnKind::kGelu, "gelu"}, {FfnKind::kSwiglu, "swiglu"}};
enum class NormKind { kLayerNorm, kRmsNorm };
inline constexpr base::Named<NormKind> kNormNames[] = {{NormKind::kLayerNorm, "layernorm"},
                                                       {NormKind::kRmsNorm, "rmsnorm"}};
enum class PositionKind { kLearned, kRope };
inline constexpr base::Named<PositionKind> kPositionNames[] = {{PositionKind::kLearned, "learned"},
                                                               {PositionKind::kRope, "rope"}};
enum class Optimizer { kAdamW, kSgd, kAdafactor };
inline constexpr base::Named<Optimizer> kOptimizerNames[] = {
    {Optimizer::kAdamW, "adamw"}, {Optimizer::kSgd, "sgd"}, {Optimizer::kAdafactor, "adafactor"}};
// selective: Megatron-LM's (attention scores and softmax) [korthikanti-2022]; op: torchtitan's
// per-op policy (every second matmul output and the attention output saved, all else recomputed)
// [torchtitan-source]; full: each layer's forward again from its input.
enum class Recompute { kNone, kSelective, kOp, kFull };
inline constexpr base::Named<Recompute> kRecomputeNames[] = {{Recompute::kNone, "none"},
                                                             {Recompute::kSelective, "selective"},
                                                             {Recompute::kOp, "op"},
                                                             {Recompute::kFull, "full"}};
constexpr const char* to_string(Recompute r) { return base::name_in(kRecomputeNames, r); }

// A mixture-of-experts FFN [shazeer-2017, fedus-2022]: a router (h x experts) picks top_k of
// `experts` routed experts per token, each a FFN of expert_ffn_hidden (the model's ffn kind); the
// shared experts (DeepSeekMoE [dai-2024], Qwen-MoE) run on every token, shared_ffn_hidden wide in
// all. The first dense_layers layers keep the dense FFN of ffn_hidden; after them every `every`-th
// layer is MoE and the others dense (DeepSeek's first_k_dense_replace and moe_layer_freq
// [deepseek-v3-config]). capacity_factor > 0: each expert computes a fixed c·tokens·top_k/experts
// rows (GShard/Switch padding [lepikhin-2020]); 0: dropless (Mixtral, DeepSeek-V3).
struct MoeShape {
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
  std::int64_t expert_ffn_hidden = 0;
  std::int64_t shared_ffn_hidden = 0;
  std::int64_t dense_layers = 0;
  std::int64_t every = 1;
  double capacity_factor = 0;
};

// Multi-head latent attention (DeepSeek-V2/V3 [deepseek-v2-2024]): queries through a rank
// q_lora_rank bottleneck (0: projected directly), keys and values from a shared kv_lora_rank
// latent plus one rotary key of qk_rope_head_dim shared by all heads; per head qk_nope_head_dim +
// qk_rope_head_dim for Q·Kᵀ and v_head_dim for P·V. The KV cache holds the latent and the rotary
// key: kv_lora_rank + qk_rope_head_dim elements per token and layer.
struct MlaShape {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

struct ModelShape {
  std::string name;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t ffn_hidden = 0;
  FfnKind ffn = FfnKind::kGelu;
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  bool causal = true;
  NormKind norm = NormKind::kLayerNorm;
  bool bias = false;
  PositionKind position = PositionKind::kRope;
  std::int64_t max_seq = 0;
  double dropout = 0;           // training dropout probability (hidden, attention probabilities, embeddings)
  std::optional<MoeShape> moe;  // absent: every layer has the dense FFN
  std::optional<MlaShape> mla;  // absent: multi-head (or grouped-query) attention

  [[nodiscard]] std::int64_t head_dim() const { return heads > 0 ? hidden / heads : 0; }
  [[nodiscard]] std::int64_t kv_dim() const { return kv_heads * head_dim(); }
  // Width of the FFN's first projection: gate and up for swiglu, up alone for gelu.
  [[nodiscard]] std::int64_t ffn_in() const { return ffn == FfnKind::kSwiglu ? 2 * ffn_hidden : ffn_hidden; }
  // Layers whose FFN is a mixture of experts (0 for a dense model) and the share of all layers they are.
  [[nodiscard]] std::int64_t moe_layers() const;
  [[nodiscard]] double moe_share() const {
    return layers > 0 ? static_cast<double>(moe_layers()) / static_cast<double>(layers) : 0.0;
  }
  // Width of Q (all heads) in Q·Kᵀ and of O in P·V, averaged: what attention's matmuls scale with
  // (hidden for multi-head attention; heads·(qk_nope + qk_rope + v)/2 under MLA).
  [[nodiscard]] std::int64_t attention_width() const;
  // Width of K and of V together, halved (kv_dim; under MLA the per-head K and V it decompresses).
  [[nodiscard]] std::int64_t attention_kv_width() const;
  // KV-cache elements per token and layer: 2·kv_dim, or MLA's latent and rotary key.
  [[nodiscard]] std::int64_t kv_cache_width() const;
};

struct ParamCount {
  double per_layer = 0;    // one transformer block
  double embedding = 0;    // token embedding (+ untied output head counted separately)
  double output_head = 0;  // 0 when tied
  double position = 0;     // learned positions
  double final_norm = 0;
  [[nodiscard]] double total(std::int64_t layers) const {
    return per_layer * static_cast<double>(layers) + embedding + output_head + position + final_norm;
  }
};

ParamCount count_params(const ModelShape& m);
// Parameters of the routed experts (all MoE layers): what expert parallelism splits; 0 when dense.
double expert_params(const ModelShape& m);
// Attention parameters per layer: QKV and output projections (MLA: its down and up projections
// and latent norms), with biases.
double attention_params(const ModelShape& m);
inline double total_params(const ModelShape& m) { return count_params(m).total(m.layers); }
// Parameters that take part in matrix multiplies per token: every block, plus the logits
// projection (the tied or untied V x h matrix) — not the embedding lookup or positions. A mixture
// of experts counts the router, the shared experts and top_k routed experts (the active ones).
double matmul_params(const ModelShape& m);
// Parameters one token touches (the "active" count published for MoE models): total_params less
// the routed experts it is not sent to; total_params for a dense model.
double active_params(const ModelShape& m);

// A standard shape for the quick `params = N` form: Llama-style (swiglu, rmsnorm, rope, untied,
// head_dim 128, hidden ≈ 128 × layers as in Llama-2 7B/13B) so that total_params ≈ N; nullopt
// when no such shape lands within 10 % of N (below ~10M parameters with a 32k vocabulary).
std::optional<ModelShape> shape_from_params(double params, std::int64_t vocab);

// FLOPs of attention's two matmuls (Q·Kᵀ and P·V) for `seqs` sequences of `queries` positions
// each attending over `keys` positions, summed over all heads of width `hidden` in total:
// 2 matmuls × 2·queries·keys·hidden per sequence, times `mask` (0.5 for a causal square).
Flop attention_matmul_flops(double seqs, double queries, double keys, double hidden, double mask);
// FlashAttention's backward pass recomputes the scores and runs four matmuls: 2.5x the forward
// FLOPs [dao-2023].
inline constexpr double kAttentionBackwardFactor = 2.5;
// Model FLOPs per training token (6·N + 12·L·h·s, PaLM).
Flop training_flops_per_token(const ModelShape& m, double seq_len);

// --- The job ---

struct Training {
  double tokens = 0;              // training tokens D
  std::int64_t seq_len = 0;       // tokens per sequence
  std::int64_t global_batch = 0;  // sequences per optimizer step
  DType precision = DType::kBf16;
  Optimizer optimizer = Optimizer::kAdamW;
  [[nodiscard]] double tokens_per_step() const { return static_cast<double>(global_batch * seq_len); }
};

// How requests reach a serving deployment ([serving] in docs/scenarios.md): all queued at once
// (offline), a fixed number in flight (a closed loop: a new request as each one finishes), or
// Poisson arrivals at a rate.
enum class Arrival { kOffline, kConcurrency, kPoisson };
inline constexpr base::Named<Arrival> kArrivalNames[] = {
    {Arrival::kOffline, "offline"}, {Arrival::kConcurrency, "concurrency"}, {Arrival::kPoisson, "poisson"}};

struct Load {
  Arrival arrival = Arrival::kOffline;
  double rate = 0;               // requests per second over the whole deployment (Poisson)
  std::int64_t concurrency = 0;  // requests in flight over the whole deployment (closed loop)
  std::int64_t requests = 0;     // requests simulated; 0: one batch per replica (static) or 1000
  std::uint64_t seed = 1;        // of the arrival times and lengths
  double length_spread = 0;      // prompt and output lengths uniform in mean x [1 - s, 1 + s]
};

struct Inference {
  std::int64_t batch = 1;
  bool batch_max = false;    // batch = "max": as many concurrent sequences as the memory holds
  bool batch_given = false;  // [inference] batch was stated (caps in-flight sequences of a continuous engine)
  std::int64_t prompt_tokens = 512;
  std::int64_t output_tokens = 128;
  std::string weight_format = "fp16";     // the stored format's name (scenario::weight_formats)
  DType weight_precision = DType::kFp16;  // int8/int4 are stored formats, computed in fp16
  double weight_bytes = 2;                // bytes per weight as stored
  double kv_bytes = 2;                    // bytes per KV-cache element
  Load load;
};

// The host side of training input (the "barrel": CPU preprocessing, storage, host-to-device copy).
struct InputPipeline {
  Bytes sample_bytes;
  Seconds cpu_time_per_sample;  // per core
  int workers = 1;              // per node
  BytesPerSecond storage_bandwidth;
  bool pinned_memory = true;
};

struct Job {
  ModelShape model;
  std::optional<Training> training;  // exactly one of training and inference
  std::optional<Inference> inference;
  std::optional<InputPipeline> input;
};

// How a training job is laid out on the GPUs: the space `gpusim plan` searches.
struct Layout {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  int zero = 0;
  bool sequence = false;
  int virtual_stages = 1;
  bool uneven_stages = false;    // allow stages with different layer counts (the slowest holds ⌈L/p⌉)
  std::int64_t micro_batch = 1;  // sequences per GPU per forward/backward
  Recompute recompute = Recompute::kNone;
  // Expert parallelism: each MoE layer's routed experts spread over `expert` ranks carved out of
  // the data-parallel ones (it divides data and the experts); tokens reach them by all-to-all.
  int expert = 1;
  // Tokens of the busiest expert-parallel rank over the mean (1: a balanced router): the rank
  // every other one waits for in the grouped GEMMs and the all-to-all.
  double expert_imbalance = 1.0;
  [[nodiscard]] int gpus() const { return tensor * pipeline * data; }
};

// Parameters one rank holds before any ZeRO sharding: N/(t·p), the routed experts' further split
// over the expert ranks (N − N_experts)/(t·p) + N_experts/(t·p·ep). ZeRO shards the rest over the
// data ranks and the experts over the data/ep ranks holding the same experts: N/(t·p·d) either way.
double rank_params(const ModelShape& m, const Layout& layout);

// The software stack running the job (specs/runtimes/<id>.toml; format in specs/README.md): which
// kernels it fuses, how it launches them, how much host time each costs, how it overlaps
// communication with compute, which attention kernel and optimizer implementation it uses.
enum class RuntimeKind { kTraining, kInference };
inline constexpr base::Named<RuntimeKind> kRuntimeKindNames[] = {{RuntimeKind::kTraining, "training"},
                                                                 {RuntimeKind::kInference, "inference"}};
// How the runtime lays out a micro-batch's activations: [batch, seq, hidden] (PyTorch modules,
// DTensor) or [seq, batch, hidden] (Megatron-Core). Sequence parallelism shards the sequence
// dimension; NCCL gathers and scatters along dimension 0, so batch-major tensors with more than
// one sequence are re-laid out around every all-gather and reduce-scatter [pytorch-functional-collectives].
enum class ActivationLayout { kBatchMajor, kSequenceMajor };
inline constexpr base::Named<ActivationLayout> kActivationLayoutNames[] = {
    {ActivationLayout::kBatchMajor, "batch-major"}, {ActivationLayout::kSequenceMajor, "sequence-major"}};

enum class AttentionKernel { kFlash2, kFlash3, kUnfused };
inline constexpr base::Named<AttentionKernel> kAttentionNames[] = {
    {AttentionKernel::kFlash2, "flash2"}, {AttentionKernel::kFlash3, "flash3"}, {AttentionKernel::kUnfused, "unfused"}};
// How the optimizer step is launched: one fused multi-tensor kernel, PyTorch's foreach (one
// kernel per elementwise operation over groups of tensors), or one kernel per operation per tensor.
enum class OptimizerImpl { kFused, kForeach, kPerTensor, kNone };
inline constexpr base::Named<OptimizerImpl> kOptimizerImplNames[] = {{OptimizerImpl::kFused, "fused"},
                                                                     {OptimizerImpl::kForeach, "foreach"},
                                                                     {OptimizerImpl::kPerTensor, "per-tensor"},
                                                                     {OptimizerImpl::kNone, "none"}};
enum class Launch { kEager, kCudaGraphs };
inline constexpr base::Named<Launch> kLaunchNames[] = {{Launch::kEager, "eager"}, {Launch::kCudaGraphs, "cuda-graphs"}};

// Elementwise work done inside another kernel instead of a pass of its own over memory.
struct Fusion {
  bool norm_residual = false;    // the residual add and the following norm in one kernel
  bool bias_activation = false;  // the activation in a GEMM epilogue (or with the gate), no pass of its own
  bool rope = false;             // rotary embedding inside the QKV or attention kernel
  bool cross_entropy = true;     // softmax and loss in one kernel
  bool bias_grad = false;        // bias gradients from the weight-gradient GEMM's epilogue, no reduction pass
  bool norm_backward = false;    // a norm's input and weight gradients from one kernel, no second pass
};

// Share (0..1) of each kind of communication hidden behind compute.
struct Overlap {
  double data_parallel = 0;     // gradient reduction behind backward
  double parameter_gather = 0;  // ZeRO-3 / FSDP all-gathers behind compute
  double tensor_parallel = 0;   // tensor-parallel collectives behind GEMMs
  double pipeline = 0;          // pipeline sends behind compute
  double expert_parallel = 0;   // MoE all-to-all dispatch and combine behind compute (DualPipe: all)
};

// How a serving engine batches requests (an inference runtime's [serving] table): static batches
// (a batch is prefilled together and decoded until its last request ends, as Hugging Face
// `generate` and `llama-bench` do) or continuous (in-flight) batching over a paged KV cache, each
// iteration mixing decode tokens with prefill tokens up to a token budget (vLLM, TensorRT-LLM).
enum class Scheduler { kStatic, kContinuous };
inline constexpr base::Named<Scheduler> kSchedulerNames[] = {{Scheduler::kStatic, "static"},
                                                             {Scheduler::kContinuous, "continuous"}};

// What an engine's memory fraction is a fraction of: the GPU's whole memory (vLLM, MLC-LLM: weights,
// workspace and the KV pool all fit under it) or the memory left free after the weights and
// buffers (TensorRT-LLM: it sizes the KV pool alone).
enum class MemoryBasis { kTotal, kFree };
inline constexpr base::Named<MemoryBasis> kMemoryBasisNames[] = {{MemoryBasis::kTotal, "total"},
                                                                 {MemoryBasis::kFree, "free"}};

struct ServingEngine {
  Scheduler scheduler = Scheduler::kStatic;
  std::int64_t max_seqs = 256;             // sequences in flight per replica
  std::int64_t max_batched_tokens = 8192;  // tokens one iteration may process (continuous)
  bool chunked_prefill = false;            // a long prompt is prefilled over several iterations
  std::int64_t kv_block = 16;              // tokens per paged-KV block
  double memory_fraction = 0.9;            // of GPU memory the engine takes (see MemoryBasis)
  MemoryBasis memory_basis = MemoryBasis::kTotal;
  // Admission reserves KV blocks for the whole output (TensorRT-LLM's GUARANTEED_NO_EVICT): no
  // evictions, fewer sequences in flight. Otherwise blocks are taken as tokens come (vLLM).
  bool reserve_output = false;
  // A one-shot/two-shot all-reduce over NVLink peer memory for tensor-parallel messages up to this
  // size (larger ones, and links without it, go through the collective library); 0: none.
  Bytes allreduce_max;
  Bytes allreduce_one_shot_max;  // one-shot below, two-shot (reduce-scatter + all-gather) above
  Seconds allreduce_latency;     // per stage: kernel launch and the cross-GPU flag handshake
  // Host time per iteration that the GPU waits for (scheduling, input preparation, sampling and
  // output handling left exposed); 0 where the runtime hides it or nothing is published.
  Seconds step_overhead;
  // An overlap scheduler launches iteration n+1 before it handles iteration n's outputs: the host
  // work hides behind the GPU, and every token reaches the user one iteration later.
  bool overlap_scheduler = false;
};

struct Runtime {
  std::string id;  // specs/runtimes id
  std::string name;
  RuntimeKind kind = RuntimeKind::kTraining;
  AttentionKernel attention = AttentionKernel::kFlash2;
  bool cuda_graphs = false;  // kernels replayed from a CUDA graph instead of launched eagerly
  // Mixed precision through torch.autocast: norms, softmax and the loss run in fp32 (a cast back
  // to 16 bits before each GEMM); with fp32 parameters (not sharded by ZeRO-3) the residual
  // stream stays fp32 and every GEMM casts its weight per micro-batch.
  bool autocast = false;
  // RMSNorm, rotary embedding and the gated activation written as chains of primitive tensor ops
  // (the Hugging Face modelling code): one kernel and one pass over memory per primitive.
  bool composite_ops = false;
  ActivationLayout activation_layout = ActivationLayout::kBatchMajor;
  Seconds dispatch;  // host time per kernel on top of the CUDA launch (eager only)
  OptimizerImpl optimizer = OptimizerImpl::kFused;
  Fusion fusion;
  Overlap overlap;
  double quantized = 1.0;  // dequantizing GEMV bandwidth relative to the fp16 GEMV
  // Bytes per SM a small-batch (decode) GEMM keeps in flight: the Little's-law cap on its weight
  // stream; 0 = the architecture's (a plain GEMV kernel's).
  Bytes gemv_inflight;
  ServingEngine serving;  // inference runtimes
  // Time outside the modelled kernels, as a fraction of kernel time: what no other parameter of
  // the runtime explains, calibrated on its fit rows (0 where it has none).
  double remainder = 0;
  std::vector<std::string> sources;
  std::vector<std::string> assumptions;
  std::string origin;
  [[nodiscard]] bool flash_attention() const { return attention != AttentionKernel::kUnfused; }
};

}  // namespace gpusim::workload
