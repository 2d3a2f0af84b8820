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

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
// adamw-8bit: bitsandbytes' block-wise 8-bit Adam (both moments in 8 bits with an fp32 scale per
// block of 2048) [dettmers-8bit-optim-2022].
enum class Optimizer { kAdamW, kSgd, kAdafactor, kAdamW8bit };
inline constexpr base::Named<Optimizer> kOptimizerNames[] = {{Optimizer::kAdamW, "adamw"},
                                                             {Optimizer::kSgd, "sgd"},
                                                             {Optimizer::kAdafactor, "adafactor"},
                                                             {Optimizer::kAdamW8bit, "adamw-8bit"}};
// The width of an optimizer's moment estimates: fp32; the training precision's 16-bit type (as
// torch.optim keeps them for 16-bit parameters [pytorch-optim-defaults]); or bitsandbytes' block-wise
// 8-bit states, a byte each plus an fp32 scale per 2048 elements [dettmers-8bit-optim-2022].
enum class StatePrecision { kFp32, kHalf, k8bit };
inline constexpr base::Named<StatePrecision> kStatePrecisionNames[] = {
    {StatePrecision::kFp32, "fp32"}, {StatePrecision::kHalf, "16-bit"}, {StatePrecision::k8bit, "8-bit"}};
// What a training job updates: every parameter, or low-rank adapters beside frozen weights (LoRA
// [hu-lora-2021]), the frozen block matrices stored as 4-bit NF4 with double quantization (QLoRA
// [dettmers-qlora-2023]).
enum class Method { kFull, kLora, kQlora };
inline constexpr base::Named<Method> kMethodNames[] = {
    {Method::kFull, "full"}, {Method::kLora, "lora"}, {Method::kQlora, "qlora"}};
// The linear layers that get adapters: q and v (the LoRA paper's and PEFT's Llama default), the four
// attention projections, or every linear layer of a block (QLoRA's choice).
enum class LoraTargets { kQv, kAttention, kAllLinear };
inline constexpr base::Named<LoraTargets> kLoraTargetNames[] = {
    {LoraTargets::kQv, "qv"}, {LoraTargets::kAttention, "attention"}, {LoraTargets::kAllLinear, "all-linear"}};
// Where ZeRO-Offload / ZeRO-Infinity keep what the GPU does not [ren-zero-offload-2021,
// rajbhandari-zero-infinity-2021].
enum class Offload { kNone, kCpu, kNvme };
inline constexpr base::Named<Offload> kOffloadNames[] = {
    {Offload::kNone, "none"}, {Offload::kCpu, "cpu"}, {Offload::kNvme, "nvme"}};
// selective: Megatron-LM's (attention scores and softmax) [korthikanti-2022]; op: torchtitan's
// per-op policy (every second matmul output and the attention output saved, all else recomputed)
// [torchtitan-source]; full: each layer's forward again from its input.
enum class Recompute { kNone, kSelective, kOp, kFull };
inline constexpr base::Named<Recompute> kRecomputeNames[] = {{Recompute::kNone, "none"},
                                                             {Recompute::kSelective, "selective"},
                                                             {Recompute::kOp, "op"},
                                                             {Recompute::kFull, "full"}};
constexpr const char* to_string(Recompute r) { return base::name_in(kRecomputeNames, r); }
// A convolution network's activation layout: channels-last (NHWC, what tensor cores take) or
// PyTorch's default NCHW, which cuDNN transposes around each tensor-core convolution
// [cudnn-legacy-api, composer-channels-last].
enum class MemoryFormat { kChannelsLast, kNchw };
inline constexpr base::Named<MemoryFormat> kMemoryFormatNames[] = {{MemoryFormat::kChannelsLast, "channels-last"},
                                                                   {MemoryFormat::kNchw, "nchw"}};

// The model families gpusim lowers: a dense transformer (the fields below, lowering/transformer.cpp),
// a ResNet of bottleneck blocks (`resnet`, lowering/resnet.cpp) or a Vision Transformer (`vit`: a
// non-causal transformer over an image's patches, lowering/vit.cpp adapting the transformer's
// ends). Each lowering, parameter count and FLOP count switches on the family; a new family is a
// new file behind these switches.
enum class Family { kTransformer, kResNet, kVit };
inline constexpr base::Named<Family> kFamilyNames[] = {
    {Family::kTransformer, "transformer"}, {Family::kResNet, "resnet"}, {Family::kVit, "vit"}};

