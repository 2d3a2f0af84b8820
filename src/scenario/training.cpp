// [training] of a scenario (keys and defaults in docs/scenarios.md): tokens or images, batch,
// precision, optimizer and recomputation, and what a fine-tuning job trains and offloads.
#include "scenario/internal.hpp"

namespace gpusim::scenario::detail {

using hardware::GpuSpec;
using parse::Need;
using parse::Range;
using parse::Reader;
using workload::PositionKind;

namespace {

// LoRA / QLoRA and the memory savers (docs/scenarios.md, [training]).
void read_fine_tuning(Reader& r, const workload::ModelShape& m, workload::Training& t) {
  if (auto v = r.choice("method", workload::kMethodNames, Need::kOptional)) {
    t.method = *v;
  }
  if (t.adapters() && (m.moe || m.mla || m.images())) {
    // Adapter shapes (workload/lora.cpp) follow a dense block's q, k, v, o and FFN matrices.
    r.error("method", std::string("LoRA and QLoRA are modelled on dense transformers; ") + m.name + " is " +
                          (m.images() ? "an image model" : "a mixture of experts or uses latent attention"));
  }
  const std::int64_t widest = std::max<std::int64_t>(1, std::min(m.hidden, m.ffn_hidden));
  if (auto v = r.integer("lora_rank", Need::kOptional, 1, limits::kWidth)) {
    t.lora_rank = *v;
    if (m.hidden > 0 && *v > widest) {
      r.error("lora_rank", "a rank of " + std::to_string(*v) + " is not low: it must be at most the model's " +
                               std::to_string(widest) + " (hidden and ffn_hidden)");
    }
  }
  if (auto v = r.choice("lora_targets", workload::kLoraTargetNames, Need::kOptional)) {
    t.lora_targets = *v;
  }
  if (!t.adapters()) {
    for (const char* key : {"lora_rank", "lora_targets"}) {
      if (r.has(key)) {
        r.error(key, std::string(key) + " applies to method = \"lora\" or \"qlora\" (method is \"full\")");
      }
    }
  }
  if (t.method == workload::Method::kQlora && t.precision != DType::kBf16 && t.precision != DType::kFp16) {
    r.error("precision",
            std::string("QLoRA computes in bf16 or fp16 over its 4-bit weights, not ") + units::to_string(t.precision));
  }
  if (auto v = r.choice("offload_optimizer", workload::kOffloadNames, Need::kOptional)) {
    t.offload_optimizer = *v;
  }
  if (auto v = r.choice("offload_params", workload::kOffloadNames, Need::kOptional)) {
    t.offload_params = *v;
  }
  t.offload_activations = r.boolean("offload_activations", Need::kOptional).value_or(false);
}

}  // namespace

void read_training(Reader& r, Scenario& sc, RuntimeOverrides& overrides) {
  workload::Training t;
  if (sc.job.model.images()) {
    // An image is a sequence of one token (ResNet) or of its patch tokens and the class token (ViT).
    const std::int64_t per_image = sc.job.model.family == workload::Family::kVit ? sc.job.model.max_seq : 1;
    for (const char* key : {"tokens", "seq_len"}) {
      if (r.has(key)) {
        r.error(key, std::string("an image model trains on images: give images = ... instead of ") + key);
      }
    }
    if (auto v = r.number("images", Need::kRequired, Range::kPositive, limits::kTokens)) {
      t.tokens = *v * static_cast<double>(per_image);
    }
    t.seq_len = per_image;
  } else {
    if (r.has("images")) {
      r.error("images", "images is for image models (a ResNet or ViT preset); a transformer trains on tokens");
    }
    if (auto v = r.number("tokens", Need::kRequired, Range::kPositive, limits::kTokens)) {
      t.tokens = *v;
    }
    t.seq_len = r.integer("seq_len", Need::kRequired, 1, limits::kSequence).value_or(0);
  }
  t.global_batch = r.integer("global_batch", Need::kRequired, 1, limits::kBatch).value_or(0);
  sc.layout.micro_batch = r.integer("micro_batch", Need::kOptional, 1, limits::kBatch).value_or(1);
  sc.unset.micro_batch = !r.has("micro_batch");
  if (auto v = r.choice("precision", units::kDTypeNames, Need::kOptional,
                        {DType::kFp32, DType::kTf32, DType::kFp16, DType::kBf16, DType::kFp8})) {
    t.precision = *v;
  }
  if (auto v = r.choice("optimizer", workload::kOptimizerNames, Need::kOptional)) {
    t.optimizer = *v;
  }
  if (auto v = r.choice("recompute", workload::kRecomputeNames, Need::kOptional)) {
    sc.layout.recompute = *v;
  }
  read_fine_tuning(r, sc.job.model, t);
  overrides.flash_attention = r.boolean("flash_attention", Need::kOptional);
  overrides.where_flash = r.where("flash_attention");
  overrides.cuda_graphs = r.boolean("cuda_graphs", Need::kOptional);
  const workload::ModelShape& m = sc.job.model;
  const GpuSpec& g = sc.system.gpu;
  if (!g.id.empty() && !g.supports(t.precision)) {
    r.error("precision", std::string("the ") + g.name + " has no " + units::to_string(t.precision) + " support");
  }
  if (m.position == PositionKind::kLearned && m.max_seq > 0 && t.seq_len > m.max_seq) {
    r.error("seq_len", "seq_len " + std::to_string(t.seq_len) + " exceeds the model's learned positions (" +
                           std::to_string(m.max_seq) + ")");
  }
  r.finish();
  sc.job.training = t;
}

}  // namespace gpusim::scenario::detail
