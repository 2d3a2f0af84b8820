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

// Speculative decoding ([serving.speculative] in docs/scenarios.md): each decode step of a request
// proposes `tokens` (k) tokens cheaply and the target model verifies them in one pass over k + 1
// positions, keeping the accepted prefix and one token of its own [leviathan-2023]. The proposer is
// a small draft model run k times, EAGLE's draft layers on the target's features run k times
// [eagle-2024], Medusa's k extra heads run once [medusa-2024], or an n-gram lookup in the context,
// which costs no GPU time [saxena-2023-pld].
enum class SpecMethod { kNone, kDraft, kEagle, kMedusa, kNgram };
inline constexpr base::Named<SpecMethod> kSpecMethodNames[] = {{SpecMethod::kNone, "none"},
                                                               {SpecMethod::kDraft, "draft"},
                                                               {SpecMethod::kEagle, "eagle"},
                                                               {SpecMethod::kMedusa, "medusa"},
                                                               {SpecMethod::kNgram, "ngram"}};
struct Speculative {
  SpecMethod method = SpecMethod::kNone;
  std::int64_t tokens = 0;  // k: proposed per step
  double acceptance = 0;    // α: the chance each proposed token is accepted, the ones before it accepted
  std::string draft_name;   // the draft model as the scenario names it (method draft)
  // The proposer's network, run `passes` times per step: the draft model, EAGLE's draft layers (the
  // target's shape with those layers), Medusa's heads (the target's shape with no layers: its head);
  // none for n-grams.
  std::optional<ModelShape> proposer;
  [[nodiscard]] bool on() const { return method != SpecMethod::kNone && tokens > 0; }
  bool operator==(const Speculative&) const = default;
};
// Tokens a speculative step yields on average, the accepted prefix of k proposals plus the
// target's own token, when each is accepted with probability α independently [leviathan-2023, eq. 1]:
//   τ = (1 − α^(k+1)) / (1 − α)   (k + 1 at α = 1; 1 without speculation)
double tokens_per_step(const Speculative& s);
// Proposer passes per step: k for a draft model or EAGLE (autoregressive), k heads at once for Medusa
// (each head an output projection: k head passes), none for n-grams.
double proposer_passes(const Speculative& s);
// Weights of the proposer the deployment holds beside the target's (0 for n-grams).
double proposer_params(const Speculative& s);

// Prefix caching ([serving] prefix_tokens, prefix_hit_rate): requests that share a prompt prefix (a
// system prompt, earlier turns of a chat) find its KV blocks cached with probability `hit_rate`; they
// prefill only the rest, and the cached blocks are held once in the pool. Engines cache whole KV
// blocks only, so the prefix counts in whole blocks [vllm-apc, zheng-2024-sglang].
struct PrefixCache {
  std::int64_t tokens = 0;  // the shared prefix of every prompt
  double hit_rate = 0;      // share of requests that find it cached
  bool operator==(const PrefixCache&) const = default;
};

// Disaggregated prefill and decode ([serving.disaggregated]; DistServe [zhong-2024-distserve],
// Splitwise [patel-2024-splitwise], NVIDIA Dynamo): `prefill` replicas of `prefill_tensor` GPUs run
// the prompts alone and hand each request's KV cache to one of `decode` replicas of `decode_tensor`
// GPUs, which generate the rest of its output. 0 replicas: aggregated (every replica does both).
struct Disaggregation {
  int prefill = 0;
  int decode = 0;
  int prefill_tensor = 1;
  int decode_tensor = 1;
  [[nodiscard]] bool on() const { return prefill > 0 && decode > 0; }
  [[nodiscard]] int gpus() const { return prefill * prefill_tensor + decode * decode_tensor; }
  bool operator==(const Disaggregation&) const = default;
};

// NVFP4 KV-cache block [nvidia-nvfp4-kv-cache]: 16 fp4 (E2M1) values of 4 bits share one fp8
// (E4M3) scale of 8 bits; the per-tensor fp32 scale is negligible.
inline constexpr double kNvfp4KvValueBits = 4;
inline constexpr double kNvfp4KvScaleBits = 8;
inline constexpr double kNvfp4KvBlock = 16;
// Bytes per cached K/V element of kv_precision = "fp4": 0.5 bytes plus a 1-byte scale per 16 values.
inline constexpr double kNvfp4KvBytes = (kNvfp4KvValueBits + kNvfp4KvScaleBits / kNvfp4KvBlock) / 8.0;

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
  Speculative speculative;
  PrefixCache prefix;
  Disaggregation disaggregated;
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

}  // namespace gpusim::workload

// The runtime, the model error and the precision policy (the face continues there).
#include "gpusim/workload/runtime.hpp"
