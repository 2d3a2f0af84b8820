// gpusim model import CONFIG.json [-o FILE]: a Hugging Face transformers config.json written as a
// model spec file (app::import_model, report::model_spec_toml).
#include "cli/options.hpp"

namespace gpusim::cli {

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
             "usage: gpusim model import CONFIG.json|ORG/NAME [-o FILE]\n"
             "  import CONFIG.json  a Hugging Face transformers config.json (llama, mistral, qwen2, gemma,\n"
             "                      phi3, gpt2; mixtures of experts: mixtral, qwen2_moe, deepseek_v2/v3)\n"
             "                      as a model spec file with every\n"
             "                      key specs/README.md requires; save it as DIR/models/ID.toml and\n"
             "                      --specs DIR loads it as preset ID. Scenarios can also name the\n"
             "                      file directly: [model] hf_config = \"config.json\".\n"
             "  import ORG/NAME     a Hugging Face hub id, read from the local hub cache ($HF_HUB_CACHE,\n"
             "                      $HF_HOME/hub or ~/.cache/huggingface/hub); nothing is downloaded.\n"
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
  const app::ModelImportAnswer a = app::import_model(load_catalog_with_env(c.specs), {rest[1], c.out});
  write_outputs({{c.out, a.text}});
  return 0;
}

}  // namespace gpusim::cli