// A Vision Transformer [dosovitskiy-2021]: the image cut into patch x patch squares, each embedded
// by a linear map (a convolution of stride = kernel = patch), a class token prepended, learned
// positions added; the encoder runs over (image / patch)² + 1 tokens (ModelShape::max_seq) and the
// classifier (`vocab` = classes) reads the class token's output only.
struct Vit {
  std::int64_t image = 224;
  std::int64_t patch = 16;
  [[nodiscard]] std::int64_t patches() const { return patch > 0 ? (image / patch) * (image / patch) : 0; }
  bool operator==(const Vit&) const = default;
};

// A ResNet of bottleneck blocks [he-2016] as torchvision builds it [torchvision-resnet]: a 7x7/2
// stem convolution and a 3x3/2 max pool, then stages of blocks (1x1 reduce, 3x3, 1x1 expand, each
// followed by batch norm; ReLU after the first two and after the residual add), the first block
// of each stage with a 1x1 projection shortcut and, from the second stage on, stride 2; global
// average pooling and a fully connected classifier. v1.5 puts the stride in the 3x3 convolution,
// v1 in the first 1x1.
struct ResNet {
  std::int64_t image = 224;          // input height = width (pixels)
  std::int64_t stem_width = 64;      // channels of the stem convolution
  std::vector<std::int64_t> blocks;  // bottleneck blocks per stage ({3, 4, 6, 3}: ResNet-50)
  std::int64_t width = 64;           // bottleneck width of the first stage, doubled at each stage
  std::int64_t expansion = 4;        // block output channels = expansion x bottleneck width
  bool stride_in_3x3 = true;         // v1.5
  std::int64_t classes = 1000;
  bool operator==(const ResNet&) const = default;
};

// One convolution of a ResNet with its input and output sizes (square images, padding R/2).
struct ConvLayer {
  std::string name;
  std::int64_t in_c = 0, out_c = 0, kernel = 1, stride = 1;
  std::int64_t in_hw = 0, out_hw = 0;  // height = width of the input and output
  // The last convolution of a block's main path: its batch norm feeds the residual add (and the
  // ReLU after it), not a ReLU of its own; the shortcut projection feeds the add directly.
  bool block_end = false;
  bool shortcut = false;
  [[nodiscard]] double macs() const {  // per image
    return static_cast<double>(out_hw * out_hw * out_c * in_c * kernel * kernel);
  }
  [[nodiscard]] double in_elements() const { return static_cast<double>(in_hw * in_hw * in_c); }
  [[nodiscard]] double out_elements() const { return static_cast<double>(out_hw * out_hw * out_c); }
  [[nodiscard]] double weights() const { return static_cast<double>(out_c * in_c * kernel * kernel); }
  bool operator==(const ConvLayer&) const = default;
};
// Every convolution of the network in execution order (shortcut projection before its block's 1x1s).
std::vector<ConvLayer> resnet_convs(const ResNet& r);
// Output size of a convolution or pooling window of `kernel` with padding kernel / 2.
inline std::int64_t conv_out(std::int64_t in, std::int64_t kernel, std::int64_t stride) {
  return (in + 2 * (kernel / 2) - kernel) / stride + 1;
}
// Channels into the classifier (the last stage's expanded width) and the map it pools over.
std::int64_t resnet_features(const ResNet& r);
std::int64_t resnet_final_hw(const ResNet& r);
// Multiply-accumulates of one image's forward pass: convolutions and the classifier (ResNet-50 at
// 224 x 224: 4.09 G [torchvision-resnet]; FLOPs are twice this).
double resnet_macs(const ResNet& r);
// Parameters: convolution weights (no biases), a scale and a shift per batch-norm channel, the
// classifier's weights and biases (ResNet-50: 25,557,032 [torchvision-resnet]).
double resnet_params(const ResNet& r);
// Parameter tensors (each convolution's weight, two per batch norm, the classifier's two): what a
// multi-tensor optimizer walks over.
double resnet_param_tensors(const ResNet& r);
// Activation elements one image keeps for backward: each convolution's output (the batch norm's
// input) and the ReLU or residual output after it (the next convolution's input; torchvision's
// in-place ReLU overwrites the batch norm's output), the input image, and the max pool's output.
double resnet_saved_elements(const ResNet& r);

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
  bool operator==(const MoeShape&) const = default;
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
  bool operator==(const MlaShape&) const = default;
};

