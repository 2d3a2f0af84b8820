// Hugging Face transformers config.json -> gpusim model-shape keys (the mapping, field by field and
// per model type, is documented in docs/scenarios.md under [model] hf_config). nlohmann/json is used
// here only. What gpusim's shape cannot express is refused with the field that says so: mixtures of
// experts other than Mixtral, Qwen2-MoE and DeepSeek-V2/V3 (hf_moe.cpp), a head dimension other
// than hidden / heads, an unknown model type.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <map>

#include "parse/internal.hpp"
#include "parse/parse.hpp"

namespace gpusim::parse {

namespace {

using json = nlohmann::json;
using base::strfmt;
using workload::FfnKind;
using workload::NormKind;
using workload::PositionKind;

// A value for a message: scalars as written, containers by kind (never dumped: they may be large).
std::string show(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string: {
      std::string s = v.get<std::string>();
      if (s.size() > 80) {
        s = s.substr(0, 77) + "...";
      }
      return "\"" + s + "\"";
    }
    default:
      return v.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

// The model types gpusim maps, and the architectures entries that name them when model_type is absent.
constexpr std::pair<const char*, const char*> kArchitectures[] = {
    {"LlamaForCausalLM", "llama"}, {"MistralForCausalLM", "mistral"}, {"Qwen2ForCausalLM", "qwen2"},
    {"GemmaForCausalLM", "gemma"}, {"Phi3ForCausalLM", "phi3"},       {"GPT2LMHeadModel", "gpt2"}};
// Fields that give a mixture-of-experts model its expert count (Mixtral, DeepSeek-V2/V3, Qwen2-MoE
// and OLMoE, DBRX), and model types that are mixtures whatever their fields say.
constexpr const char* kExpertFields[] = {"num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts"};
constexpr const char* kMoeTypes[] = {"qwen3_moe",  "dbrx",   "olmoe",   "jamba",
                                     "granitemoe", "phimoe", "minimax", "llama4"};

bool is_moe_type(const std::string& type) {
  for (const char* t : kHfMoeTypes) {
    if (type == t) {
      return true;
    }
  }
  return false;
}

std::string known_types() {
  std::string out;
  for (const char* t : kHfModelTypes) {
    out += (out.empty() ? "\"" : ", \"") + std::string(t) + "\"";
  }
  return out;
}

class Importer {
 public:
  Importer(const json& root, Scan scan, std::string_view text, const std::string& path)
      : root_(root), scan_(std::move(scan)), text_(text), path_(path) {}

  [[nodiscard]] SourcePos where(std::string_view key) const {
    const auto it = scan_.keys.find(key);
    return it == scan_.keys.end() ? SourcePos{path_} : position(text_, it->second, path_);
  }
  void error(std::string_view key, const std::string& message) { diags_.add(where(key), std::string(key), message); }

  // The value of a top-level key; nullptr when absent or null (null means "the default" in HF configs).
  [[nodiscard]] const json* value(std::string_view key) const {
    const auto it = root_.find(key);
    return it == root_.end() || it->is_null() ? nullptr : &*it;
  }

  // A whole number in [min, max] (the TOML readers' rule: a float that is a whole number counts).
  std::optional<std::int64_t> count(std::string_view key, bool required, std::int64_t min, std::int64_t max) {
    const json* v = value(key);
    if (v == nullptr) {
      if (required) {
        error(key, root_.contains(key) ? "expected a whole number, got null" : "missing required key");
      }
      return std::nullopt;
    }
    std::optional<std::int64_t> n;
    if (v->is_number_unsigned()) {
      const auto u = v->get<std::uint64_t>();
      n = u > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(u);
    } else if (v->is_number_integer()) {
      n = v->get<std::int64_t>();
    } else if (v->is_number_float()) {
      n = whole_number(v->get<double>());
    }
    if (const std::string problem = count_problem(n, min, max); !problem.empty()) {
      error(key, problem + ", got " + show(*v));
      return std::nullopt;
    }
    return n;
  }

  std::optional<bool> flag(std::string_view key) {
    const json* v = value(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_boolean()) {
      error(key, "expected true or false, got " + show(*v));
      return std::nullopt;
    }
    return v->get<bool>();
  }

  std::optional<std::string> string(std::string_view key) {
    const json* v = value(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_string()) {
      error(key, "expected a string, got " + show(*v));
      return std::nullopt;
    }
    return v->get<std::string>();
  }

  [[nodiscard]] Diagnostics& diagnostics() { return diags_; }
  [[nodiscard]] const json& root() const { return root_; }

 private:
  const json& root_;
  Scan scan_;
  std::string_view text_;
  std::string path_;
  Diagnostics diags_;
};

// Fields of a key that is either given or defaulted by the transformers config class.
std::string field_or_default(const Importer& in, std::string_view key, const std::string& fallback) {
  return in.value(key) != nullptr ? std::string(key) : std::string(key) + " absent: " + fallback;
}

// model_type, or the type its architectures entry names; empty (with a diagnostic) when neither.
std::string model_type_of(Importer& in) {
  if (auto t = in.string("model_type")) {
    return *t;
  }
  if (in.diagnostics().list().empty()) {
    if (const json* a = in.value("architectures");
        a != nullptr && a->is_array() && !a->empty() && a->front().is_string()) {
      for (const auto& [arch, type] : kArchitectures) {
        if (a->front().get<std::string>() == arch) {
          return type;
        }
      }
      in.error("architectures", "no model_type, and architectures[0] = " + show(a->front()) +
                                    " names no model type gpusim maps (known: " + known_types() + ")");
      return {};
    }
    in.error("model_type", "missing required key (a transformers config.json names its model_type)");
  }
  return {};
}

// Refuses mixtures of experts: by an expert count above one, or by a model type that is one.
bool refuse_moe(Importer& in, const std::string& type) {
  if (is_moe_type(type)) {
    return false;
  }
  for (const char* f : kExpertFields) {
    const json* v = in.value(f);
    if (v != nullptr && v->is_number() && v->get<double>() > 1) {
      in.error(f, "mixture-of-experts models are not modelled yet (" + std::string(f) + " = " + show(*v) + ")");
      return true;
    }
  }
  for (const char* t : kMoeTypes) {
    if (type == t) {
      in.error("model_type", "mixture-of-experts models are not modelled yet (model_type = \"" + type + "\")");
      return true;
    }
  }
  return false;
}

// Llama and its descendants: pre-norm RMSNorm, rotary positions, a gated three-matrix FFN.
void read_llama_family(Importer& in, const std::string& type, HfConfig& out) {
  workload::ModelShape& m = out.shape;
  auto& fields = out.fields;
  m.layers = in.count("num_hidden_layers", true, 1, limits::kLayers).value_or(0);
  m.hidden = in.count("hidden_size", true, 1, limits::kWidth).value_or(0);
  m.heads = in.count("num_attention_heads", true, 1, limits::kWidth).value_or(0);
  // transformers: num_key_value_heads = None means multi-head attention (LlamaConfig and its kin).
  m.kv_heads = in.count("num_key_value_heads", false, 1, limits::kWidth).value_or(m.heads);
  m.ffn_hidden = in.count("intermediate_size", true, 1, limits::kWidth).value_or(0);
  m.vocab = in.count("vocab_size", true, 1, limits::kWidth).value_or(0);
  m.max_seq = in.count("max_position_embeddings", true, 1, limits::kSequence).value_or(0);
  // GemmaConfig ties the output projection to the embedding by default; the others do not.
  const bool tied_default = type == "gemma";
  m.tied_embeddings = in.flag("tie_word_embeddings").value_or(tied_default);
  m.ffn = FfnKind::kSwiglu;
  m.norm = NormKind::kRmsNorm;
  m.position = PositionKind::kRope;
  m.causal = true;

  // gpusim's head dimension is hidden / heads; a config that states another one (Gemma-7B: 256
  // against 3072 / 16 = 192, Mistral-Nemo) describes projections gpusim's shape cannot hold.
  // DeepSeek's MLA has head widths of its own (hf_moe.cpp); transformers may store one as head_dim.
  const bool mla = type.rfind("deepseek", 0) == 0;
  if (const auto hd = mla ? std::nullopt : in.count("head_dim", false, 1, limits::kWidth);
      hd && m.heads > 0 && m.hidden > 0) {
    if (m.hidden % m.heads != 0 || *hd != m.hidden / m.heads) {
      in.error("head_dim",
               strfmt("head_dim = %lld differs from hidden_size / num_attention_heads = %lld / %lld = %g: "
                      "gpusim models the head dimension as hidden / heads and cannot express this model",
                      static_cast<long long>(*hd), static_cast<long long>(m.hidden), static_cast<long long>(m.heads),
                      static_cast<double>(m.hidden) / static_cast<double>(m.heads)));
    }
  }

  // Activation: every one of these model types gates its FFN (gate, up, down). SiLU is SwiGLU;
  // Gemma's GELU gate (GeGLU) has the same three matrices and FLOPs, so it is modelled as swiglu.
  std::string act_key = "hidden_act";
  if (type == "gemma" && in.value("hidden_activation") != nullptr) {
    act_key = "hidden_activation";  // GemmaConfig prefers it over hidden_act
  }
  const std::string act = in.string(act_key).value_or("silu");
  if (act != "silu" && act != "swish") {
    out.notes.push_back(act_key + " = \"" + act + "\": a gated FFN with this activation has SwiGLU's three " +
                        "matrices and FLOPs; modelled as ffn = \"swiglu\"");
  }

  // Biases. gpusim's `bias` puts one on every linear layer (QKV, attention output, FFN). Where a
  // model carries them on a subset only, bias = false is the closer choice: those biases are a few
  // parameters per layer and their adds run in the GEMM epilogues, while bias = true would also add
  // bias gradients over the FFN's wide outputs.
  m.bias = false;
  std::string bias_field = "no bias fields (" + type + " has no biases)";
  if (type == "llama") {
    // LlamaConfig: attention_bias covers q, k, v and o; mlp_bias covers gate, up and down.
    const bool attention = in.flag("attention_bias").value_or(false);
    const bool mlp = in.flag("mlp_bias").value_or(false);
    m.bias = attention && mlp;
    bias_field = "attention_bias and mlp_bias";
    if (attention != mlp) {
      out.notes.push_back(std::string(attention ? "attention_bias" : "mlp_bias") +
                          " = true alone: biases on part of the linear layers are not modelled (bias = false)");
    }
  } else if (type == "gemma") {
    bias_field = "attention_bias (Gemma's MLP has none)";
    if (in.flag("attention_bias").value_or(false)) {
      out.notes.push_back(
          "attention_bias = true: biases on the attention projections only are not modelled "
          "(bias = false)");
    }
  } else if (type == "qwen2" || type == "qwen2_moe") {
    // transformers' Qwen2Attention builds q_proj, k_proj and v_proj with bias=True, o_proj and the
    // MLP without: there is no config field for it.
    bias_field = "Qwen2 has q/k/v biases only (no config field)";
    const double share =
        m.layers > 0 && m.hidden > 0 && m.heads > 0 && m.hidden % m.heads == 0
            ? static_cast<double>(m.layers) * static_cast<double>(m.hidden + 2 * m.kv_dim()) / workload::total_params(m)
            : 0;
    out.notes.push_back(
        strfmt("Qwen2's q, k and v projections carry biases and its other linear layers none; "
               "bias = false leaves out those %.4f %% of the parameters",
               100 * share));
  }

  // Sliding-window attention is not modelled: attention spans the whole causal context, which is
  // exact for sequences up to the window.
  const bool sliding = type == "qwen2" || type == "qwen2_moe" ? in.flag("use_sliding_window").value_or(false) : true;
  if (const auto w = in.count("sliding_window", false, 1, limits::kSequence); sliding && w && *w < m.max_seq) {
    out.notes.push_back(
        strfmt("sliding_window = %lld is not modelled: attention is counted over the whole causal "
               "context (exact for sequences up to %lld tokens)",
               static_cast<long long>(*w), static_cast<long long>(*w)));
  }

  fields = {{"layers", "num_hidden_layers"},
            {"hidden", "hidden_size"},
            {"heads", "num_attention_heads"},
            {"kv_heads", field_or_default(in, "num_key_value_heads", "num_attention_heads")},
            {"ffn_hidden", "intermediate_size"},
            {"ffn", act_key + ", gated (gate, up, down)"},
            {"vocab", "vocab_size"},
            {"tied_embeddings", field_or_default(in, "tie_word_embeddings", tied_default ? "true" : "false")},
            {"causal", "decoder"},
            {"norm", "RMSNorm"},
            {"bias", bias_field},
            {"position", "rotary"},
            {"max_seq", "max_position_embeddings"}};
}

// GPT-2: learned positions, LayerNorm, a two-matrix GELU FFN, biases everywhere (Conv1D), tied
// embeddings.
void read_gpt2(Importer& in, HfConfig& out) {
  workload::ModelShape& m = out.shape;
  m.layers = in.count("n_layer", true, 1, limits::kLayers).value_or(0);
  m.hidden = in.count("n_embd", true, 1, limits::kWidth).value_or(0);
  m.heads = in.count("n_head", true, 1, limits::kWidth).value_or(0);
  m.kv_heads = m.heads;
  // GPT2MLP: inner_dim = n_inner if not None else 4 * hidden_size.
  const auto inner = in.count("n_inner", false, 1, limits::kWidth);
  m.ffn_hidden = inner.value_or(4 * m.hidden);
  m.vocab = in.count("vocab_size", true, 1, limits::kWidth).value_or(0);
  // n_positions is the size of the position table; older configs give n_ctx beside it (equal).
  const char* positions_key =
      in.value("n_positions") == nullptr && in.value("n_ctx") != nullptr ? "n_ctx" : "n_positions";
  m.max_seq = in.count(positions_key, true, 1, limits::kSequence).value_or(0);
  m.tied_embeddings = in.flag("tie_word_embeddings").value_or(true);  // PretrainedConfig's default
  m.ffn = FfnKind::kGelu;
  m.norm = NormKind::kLayerNorm;
  m.bias = true;
  m.position = PositionKind::kLearned;
  m.causal = true;
  const std::string act = in.string("activation_function").value_or("gelu_new");
  if (act.rfind("gelu", 0) != 0) {
    out.notes.push_back("activation_function = \"" + act +
                        "\": the same elementwise pass as GELU between the two FFN matrices; modelled as "
                        "ffn = \"gelu\"");
  }
  out.fields = {{"layers", "n_layer"},
                {"hidden", "n_embd"},
                {"heads", "n_head"},
                {"kv_heads", "n_head (multi-head attention)"},
                {"ffn_hidden", inner ? std::string("n_inner") : std::string("n_inner null: 4 x n_embd")},
                {"ffn", "activation_function, two matrices"},
                {"vocab", "vocab_size"},
                {"tied_embeddings", field_or_default(in, "tie_word_embeddings", "true")},
                {"causal", "decoder"},
                {"norm", "LayerNorm"},
                {"bias", "Conv1D layers carry biases"},
                {"position", "learned (wpe)"},
                {"max_seq", positions_key}};
}

}  // namespace

HfConfig read_hf_config(std::string_view text, const std::string& path) {
  Scan positions = scan(text);
  if (positions.too_deep) {
    throw InputError(
        {Diagnostic{position(text, *positions.too_deep, path), "",
                    strfmt("JSON nested more than %d deep: not a Hugging Face config.json", kMaxJsonNesting)}});
  }
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // nlohmann's byte is 1-based and points at the last byte it read.
    std::string what = e.what();
    if (const auto colon = what.find(": "); colon != std::string::npos && what.rfind("[json.exception", 0) == 0) {
      what = what.substr(colon + 2);
    }
    for (char& c : what) {  // "last read: '...'" quotes the input, which need not be text
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
        c = '?';
      }
    }
    throw InputError({Diagnostic{position(text, e.byte > 0 ? e.byte - 1 : 0, path), "", "JSON syntax error: " + what}});
  } catch (const json::out_of_range&) {  // a number past a double's range (scan found it)
    const auto& [at, number] = positions.overflow.value_or(std::pair<std::size_t, std::string>{0, "more"});
    std::string key;  // the top-level key whose value holds it: the last one before it
    std::size_t latest = 0;
    for (const auto& [k, start] : positions.keys) {
      if (start < at && start >= latest) {
        key = k;
        latest = start;
      }
    }
    throw InputError(
        {Diagnostic{position(text, at, path), key,
                    "a number must be within a double's range (magnitude at most 1.8e308), got " + number}});
  }
  if (!root.is_object()) {
    throw InputError({Diagnostic{SourcePos{path, 1, 1}, "",
                                 "expected a JSON object (a transformers config.json), got " + show(root)}});
  }
  Importer in(root, std::move(positions), text, path);
  HfConfig out;
  const std::string type = model_type_of(in);
  if (!type.empty() && !refuse_moe(in, type)) {
    bool known = false;
    for (const char* t : kHfModelTypes) {
      known = known || type == t;
    }
    if (!known) {
      in.error("model_type", "unknown model type \"" + type + "\" (known: " + known_types() + ")");
    } else if (type == "gpt2") {
      read_gpt2(in, out);
    } else {
      read_llama_family(in, type, out);
      if (is_moe_type(type)) {
        const HfFields fields{
            [&in](std::string_view k, bool req, std::int64_t lo, std::int64_t hi) { return in.count(k, req, lo, hi); },
            [&in](std::string_view k) {
              const json* v = in.value(k);
              return v != nullptr && v->is_array() && !v->empty();
            },
            [&in](std::string_view k, const std::string& msg) { in.error(k, msg); }};
        read_hf_moe(fields, type, out);
      }
    }
  }
  in.diagnostics().throw_if_any();

