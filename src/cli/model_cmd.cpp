// gpusim model import CONFIG.json [-o FILE]: a Hugging Face transformers config.json written as a
// model spec file (specs/README.md, models/<id>.toml) with every key the format requires, each
// commented with the JSON field it came from, so that --specs DIR loads it as a preset.
#include <algorithm>
#include <cctype>

#include "cli/options.hpp"

namespace gpusim::cli {

namespace {

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += base::strfmt("\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Text for a comment: one line, whatever the file path holds.
std::string one_line(std::string s) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      c = ' ';
    }
  }
  return s;
}

std::string model_toml(const std::string& source, const scenario::ImportedModel& imported) {
  const workload::ModelShape& m = imported.shape;
  auto n = [](std::int64_t v) { return std::to_string(v); };
  auto yes = [](bool b) { return std::string(b ? "true" : "false"); };
  const std::vector<std::pair<std::string, std::string>> values = {
      {"name", toml_string(m.name)},
      {"layers", n(m.layers)},
      {"hidden", n(m.hidden)},
      {"heads", n(m.heads)},
      {"kv_heads", n(m.kv_heads)},
      {"ffn_hidden", n(m.ffn_hidden)},
      {"ffn", toml_string(base::name_in(workload::kFfnNames, m.ffn))},
      {"vocab", n(m.vocab)},
      {"tied_embeddings", yes(m.tied_embeddings)},
      {"causal", yes(m.causal)},
      {"norm", toml_string(base::name_in(workload::kNormNames, m.norm))},
      {"bias", yes(m.bias)},
      {"position", toml_string(base::name_in(workload::kPositionNames, m.position))},
      {"max_seq", n(m.max_seq)},
  };
  std::string out = "# " + one_line(m.name) +
                    ", imported by `gpusim model import` from the Hugging Face config.json\n" + "# " +
                    one_line(source) + " (model_type \"" + one_line(imported.model_type) + "\").\n" +
                    "# Save it as DIR/models/ID.toml: --specs DIR then loads it as preset ID (specs/README.md).\n";
  // `prefix`: the table a key sits in, as the importer's field list names it ("moe." for [moe]).
  auto emit = [&](const std::string& prefix, const std::vector<std::pair<std::string, std::string>>& kv) {
    for (const auto& [key, value] : kv) {
      std::string line = key + " = " + value;
      for (const auto& [k, field] : imported.fields) {
        if (k == prefix + key) {
          line.resize(std::max<std::size_t>(line.size() + 1, 30), ' ');
          line += "# " + one_line(field);
        }
      }
      out += line + "\n";
    }
  };
  emit("", values);
  if (m.moe) {
    out += "[moe]\n";
    emit("moe.", {{"experts", n(m.moe->experts)},
                  {"top_k", n(m.moe->top_k)},
                  {"expert_ffn_hidden", n(m.moe->expert_ffn_hidden)},
                  {"shared_ffn_hidden", n(m.moe->shared_ffn_hidden)},
                  {"dense_layers", n(m.moe->dense_layers)},
                  {"every", n(m.moe->every)}});
  }
  if (m.mla) {
    out += "[mla]\n";
    emit("mla.", {{"q_lora_rank", n(m.mla->q_lora_rank)},
                  {"kv_lora_rank", n(m.mla->kv_lora_rank)},
                  {"qk_nope_head_dim", n(m.mla->qk_nope_head_dim)},
                  {"qk_rope_head_dim", n(m.mla->qk_rope_head_dim)},
                  {"v_head_dim", n(m.mla->v_head_dim)}});
  }
  out += "[meta]\nsources = [" + toml_string("Hugging Face config.json: " + source) + "]\n";
  if (!imported.notes.empty()) {
    out += "assumptions = [\n";
    for (const auto& note : imported.notes) {
      out += "  " + toml_string(note) + ",\n";
    }
    out += "]\n";
  }
  return out;
}

