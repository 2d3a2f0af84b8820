// `gpusim model import`'s output: a Hugging Face config.json as a model spec file
// (specs/README.md, models/<id>.toml) with every key the format requires, each commented with the
// JSON field it came from, so that --specs DIR loads it as a preset.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpusim/report.hpp"

namespace gpusim::report {

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

}  // namespace

std::string model_spec_toml(const std::string& source, const scenario::ImportedModel& imported) {
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

}  // namespace gpusim::report