  workload::ModelShape& m = out.shape;
  const char* heads_key = type == "gpt2" ? "n_head" : "num_attention_heads";
  if (m.hidden % m.heads != 0) {
    in.error(heads_key, strfmt("%s (%lld) must divide %s (%lld)", heads_key, static_cast<long long>(m.heads),
                               type == "gpt2" ? "n_embd" : "hidden_size", static_cast<long long>(m.hidden)));
  } else if (m.heads % m.kv_heads != 0) {
    in.error("num_key_value_heads", strfmt("num_key_value_heads (%lld) must divide num_attention_heads (%lld)",
                                           static_cast<long long>(m.kv_heads), static_cast<long long>(m.heads)));
  }
  in.diagnostics().throw_if_any();

  // The name the file gives itself (the hub id it was saved from), else its model type.
  const auto name = in.string("_name_or_path");
  in.diagnostics().throw_if_any();
  m.name = name && !name->empty() ? *name : type;
  out.fields.insert(out.fields.begin(), {"name", name && !name->empty() ? "_name_or_path" : "model_type"});
  out.model_type = type;
  // Training dropout (attn_pdrop, resid_pdrop, attention_dropout) is left at gpusim's 0, as in the
  // catalog's presets: LLM pretraining runs without it, and [model] dropout sets it.
  return out;
}

}  // namespace gpusim::parse
