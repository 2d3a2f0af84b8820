// The model import command (include/gpusim/app.hpp): a Hugging Face config.json as a model spec
// file, read back as `specs check` reads it before anyone writes it.
#include <cctype>

#include "gpusim/app.hpp"

namespace gpusim::app {

namespace {

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
void check_spec(const catalog::Catalog& catalog, const std::string& config, const std::string& out_path,
                const scenario::ImportedModel& imported, const std::string& text) {
  catalog::Catalog c = catalog;
  const std::string id = "imported-model";
  c.add_file(catalog::SpecKind::kModel, id,
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

ModelImportAnswer import_model(const catalog::Catalog& catalog, const ModelImportRequest& request) {
  ModelImportAnswer a{scenario::import_hf_config(request.config), {}};
  a.text = report::model_spec_toml(request.config, a.imported);
  check_spec(catalog, request.config, request.output_name, a.imported, a.text);
  return a;
}

}  // namespace gpusim::app