struct ModelShape {
  std::string name;
  Family family = Family::kTransformer;
  ResNet resnet;  // family resnet
  Vit vit;        // family vit (with the transformer fields)
  // An image model (ResNet or ViT): trains on images, data-parallel only.
  [[nodiscard]] bool images() const { return family != Family::kTransformer; }
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
  // The share of a K (or V) `width` one of `tensor` ranks holds: at least one head, for a K/V head
  // is replicated when there are fewer K/V heads than ranks.
  [[nodiscard]] double kv_width_per_rank(double width, double tensor) const {
    return std::max(width / tensor, static_cast<double>(head_dim()));
  }
  // The K (or V) width one of `tensor` ranks caches per token and layer: its share of kv_dim, or
  // under MLA the latent and rotary key, whole on every rank (half of kv_cache_width each).
  [[nodiscard]] double cached_kv_width(double tensor) const {
    return mla ? static_cast<double>(kv_cache_width()) / 2.0 : kv_width_per_rank(static_cast<double>(kv_dim()), tensor);
  }
  bool operator==(const ModelShape&) const = default;
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

// A ResNet counts all its parameters (convolutions, batch-norm scales and shifts, classifier) as
// `embedding`, with no per-layer part (it lowers as one unrepeated layer). A ViT's embedding is the
// patch projection (3·patch²·h weights, h biases) and the class token; its output head the
// classifier's weights and biases (ViT-B/16: 86,567,656 [torchvision-vit]).
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
// Model FLOPs per training token (6·N + 12·L·h·s, PaLM); for a ResNet, per image (seq_len 1):
// forward 2·MACs, backward twice that. A ViT's N counts the blocks and the patch projection per
// token; its classifier (one token per image, under 0.1 % of the FLOPs) is left out.
Flop training_flops_per_token(const ModelShape& m, double seq_len);

// --- The job ---

// A ResNet trains on images: one image is one "sequence" of one token (seq_len 1), so tokens count
// images and samples per second are images per second. A ViT's image is a sequence of its patch
// tokens and the class token (seq_len = max_seq): samples per second are images per second too.
struct Training {
  double tokens = 0;              // training tokens D (images for a ResNet; images x patch tokens for a ViT)
  std::int64_t seq_len = 0;       // tokens per sequence
  std::int64_t global_batch = 0;  // sequences per optimizer step
  DType precision = DType::kBf16;
  Optimizer optimizer = Optimizer::kAdamW;
  Method method = Method::kFull;
  std::int64_t lora_rank = 16;
  LoraTargets lora_targets = LoraTargets::kAllLinear;
  Offload offload_optimizer = Offload::kNone;  // optimizer states, fp32 master and gradients (ZeRO-Offload)
  Offload offload_params = Offload::kNone;     // the 16-bit parameters (ZeRO-3 only, ZeRO-Infinity)
  bool offload_activations = false;            // saved activations parked in host memory until backward
  // Mixed precision keeps an fp32 master copy of the updated parameters beside their 16-bit
  // working copy [rajbhandari-2020]; without it (pure 16-bit training, torchtune's dtype = bf16
  // [torchtune-memory-docs]) parameters, gradients and, unless stated, moments are all 16-bit.
  bool master_weights = true;
  std::optional<StatePrecision> optimizer_states;  // unset: 8-bit for adamw-8bit, else by master_weights
  // bitsandbytes' paged optimizers: the states in CUDA unified memory, evicted to the host when the
  // GPU runs short and paged back for the step [bnb-optimizers-docs, dettmers-qlora-2023].
  bool paged_optimizer = false;
  // The step of each parameter runs as soon as its gradient is accumulated and the gradient is
  // freed (torchtune's optimizer_in_bwd [torchtune-memory-docs], LOMO [lv-lomo-2023]).
  bool optimizer_in_backward = false;
  MemoryFormat memory_format = MemoryFormat::kChannelsLast;  // a ResNet's activations
  [[nodiscard]] double tokens_per_step() const { return static_cast<double>(global_batch * seq_len); }
  [[nodiscard]] bool adapters() const { return method != Method::kFull; }
  // The moments' width in effect: adamw-8bit's bytes, the stated one, fp32 beside a master copy or
  // in fp32/tf32 training, else the 16-bit training type's.
  [[nodiscard]] StatePrecision states() const {
    if (optimizer == Optimizer::kAdamW8bit) {
      return StatePrecision::k8bit;
    }
    if (optimizer_states) {
      return *optimizer_states;
    }
    return master_weights || units::is_wide(precision) ? StatePrecision::kFp32 : StatePrecision::kHalf;
  }
  bool operator==(const Training&) const = default;
};

// --- Parameter-efficient fine-tuning (lora.cpp) ---

// The parameters of a training job by role. Full training updates all of them; LoRA and QLoRA
// update only `trainable` (the adapters: rank r x (in + out) per targeted matrix per layer) and
// freeze the rest, of which `frozen_linear` (the block matrices) QLoRA stores in 4 bits.
struct ParamRoles {
  double trainable = 0;
  double frozen_linear = 0;    // block matrices (no biases)
  double frozen_other = 0;     // embedding, output head, norms, biases
  double adapter_tensors = 0;  // adapter matrices (two per targeted matrix per layer)
};
ParamRoles param_roles(const ModelShape& m, const Training& t);
// Adapter parameters of one layer.
double adapter_params_per_layer(const ModelShape& m, const Training& t);
// Bytes per parameter of QLoRA's NF4 storage with double quantization: 4 bits, plus an 8-bit scale
// per block of 64 and an fp32 scale per 256 of those [dettmers-qlora-2023, §3]: 4 + 8/64 + 32/(64·256) bits.
inline constexpr double kNf4BytesPerParam = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;
// Bytes per element of one 8-bit optimizer state: a byte plus an fp32 scale per block of 2048
// [dettmers-8bit-optim-2022].
inline constexpr double kAdam8bitStateBytes = 1.0 + 4.0 / 2048.0;
// Model FLOPs per training token of the job: 6 per updated matmul parameter; a frozen one still
// runs its forward and its input gradient (4); attention as in training_flops_per_token.
Flop job_flops_per_token(const ModelShape& m, const Training& t);

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
  double output_spread = 0;      // output lengths alone: uniform in mean x [1 - s, 1 + s] (length_spread unless set)
  bool operator==(const Load&) const = default;
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
  bool operator==(const Inference&) const = default;
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
  // Context parallelism: each sequence split over `context` ranks (ring attention passes the K/V
  // chunks around them); they hold the same weights, so gradients reduce, and ZeRO shards, over
  // data x context ranks [megatron-context-parallel].
  int context = 1;
  [[nodiscard]] int gpus() const { return tensor * pipeline * data * context; }
  // Ranks holding the same weights: the data-parallel group of the gradients and of ZeRO.
  [[nodiscard]] int replicas() const { return data * context; }
  bool operator==(const Layout&) const = default;
};

// Parameters one rank holds before any ZeRO sharding: N/(t·p), the routed experts' further split
// over the expert ranks (N − N_experts)/(t·p) + N_experts/(t·p·ep). ZeRO shards the rest over the
// data ranks and the experts over the data/ep ranks holding the same experts: N/(t·p·d) either way.
double rank_params(const ModelShape& m, const Layout& layout);

// The parameter counts of a (model, training) pair that every layout shares, counted once where
// many layouts are evaluated (a search): the same numbers count_params, param_roles,
// expert_params and total_params give.
struct ModelCounts {
  ParamCount params;
  ParamRoles roles;
  double experts = 0;  // expert_params
  double total = 0;    // total_params
};
ModelCounts model_counts(const ModelShape& m, const Training& t);
// rank_params from the counts.
double rank_params(const ModelCounts& c, const Layout& layout);

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
  // Per request, on the way to the first token when requests come over the network (Poisson or
  // closed-loop arrivals): the API server's HTTP handling, tokenization and the server-sent event
  // back to the client; 0 where nothing is published.
  Seconds api_latency;
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