// The config.json fields a problem of the written spec comes from, each with the spec key it gives:
// those mapped to the problem's key, or to a key of its table that the message names as a word
// ("dense_layers (4) leaves no ..." under [moe]).
std::vector<std::pair<std::string, std::string>> fields_behind(const scenario::ImportedModel& imported,
                                                               const Diagnostic& d) {
  auto word = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '-'; };
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, field] : imported.fields) {
    const std::string last = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
    bool named = false;
    for (std::size_t at = d.message.find(last); at != std::string::npos; at = d.message.find(last, at + 1)) {
      const std::size_t end = at + last.size();
      named = named || ((at == 0 || !word(d.message[at - 1])) && (end == d.message.size() || !word(d.message[end])));
    }
    const bool in_table = d.key.empty() || key.rfind(d.key + ".", 0) == 0;
    if (key == d.key || (in_table && named)) {
      out.emplace_back(field.substr(0, field.find(" (")), key);  // "first_k_dense_replace (absent: 0)": the name
    }
  }
  return out;
}

// The spec as `specs check` and --specs read it: a config that maps to a spec the reader refuses
// is refused here, naming the config.json fields behind each problem, and nothing is written.
void check_spec(const Catalog& catalog, const std::string& config, const std::string& out_path,
                const scenario::ImportedModel& imported, const std::string& text) {
  Catalog c = catalog;
  const std::string id = "imported-model";
  c.add_file(SpecKind::kModel, id,
             catalog::SpecFile{out_path.empty() || out_path == "-" ? "<output>" : out_path, text});
  try {
    (void)c.model(id);
  } catch (const InputError& e) {
    std::vector<Diagnostic> problems;
    for (const Diagnostic& d : e.diagnostics()) {
      std::string fields;
      std::string keys;
      for (const auto& [field, key] : fields_behind(imported, d)) {
        fields += (fields.empty() ? "" : ", ") + field;
        keys += (keys.empty() ? "" : ", ") + key;
      }
      const std::string problem = (d.key.empty() ? "" : d.key + ": ") + d.message;
      const std::string why = keys.empty() ? "the model spec it maps to cannot be loaded"
                                           : "maps to " + keys + ", which no model spec can hold";
      problems.push_back(
          Diagnostic{SourcePos{config}, fields,
                     why + " (" + problem + "; specs check would refuse the file); nothing was written"});
    }
    throw InputError(problems);
  }
}

}  // namespace

int run_model(const std::vector<std::string>& args) {
  Common c;
  std::vector<std::string> rest;
  po::options_description d("options");
  add_common(d, c, false);
  d.add_options()("output,o", po::value<std::string>(&c.out), "write the model spec file to FILE instead of stdout")(
      "args", po::value<std::vector<std::string>>(&rest), "import CONFIG.json");
  po::positional_options_description pos;
  pos.add("args", -1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim model import CONFIG.json [-o FILE]\n"
             "  import CONFIG.json  a Hugging Face transformers config.json (llama, mistral, qwen2, gemma,\n"
             "                      phi3, gpt2; mixtures of experts: mixtral, qwen2_moe, deepseek_v2/v3)\n"
             "                      as a model spec file with every\n"
             "                      key specs/README.md requires; save it as DIR/models/ID.toml and\n"
             "                      --specs DIR loads it as preset ID. Scenarios can also name the\n"
             "                      file directly: [model] hf_config = \"config.json\".\n"
             "                      The spec is read back as `specs check` reads it before it is written:\n"
             "                      a config it cannot hold (dense layers covering every layer, say) is\n"
             "                      refused with exit 2, naming the config.json fields, and nothing is written.")) {
    return 0;
  }
  if (rest.empty() || rest[0] != "import") {
    throw UsageError(rest.empty() ? "expected import CONFIG.json"
                                  : "unknown model command \"" + rest[0] + "\" (expected import CONFIG.json)");
  }
  if (rest.size() != 2) {
    throw UsageError("model import needs one CONFIG.json");
  }
  const scenario::ImportedModel imported = scenario::import_hf_config(rest[1]);
  const std::string text = model_toml(rest[1], imported);
  check_spec(load_catalog_with_env(c.specs), rest[1], c.out, imported, text);
  write_outputs({{c.out, text}});
  return 0;
}

}  // namespace gpusim::cli
