// The workload stage's face, continued (include gpusim/workload.hpp, which includes this): the
// software stack a job runs on, the model's held-out error quantiles, and the precision policy.
#pragma once

#include "gpusim/workload.hpp"

namespace gpusim::workload {

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
// How a runtime multiplies by weights stored below their compute width (int8/int4 and block
// formats): unpacked inside a 16-bit GEMM (W4A16 kernels: "fused"); llama.cpp's CUDA backend
// since June 2024 [llama-cpp-pr-8075]: activations quantized to q8_1 by a kernel of their own, then
// integer dot products on the packed weights, a GEMV (MMVQ) up to 8 tokens and int8 tensor-core
// tiles (MMQ) above ("mmq"); llama.cpp before it: the same up to 32 tokens, above that the weight
// dequantized to an fp16 copy for a cuBLAS GEMM ("dequantize").
enum class QuantizedMatmul { kFused, kMmq, kDequantize };
inline constexpr base::Named<QuantizedMatmul> kQuantizedMatmulNames[] = {
    {QuantizedMatmul::kFused, "fused"}, {QuantizedMatmul::kMmq, "mmq"}, {QuantizedMatmul::kDequantize, "dequantize"}};

// Elementwise work done inside another kernel instead of a pass of its own over memory.
struct Fusion {
  bool norm_residual = false;    // the residual add and the following norm in one kernel
  bool bias_activation = false;  // the activation in a GEMM epilogue (or with the gate), no pass of its own
  bool rope = false;             // rotary embedding inside the QKV or attention kernel
  bool cross_entropy = true;     // softmax and loss in one kernel
  bool bias_grad = false;        // bias gradients from the weight-gradient GEMM's epilogue, no reduction pass
  bool norm_backward = false;    // a norm's input and weight gradients from one kernel, no second pass
  // Q, K and V (and a gated FFN's gate and up) as one concatenated GEMM each; false: a GEMM per
  // matrix as the checkpoint stores them (llama.cpp's graph multiplies attn_q, attn_k, attn_v apart).
  bool projections = true;
  bool operator==(const Fusion&) const = default;
};

// Share (0..1) of each kind of communication hidden behind compute.
struct Overlap {
  double data_parallel = 0;     // gradient reduction behind backward
  double parameter_gather = 0;  // ZeRO-3 / FSDP all-gathers behind compute
  double tensor_parallel = 0;   // tensor-parallel collectives behind GEMMs
  double pipeline = 0;          // pipeline sends behind compute
  double expert_parallel = 0;   // MoE all-to-all dispatch and combine behind compute (DualPipe: all)
  bool operator==(const Overlap&) const = default;
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
  // Host time per scheduler call that the GPU always waits for (the engine loop's fixed work);
  // 0 where the runtime hides it or nothing is published.
  Seconds step_overhead;
  // Host time per sequence of the batch per scheduler call: scheduling, block tables, building
  // the input tensors and the sampling metadata (step::engine_host_time).
  Seconds schedule_per_sequence;
  // Host time per sequence that samples a token, per iteration: stop checks, detokenization,
  // building the responses.
  Seconds output_per_sequence;
  // An asynchronous output processor handles iteration n's outputs while iteration n+1 runs
  // (vLLM 0.6): the output work hides behind the GPU, tokens reach the user one iteration later.
  bool async_output = false;
  // An overlap scheduler launches iteration n+1 before it handles iteration n's outputs: the host
  // work hides behind the GPU, and every token reaches the user one iteration later.
  bool overlap_scheduler = false;
  // Decode iterations run per scheduler call (vLLM's --num-scheduler-steps, SGLang's continued
  // decode steps): waiting requests are admitted only between calls.
  std::int64_t scheduler_steps = 1;
  // An iteration may mix prompt tokens with the decode tokens of running requests; false: an
  // iteration that admits prompts runs them alone (vLLM V0 without chunked prefill).
  bool mixed_batches = true;
  // The request path when requests come over the network (Poisson or closed-loop arrivals), which
  // delays every token its client sees: a fixed part per request (HTTP handling, the chat
  // template, the hops between the API server's and the engine's processes, the first token's
  // detokenization and server-sent event back to the client) and the tokenizer's CPU time per
  // prompt token; 0 where nothing is published.
  Seconds api_latency;
  Seconds tokenize_per_token;
  // The custom all-reduce runs on AMD GPUs too (ROCm builds that enable it); false: tensor-parallel
  // all-reduces on AMD GPUs go through RCCL.
  bool allreduce_on_amd = true;
  bool operator==(const ServingEngine&) const = default;
};

// Defaults of the recipes a training runtime ships (its [recipe] table, specs/README.md): each
// set field stands in for the [training] key of the same name that a scenario leaves out.
struct RecipeDefaults {
  std::optional<bool> master_weights;
  std::optional<Optimizer> optimizer;
  std::optional<StatePrecision> optimizer_states;
  std::optional<bool> paged_optimizer;
  std::optional<bool> optimizer_in_backward;
  std::optional<Recompute> recompute;
  std::optional<std::int64_t> lora_rank;
  std::optional<LoraTargets> lora_targets;
  bool operator==(const RecipeDefaults&) const = default;
};
// The recipe defaults: [recipe] for every job, [recipe.<method>] for one method, and
// [recipe.<method>.single_device] for that method on one GPU; the narrower wins.
struct Recipe {
  RecipeDefaults all;
  RecipeDefaults method[3];         // by Method
  RecipeDefaults single_device[3];  // by Method, one GPU
  bool operator==(const Recipe&) const = default;
};

// The plausible range of a runtime's uncertain values (its [uncertainty] table; specs/README.md),
// each in the value's own unit, within which the value lies with about 80 % probability; the band
// of an estimate re-runs the evaluator at both ends (answer/uncertainty.cpp). Shares and the
// remainder never leave [0, 1] and [0, ∞): a range about 0 is one-sided.
struct RuntimeRanges {
  double remainder = 0;   // ± of efficiency.remainder
  double overlap = 0;     // ± of every [overlap] share
  double dispatch = 0;    // fraction of the per-kernel dispatch time
  Seconds step_overhead;  // ± of the serving engine's exposed host time per iteration
  // ± of the remainder when a scenario names no runtime and gets this one by default: how far
  // another stack might be from it.
  double unnamed = 0;
  std::vector<std::string> assumed;  // keys whose range is an assumption, not a measured spread
  bool operator==(const RuntimeRanges&) const = default;
};

// The releases a runtime file models (its `versions`, specs/README.md): "0.5-0.6" is every
// 0.5.x and 0.6.x, "0.8-" 0.8.0 and every later one, "0.3" every 0.3.x. Each bound is compared on
// its own components only, so a bound of two covers every patch release under it.
struct VersionRange {
  std::vector<int> min;  // empty: the file states no versions
  std::vector<int> max;  // empty: no upper bound
  std::string text;      // as written
  [[nodiscard]] bool stated() const { return !min.empty(); }
  // Whether `release` (a version's numeric components, parse_version) lies within the range; a
  // range that states nothing covers every release.
  [[nodiscard]] bool covers(const std::vector<int>& release) const;
  bool operator==(const VersionRange&) const = default;
};
// The numeric components of a release as projects write it: "0.6.0", "v0.3.0", "1.2.0rc1",
// "0.5.3.post3", "0.28.1rc1.dev174+g37f5dca3f" (a pre-, post- or dev-release suffix, or a local
// one, plays no part in ranges); nullopt when the text is not such a release.
std::optional<std::vector<int>> parse_version(std::string_view text);
// A range as a runtime file writes it: "MIN-MAX", "MIN-" or "SERIES", each bound plain numeric
// components ("0.5", "0.10"), the lower not above the upper; nullopt otherwise.
std::optional<VersionRange> parse_version_range(std::string_view text);

struct Runtime {
  std::string id;  // specs/runtimes id
  std::string name;
  VersionRange versions;  // the releases the file models; none stated: any
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
  double quantized = 1.0;  // dequantizing GEMV bandwidth relative to the fp16 GEMV ("fused" path)
  QuantizedMatmul quantized_matmul = QuantizedMatmul::kFused;
  // MMQ (the "mmq" and "dequantize" paths, batches above a GEMV's): throughput as a share of the
  // GPU's int8 mma.sync rate; 0 = not stated (an error for those paths).
  double mmq = 0;
  // The runtime's fused attention kernel, forward and backward, as a share of the architecture's
  // FlashAttention-2-class efficiency (a FlashAttention-1-algorithm Triton kernel: less); 1 = FA2.
  double attention_forward = 1.0;
  double attention_backward = 1.0;
  // Bytes per SM a small-batch (decode) GEMM keeps in flight: the Little's-law cap on its weight
  // stream; 0 = the architecture's (a plain GEMV kernel's).
  Bytes gemv_inflight;
  ServingEngine serving;  // inference runtimes
  // The loss computed over the logits in this many chunks (torchtune's CEWithChunkedOutputLoss):
  // the logits' gradient exists one chunk at a time [torchtune-chunked-loss]; 1: all at once.
  std::int64_t loss_chunks = 1;
  Recipe recipe;  // training runtimes
  // Time outside the modelled kernels, as a fraction of kernel time: what no other parameter of
  // the runtime explains, calibrated on its fit rows (0 where it has none).
  double remainder = 0;
  RuntimeRanges ranges;
  std::vector<std::string> sources;
  std::vector<std::string> assumptions;
  std::string origin;
  [[nodiscard]] bool flash_attention() const { return attention != AttentionKernel::kUnfused; }
  bool operator==(const Runtime&) const = default;
};

// --- The model's demonstrated error (specs/uncertainty/model-error.toml; specs/README.md) ---
// How far the model's figures fell from the measured ones on publications it was not fitted to:
// the quantiles of ln(predicted / measured) over the rows `gpusim validate --cross-validate`
// predicted with their own publication left out [stone-1974], per kind of job and family of
// metric, and per runtime where one has enough rows. Quantiles of held-out residuals bound a new
// prediction's error at their coverage [barber-jackknife-2021]; the band of an estimate adds them
// to the assumption ranges (answer/uncertainty.cpp).
enum class JobKind { kTraining, kServing };
inline constexpr base::Named<JobKind> kJobKindNames[] = {{JobKind::kTraining, "training"},
                                                         {JobKind::kServing, "serving"}};
// Rates (throughput, utilization) against times (latencies). A training job's times are its work
// over its rates, so its one family is throughput, a time counted as its rate.
enum class MetricFamily { kThroughput, kLatency };
inline constexpr base::Named<MetricFamily> kMetricFamilyNames[] = {{MetricFamily::kThroughput, "throughput"},
                                                                   {MetricFamily::kLatency, "latency"}};
struct ModelErrorGroup {
  JobKind job = JobKind::kTraining;
  MetricFamily metric = MetricFamily::kThroughput;
  std::string runtime;  // a runtime id, or empty: every runtime's rows pooled
  int rows = 0;         // the held-out rows the quantiles are of
  // The lower and upper quantiles of ln(predicted / measured), a throughput family's on rates and
  // a latency family's on times: the measured figure lies within predicted × [e^−high, e^−low].
  double low = 0;
  double high = 0;
};
struct ModelError {
  double coverage = 0;       // the central share of residuals between low and high
  int min_runtime_rows = 0;  // a runtime with fewer rows in a group takes the pooled group
  std::vector<ModelErrorGroup> groups;
  std::string origin;  // the file, for messages
  // The group for a job of `job` on `runtime` (empty: unnamed), metric `metric`: the runtime's own,
  // else the pooled one; nullptr when there is none.
  [[nodiscard]] const ModelErrorGroup* find(JobKind job, MetricFamily metric, std::string_view runtime) const;
};

// --- Precision policy (precision.cpp) ---

// Bytes per updated parameter of each copy a training step keeps (see precision.cpp): the working
// weights, their gradient, the fp32 master copy (0 without one) and the optimizer's moments.
struct ParameterBytes {
  double weight = 2;
  double gradient = 2;
  double master = 0;
  double moments = 2;  // moment estimates per parameter: AdamW 2, SGD with momentum 1, Adafactor 0
  double moment = 4;   // bytes of each
  [[nodiscard]] double optimizer() const { return master + moments * moment; }
};
ParameterBytes precision_policy(const Training& t, const Layout& layout, const Runtime& rt);
double moment_count(Optimizer o);
double state_bytes(StatePrecision s);

}  // namespace gpusim::workload
