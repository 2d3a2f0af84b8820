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

// LoRA / QLoRA and the memory savers (docs/scenarios.md, [training]). The keys a runtime's recipe
// has defaults for are also noted in `given`.
void read_fine_tuning(Reader& r, const workload::ModelShape& m, workload::Training& t,
                      workload::RecipeDefaults& given) {
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
    given.lora_rank = *v;
    if (m.hidden > 0 && *v > widest) {
      r.error("lora_rank", "a rank of " + std::to_string(*v) + " is not low: it must be at most the model's " +
                               std::to_string(widest) + " (hidden and ffn_hidden)");
    }
  }
  if (auto v = r.choice("lora_targets", workload::kLoraTargetNames, Need::kOptional)) {
    t.lora_targets = *v;
    given.lora_targets = *v;
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
  given.master_weights = r.boolean("master_weights", Need::kOptional);
  given.optimizer_states = r.choice("optimizer_states", workload::kStatePrecisionNames, Need::kOptional);
  given.paged_optimizer = r.boolean("paged_optimizer", Need::kOptional);
  given.optimizer_in_backward = r.boolean("optimizer_in_backward", Need::kOptional);
}

// The narrower default wins: `over`'s set fields replace `into`'s.
void overlay(workload::RecipeDefaults& into, const workload::RecipeDefaults& over) {
  auto take = [](auto& a, const auto& b) {
    if (b) {
      a = b;
    }
  };
  take(into.master_weights, over.master_weights);
  take(into.optimizer, over.optimizer);
  take(into.optimizer_states, over.optimizer_states);
  take(into.paged_optimizer, over.paged_optimizer);
  take(into.optimizer_in_backward, over.optimizer_in_backward);
  take(into.recompute, over.recompute);
  take(into.lora_rank, over.lora_rank);
  take(into.lora_targets, over.lora_targets);
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
    if (auto v = r.choice("memory_format", workload::kMemoryFormatNames, Need::kOptional)) {
      if (sc.job.model.family != workload::Family::kResNet) {
        r.error("memory_format",
                "memory_format is the layout of a convolution network's activations (a ResNet); "
                "a ViT's patches are a sequence");
      }
      t.memory_format = *v;
    }
  } else {
    if (r.has("images")) {
      r.error("images", "images is for image models (a ResNet or ViT preset); a transformer trains on tokens");
    }
    if (r.has("memory_format")) {
      r.error("memory_format",
              "memory_format is the layout of a convolution network's activations (a ResNet); a "
              "transformer's are [batch, sequence, hidden]");
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
    overrides.training.optimizer = *v;
  }
  if (auto v = r.choice("recompute", workload::kRecomputeNames, Need::kOptional)) {
    sc.layout.recompute = *v;
    overrides.training.recompute = *v;
  }
  read_fine_tuning(r, sc.job.model, t, overrides.training);
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

void apply_recipe(Scenario& sc, const workload::RecipeDefaults& given) {
  if (!sc.job.training) {
    return;
  }
  workload::Training& t = *sc.job.training;
  const workload::Recipe& recipe = sc.runtime.recipe;
  const auto method = static_cast<std::size_t>(t.method);
  workload::RecipeDefaults d = recipe.all;
  overlay(d, recipe.method[method]);
  if (sc.system.gpus == 1) {
    overlay(d, recipe.single_device[method]);
  }
  overlay(d, given);
  t.master_weights = d.master_weights.value_or(true);
  t.optimizer = d.optimizer.value_or(workload::Optimizer::kAdamW);
  t.optimizer_states = d.optimizer_states;
  t.paged_optimizer = d.paged_optimizer.value_or(false);
  t.optimizer_in_backward = d.optimizer_in_backward.value_or(false);
  sc.layout.recompute = d.recompute.value_or(workload::Recompute::kNone);
  if (t.adapters()) {  // a rank and targets [training] gave are in `d`; else the recipe's, else the defaults
    const workload::Training defaults;
    t.lora_rank = d.lora_rank.value_or(defaults.lora_rank);
    t.lora_targets = d.lora_targets.value_or(defaults.lora_targets);
  }
}

void check_training(Reader& r, const Scenario& sc, const workload::RecipeDefaults& given) {
  using base::strfmt;
  const workload::Training& t = *sc.job.training;
  const workload::Layout& p = sc.layout;
  // A value the scenario left to the runtime's recipe says so in the message.
  auto from = [&](bool was_given, const char* key, const char* value) {
    return strfmt("%s = %s%s", key, value,
                  was_given ? "" : strfmt(" (the default of runtime \"%s\"'s recipe)", sc.runtime.id.c_str()).c_str());
  };
  const bool wide = units::is_wide(t.precision);
  const char* precision = units::to_string(t.precision);
  if (!t.master_weights && wide) {
    r.error(given.master_weights ? "master_weights" : "precision",
            from(given.master_weights.has_value(), "master_weights", "false") +
                strfmt(" drops the fp32 master copy of 16-bit training; precision \"%s\" keeps the weights in 32 "
                       "bits: use precision = \"bf16\", \"fp16\" or \"fp8\"",
                       precision));
  }
  if (t.optimizer_states) {
    const std::string value = strfmt("\"%s\"", base::name_in(workload::kStatePrecisionNames, *t.optimizer_states));
    const std::string key = from(given.optimizer_states.has_value(), "optimizer_states", value.c_str());
    if (t.optimizer == workload::Optimizer::kAdamW8bit && *t.optimizer_states != workload::StatePrecision::k8bit) {
      r.error("optimizer_states", key + " contradicts optimizer = \"adamw-8bit\", whose states are \"8-bit\"");
    } else if (t.optimizer == workload::Optimizer::kAdafactor) {
      r.error("optimizer_states", key +
                                      ": adafactor keeps factored moments (per row and column), not "
                                      "per-parameter states; accepted with adamw or sgd");
    } else if (wide && *t.optimizer_states == workload::StatePrecision::kHalf) {
      r.error("optimizer_states", key + strfmt(": the parameters are %s; accepted: \"fp32\" or \"8-bit\"", precision));
    }
  }
  if (t.paged_optimizer && t.offload_optimizer != workload::Offload::kNone) {
    r.error("paged_optimizer", from(given.paged_optimizer.has_value(), "paged_optimizer", "true") +
                                   " keeps the states on the GPU when they fit; offload_optimizer moves them and the "
                                   "step to the host: use one of the two");
  }
  if (!t.optimizer_in_backward) {
    return;
  }
  const std::string key = from(given.optimizer_in_backward.has_value(), "optimizer_in_backward", "true");
  const std::int64_t per_step = p.micro_batch * p.data;
  if (t.offload_optimizer != workload::Offload::kNone) {
    r.error("optimizer_in_backward", key +
                                         " steps on the GPU in the backward pass; offload_optimizer runs the step "
                                         "on the host: use one of the two");
  } else if (per_step > 0 && t.global_batch != per_step) {
    r.error(given.optimizer_in_backward ? "optimizer_in_backward" : "global_batch",
            key + strfmt(" applies each gradient as soon as it is computed, so gradients cannot accumulate over "
                         "micro-batches: global_batch (%lld) must equal micro_batch x data = %lld x %d = %lld (one "
                         "micro-batch per step)",
                         static_cast<long long>(t.global_batch), static_cast<long long>(p.micro_batch), p.data,
                         static_cast<long long>(per_step)));
  } else if (p.replicas() > 1 && p.zero < 3) {
    r.error("optimizer_in_backward",
            key + strfmt(" with %d data-parallel ranks needs each layer's gradients reduced in the backward pass: "
                         "[parallelism] zero = 3 (FSDP), got %d",
                         p.replicas(), p.zero));
  }
}

}  // namespace gpusim::scenario::detail
