// [model] of a scenario: a catalog preset, a parameter count, or a Hugging Face config.json as
// the base shape, then the shape keys the scenario gives over it and the defaults they imply.
// Apart from the other tables because it is the one that reads files beside the scenario.
#include <filesystem>

#include "scenario/internal.hpp"

namespace gpusim::scenario::detail {

using base::strfmt;
using parse::Need;
using parse::Range;
using parse::Reader;
using workload::FfnKind;
using workload::NormKind;

namespace {

// [model] hf_config names a file relative to the scenario file's directory (as a measurement
// row's `scenario` does), or to the working directory when it comes from --set.
std::string hf_config_path(const Reader& r, const std::string& value) {
  namespace fs = std::filesystem;
  const fs::path p(value);
  const std::string from = r.where("hf_config").file;
  if (p.is_absolute() || from.rfind("--set ", 0) == 0) {
    return value;
  }
  return (fs::path(from).parent_path() / p).lexically_normal().string();
}

}  // namespace

void read_model(Reader& r, const catalog::Catalog& cat, workload::ModelShape& m) {
  const auto preset = r.string("preset", Need::kOptional);
  const auto params = r.number("params", Need::kOptional, Range::kPositive, limits::kParams);
  const auto hf_config = r.string("hf_config", Need::kOptional);
  if (preset && params) {
    r.error("params", "give either preset or params, not both");
  }
  if (r.has("hf_config") && (r.has("preset") || r.has("params"))) {
    r.error("hf_config", "give one of preset, params or hf_config, not several");
  }
  bool have_base = false;
  if (preset) {
    if (!cat.has(catalog::SpecKind::kModel, *preset)) {
      r.error("preset", "unknown model preset \"" + *preset + "\" (" +
                            cat.known_ids_near(catalog::SpecKind::kModel, *preset) + ")");
      have_base = true;  // the one problem: the shape keys a preset would give are not missing too
    } else {
      m = cat.model(*preset);
      have_base = true;
    }
  } else if (params) {
    const auto vocab = r.integer("vocab", Need::kOptional, 1, limits::kWidth).value_or(32000);
    if (auto shape = workload::shape_from_params(*params, vocab)) {
      m = *shape;
    } else {
      r.error("params", "no standard shape (head_dim 128, hidden ~ 128 x layers) has " + strfmt("%g", *params) +
                            " parameters within 10 %; give layers, hidden, heads and ffn instead");
    }
    have_base = true;
  } else if (r.has("params")) {
    have_base = true;  // a bad params value was reported already; missing shape keys would only add noise
  } else if (hf_config) {
    have_base = true;
    std::string file = hf_config_path(r, *hf_config);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec) && parse::looks_like_hub_id(*hf_config)) {
      // Not a file: a Hugging Face hub id, read from the local hub cache when it holds it.
      file = parse::find_hub_config(*hf_config).value_or(file);
    }
    if (!std::filesystem::is_regular_file(file, ec)) {
      r.error("hf_config", parse::looks_like_hub_id(*hf_config)
                               ? "no file \"" + *hf_config + "\" (looked for " + file +
                                     "), and as a Hugging Face hub id no snapshot of it with a config.json in " +
                                     parse::hub_cache() + ": download it (huggingface-cli download " + *hf_config +
                                     " config.json) or give the path of a local config.json"
                               : "no file \"" + *hf_config + "\" (looked for " + file + ")");
    } else {
      try {
        m = parse::read_hf_config(parse::read_file(file, "Hugging Face config.json"), file).shape;
      } catch (const InputError& e) {
        r.diagnostics().append(e.diagnostics());
      }
    }
  } else if (r.has("hf_config")) {
    have_base = true;  // a bad hf_config value was reported already
  }
  if (auto v = r.string("name", Need::kOptional)) {
    m.name = *v;
  }
  if (m.images()) {
    // An image model's shape comes whole from its preset (specs/models); shape keys do not apply.
    for (const char* key : {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "ffn", "vocab", "tied_embeddings",
                            "causal", "norm", "bias", "position", "max_seq", "dropout"}) {
      if (r.has(key)) {
        r.error(key, "preset \"" + preset.value_or("") + "\" is an image model (" +
                         base::name_in(workload::kFamilyNames, m.family) + "): its shape comes whole from the preset");
      }
    }
    r.finish();
    return;
  }
  if (!have_base) {
    m.kv_heads = 0;
    m.ffn_hidden = 0;
    for (const char* key : {"layers", "hidden", "heads", "vocab", "ffn"}) {
      if (!r.has(key)) {
        r.error(key, "missing required key (or give preset = \"...\", params = ... or hf_config = \"...\")");
      }
    }
  }
  const bool had_ffn_hidden = r.has("ffn_hidden");
  const bool had_norm = r.has("norm");
  parse::read_model_keys(r, m, Need::kOptional);
  if (!have_base) {
    if (m.kv_heads == 0) {
      m.kv_heads = m.heads;
    }
    if (!had_norm) {
      m.norm = m.ffn == FfnKind::kGelu ? NormKind::kLayerNorm : NormKind::kRmsNorm;
    }
    if (m.name.empty()) {
      m.name = "custom transformer";
    }
  }
  if (!had_ffn_hidden && (!have_base || r.has("hidden") || r.has("ffn"))) {
    // 4h for gelu (GPT-2); 8/3 h rounded up to a multiple of 256 for swiglu (Llama [touvron-2023]).
    m.ffn_hidden = m.ffn == FfnKind::kGelu ? 4 * m.hidden : ((8 * m.hidden / 3 + 255) / 256) * 256;
  }
  parse::check_model(r, m);
  r.finish();
}

}  // namespace gpusim::scenario::detail
