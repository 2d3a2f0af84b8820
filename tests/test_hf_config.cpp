// Hugging Face config.json import ([model] hf_config, `gpusim model import`): the published configs
// of the catalog's presets (tests/data/hf/, sources in its README) give the presets' shapes and
// therefore the same estimate; other dense models import and estimate; what gpusim cannot model is
// refused with the field, its value and its position.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cli_helpers.hpp"

using namespace gpusim;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) { return test::source("tests/data/hf/" + name); }

// The catalog's presets that have a published Hugging Face config, and that config.
const std::vector<std::pair<std::string, std::string>> kGpt2 = {{"gpt2-124m", "gpt2.json"},
                                                                {"gpt2-350m", "gpt2-medium.json"},
                                                                {"gpt2-774m", "gpt2-large.json"},
                                                                {"gpt2-1558m", "gpt2-xl.json"}};
const std::vector<std::pair<std::string, std::string>> kLlama = {
    {"llama2-7b", "Llama-2-7b-hf.json"},     {"llama2-13b", "Llama-2-13b-hf.json"},
    {"llama2-70b", "Llama-2-70b-hf.json"},   {"llama3-8b", "Meta-Llama-3-8B.json"},
    {"llama3-70b", "Meta-Llama-3-70B.json"}, {"llama3.1-405b", "Llama-3.1-405B.json"}};

// A training scenario on eight H100s whose [model] table is `model` (TOML lines).
std::string training(const std::string& model) {
  return "name = \"hf import\"\n[system]\ngpu = \"h100-sxm5-80gb\"\ngpus = 8\n[model]\n" + model +
         "\n[training]\ntokens = 1e9\nseq_len = 1024\nglobal_batch = 64\nmicro_batch = 1\n";
}

std::string toml_path(const std::string& path) { return "\"" + path + "\""; }

// Every shape key but the display name.
void check_same_shape(const workload::ModelShape& a, const workload::ModelShape& b) {
  CHECK(a.layers == b.layers);
  CHECK(a.hidden == b.hidden);
  CHECK(a.heads == b.heads);
  CHECK(a.kv_heads == b.kv_heads);
  CHECK(a.ffn_hidden == b.ffn_hidden);
  CHECK(a.ffn == b.ffn);
  CHECK(a.vocab == b.vocab);
  CHECK(a.tied_embeddings == b.tied_embeddings);
  CHECK(a.causal == b.causal);
  CHECK(a.norm == b.norm);
  CHECK(a.bias == b.bias);
  CHECK(a.position == b.position);
  CHECK(a.max_seq == b.max_seq);
  CHECK(a.dropout == b.dropout);
  REQUIRE(a.moe.has_value() == b.moe.has_value());
  if (a.moe) {
    CHECK(a.moe->experts == b.moe->experts);
    CHECK(a.moe->top_k == b.moe->top_k);
    CHECK(a.moe->expert_ffn_hidden == b.moe->expert_ffn_hidden);
    CHECK(a.moe->shared_ffn_hidden == b.moe->shared_ffn_hidden);
    CHECK(a.moe->dense_layers == b.moe->dense_layers);
    CHECK(a.moe->every == b.moe->every);
    CHECK(a.moe->capacity_factor == b.moe->capacity_factor);
  }
  REQUIRE(a.mla.has_value() == b.mla.has_value());
  if (a.mla) {
    CHECK(a.mla->q_lora_rank == b.mla->q_lora_rank);
    CHECK(a.mla->kv_lora_rank == b.mla->kv_lora_rank);
    CHECK(a.mla->qk_nope_head_dim == b.mla->qk_nope_head_dim);
    CHECK(a.mla->qk_rope_head_dim == b.mla->qk_rope_head_dim);
    CHECK(a.mla->v_head_dim == b.mla->v_head_dim);
  }
}

// The preset and its config.json give the same model, step time and memory.
void check_same_estimate(const std::string& preset, const std::string& config) {
  INFO(preset << " vs " << config);
  const Scenario from_preset = test::scenario(training("preset = \"" + preset + "\""));
  const Scenario from_hf = test::scenario(training("hf_config = " + toml_path(fixture(config))));
  check_same_shape(from_hf.job.model, from_preset.job.model);
  const Estimate a = answer::estimate(from_preset);
  const Estimate b = answer::estimate(from_hf);
  CHECK(b.params == Approx(a.params).epsilon(1e-12));
  CHECK(b.eval.step.time.value() == Approx(a.eval.step.time.value()).epsilon(1e-12));
  CHECK(b.eval.memory.total().value() == Approx(a.eval.memory.total().value()).epsilon(1e-12));
  CHECK(b.eval.memory.fits() == a.eval.memory.fits());
}

// `gpusim model import` writes a spec file that --specs loads back as a preset of the same shape.
void check_import_round_trip(const std::string& preset, const std::string& config) {
  INFO(preset << " vs " << config);
  const fs::path dir = test::scratch() / ("specs-" + preset);
  fs::create_directories(dir / "models");
  const std::string id = "hf-" + preset;
  const test::Run r =
      test::run("model import " + fixture(config) + " -o " + (dir / "models" / (id + ".toml")).string());
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());
  const Catalog c = load_catalog({dir.string()});
  check_same_shape(c.model(id), test::catalog().model(preset));
  CHECK(test::run("specs check --specs " + dir.string() + " " + (dir / "models" / (id + ".toml")).string()).code == 0);
}

// The diagnostics an import of `json` (written to a scratch file) throws.
std::vector<Diagnostic> import_errors(const std::string& name, const std::string& json) {
  const std::string path = test::write_temp(name, json);
  return test::diagnostics_of([&] { (void)scenario::import_hf_config(path); });
}

const char* kLlamaLike = R"({
  "model_type": "llama",
  "hidden_size": 4096,
  "intermediate_size": 11008,
  "max_position_embeddings": 4096,
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "vocab_size": 32000
})";

}  // namespace

TEST_CASE("GPT-2 configs give the gpt2 presets and their estimates", "[hf][gpt2]") {
  for (const auto& [preset, config] : kGpt2) {
    check_same_estimate(preset, config);
  }
  const scenario::ImportedModel small = scenario::import_hf_config(fixture("gpt2.json"));
  CHECK(small.model_type == "gpt2");
  CHECK(small.shape.name == "gpt2");  // no _name_or_path: the model type
  CHECK(small.shape.ffn_hidden == 4 * 768);
  CHECK(small.shape.position == workload::PositionKind::kLearned);
  CHECK(small.notes.empty());
}

TEST_CASE("Llama 2 and Llama 3 configs give the llama presets and their estimates", "[hf][llama]") {
  for (const auto& [preset, config] : kLlama) {
    check_same_estimate(preset, config);
  }
  const scenario::ImportedModel seven = scenario::import_hf_config(fixture("Llama-2-7b-hf.json"));
  CHECK(seven.shape.name == "meta-llama/Llama-2-7b-hf");  // the file's own name
  CHECK(seven.model_type == "llama");
  CHECK(seven.notes.empty());
}

TEST_CASE("mixture-of-experts configs give the MoE presets and their estimates", "[hf][moe]") {
  check_same_estimate("mixtral-8x7b", "Mixtral-8x7B-v0.1.json");
  check_import_round_trip("mixtral-8x7b", "Mixtral-8x7B-v0.1.json");
  const scenario::ImportedModel mixtral = scenario::import_hf_config(fixture("Mixtral-8x7B-v0.1.json"));
  REQUIRE(mixtral.shape.moe);
  CHECK(mixtral.shape.moe->experts == 8);  // num_local_experts
  CHECK(mixtral.model_type == "mixtral");
  // DeepSeek-V3's fields [deepseek-v3-config] give the deepseek-v3 preset, MLA included.
  const std::string deepseek = test::write_temp("DeepSeek-V3.json", R"({"model_type": "deepseek_v3",
    "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
    "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1, "n_routed_experts": 256,
    "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1, "q_lora_rank": 1536,
    "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "vocab_size": 129280, "max_position_embeddings": 163840, "tie_word_embeddings": false,
    "num_nextn_predict_layers": 1, "hidden_act": "silu"})");
  const scenario::ImportedModel v3 = scenario::import_hf_config(deepseek);
  check_same_shape(v3.shape, test::catalog().model("deepseek-v3"));
  CHECK(workload::total_params(v3.shape) == Approx(workload::total_params(test::catalog().model("deepseek-v3"))));
  REQUIRE(v3.notes.size() == 1);
  CHECK(v3.notes[0].find("num_nextn_predict_layers = 1") != std::string::npos);
  // Qwen1.5-MoE-A2.7B's fields [hf-qwen-moe-config].
  const std::string qwen = test::write_temp("Qwen1.5-MoE-A2.7B.json", R"({"model_type": "qwen2_moe",
    "hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4,
    "decoder_sparse_step": 1, "mlp_only_layers": [], "num_hidden_layers": 24, "num_attention_heads": 16,
    "num_key_value_heads": 16, "vocab_size": 151936, "max_position_embeddings": 8192,
    "tie_word_embeddings": false})");
  check_same_shape(scenario::import_hf_config(qwen).shape, test::catalog().model("qwen1.5-moe-a2.7b"));
}

TEST_CASE("gpusim model import writes spec files that --specs loads as the presets", "[hf][cli]") {
  for (const auto& pairs : {kGpt2, kLlama}) {
    for (const auto& [preset, config] : pairs) {
      check_import_round_trip(preset, config);
    }
  }
  // The file names its source and the field behind each value; a scenario runs on it.
  const test::Run r = test::run("model import " + fixture("Llama-2-70b-hf.json"));
  REQUIRE(r.code == 0);
  CHECK(r.out.find("Llama-2-70b-hf.json") != std::string::npos);
  CHECK(r.out.find("kv_heads = 8                  # num_key_value_heads") != std::string::npos);
  CHECK(r.out.find("name = \"llama\"") != std::string::npos);  // no _name_or_path in this copy
  const fs::path dir = test::scratch() / "specs-llama2-70b";
  const std::string scenario = test::write_temp("hf-70b.toml", training("preset = \"hf-llama2-70b\""));
  CHECK(test::run("estimate " + scenario + " --specs " + dir.string()).code == 0);
}

TEST_CASE("gpusim model has help and refuses a missing or unknown subcommand", "[hf][cli]") {
  const test::Run help = test::run("model --help");
  CHECK(help.code == 0);
  CHECK(help.out.find("usage: gpusim model import CONFIG.json") != std::string::npos);
  CHECK(test::run("--help").out.find("gpusim model    import CONFIG.json") != std::string::npos);
  CHECK(test::run("model").code == 2);
  CHECK(test::run("model export x.json").code == 2);
  CHECK(test::run("model import").code == 2);
  const std::string dbrx = test::write_temp("dbrx.json", R"({"model_type": "dbrx", "hidden_size": 6144})");
  const test::Run bad = test::run("model import " + dbrx);
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("mixture-of-experts models are not modelled yet (model_type = \"dbrx\")") != std::string::npos);
  CHECK(test::run("model import " + (test::scratch() / "no-such-config.json").string()).code == 2);
}

TEST_CASE("Mistral Qwen2 and Phi-3 configs import and estimate", "[hf]") {
  struct Case {
    const char* file;
    std::int64_t layers, hidden, heads, kv_heads, ffn_hidden, vocab, max_seq;
    const char* note;  // a word of the choice the mapping states
  };
  for (const Case& c :
       {Case{"Mistral-7B-v0.1.json", 32, 4096, 32, 8, 14336, 32000, 32768, "sliding_window = 4096"},
        Case{"Qwen2-7B-Instruct.json", 28, 3584, 28, 4, 18944, 152064, 32768, "q, k and v"},
        Case{"Phi-3-mini-4k-instruct.json", 32, 3072, 32, 32, 8192, 32064, 4096, "sliding_window = 2048"}}) {
    INFO(c.file);
    const scenario::ImportedModel m = scenario::import_hf_config(fixture(c.file));
    CHECK(m.shape.layers == c.layers);
    CHECK(m.shape.hidden == c.hidden);
    CHECK(m.shape.heads == c.heads);
    CHECK(m.shape.kv_heads == c.kv_heads);
    CHECK(m.shape.ffn_hidden == c.ffn_hidden);
    CHECK(m.shape.vocab == c.vocab);
    CHECK(m.shape.max_seq == c.max_seq);
    CHECK(m.shape.ffn == workload::FfnKind::kSwiglu);
    CHECK(m.shape.norm == workload::NormKind::kRmsNorm);
    CHECK_FALSE(m.shape.bias);
    CHECK_FALSE(m.shape.tied_embeddings);
    REQUIRE(m.notes.size() == 1);
    CHECK(m.notes[0].find(c.note) != std::string::npos);
    const Estimate e = answer::estimate(test::scenario(training("hf_config = " + toml_path(fixture(c.file)))));
    CHECK(std::isfinite(e.eval.step.time.value()));
    CHECK(e.eval.step.time.value() > 0);
    CHECK(std::isfinite(e.eval.memory.total().value()));
    CHECK(e.eval.memory.total().value() > 0);
    CHECK(e.params > 1e9);
  }
  // The choices reach the spec file's assumptions.
  const test::Run r = test::run("model import " + fixture("Qwen2-7B-Instruct.json"));
  REQUIRE(r.code == 0);
  CHECK(r.out.find("assumptions = [") != std::string::npos);
  CHECK(r.out.find("bias = false                  # Qwen2 has q/k/v biases only") != std::string::npos);
}

TEST_CASE("a scenario's hf_config is a third way beside preset and params", "[hf][scenario]") {
  const std::string llama = toml_path(fixture("Llama-2-7b-hf.json"));
  // Shape keys next to it override the file; the name follows the file unless given.
  const Scenario over = test::scenario(training("hf_config = " + llama + "\nmax_seq = 2048\nkv_heads = 8"));
  CHECK(over.job.model.max_seq == 2048);
  CHECK(over.job.model.kv_heads == 8);
  CHECK(over.job.model.layers == 32);
  CHECK(over.job.model.name == "meta-llama/Llama-2-7b-hf");
  CHECK(test::scenario(training("hf_config = " + llama + "\nname = \"mine\"")).job.model.name == "mine");
  // With preset or params it is an error.
  for (const char* other : {"preset = \"llama2-7b\"", "params = 7e9"}) {
    const auto ds = test::diagnostics_of([&] { test::scenario(training("hf_config = " + llama + "\n" + other)); });
    REQUIRE_FALSE(ds.empty());
    CHECK(ds[0].key == "model.hf_config");
    CHECK(ds[0].message == "give one of preset, params or hf_config, not several");
  }
  // A missing file names the path it looked for; a bad config's messages name the config.
  const auto missing = test::diagnostics_of([] { test::scenario(training("hf_config = \"no/such/config.json\"")); });
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].key == "model.hf_config");
  CHECK(missing[0].message == "no file \"no/such/config.json\" (looked for no/such/config.json)");
  const std::string olmoe =
      test::write_temp("olmoe.json", R"({"model_type": "llama", "hidden_size": 2048, "num_experts": 64})");
  const auto moe = test::diagnostics_of([&] { test::scenario(training("hf_config = " + toml_path(olmoe))); });
  REQUIRE(moe.size() == 1);
  CHECK(moe[0].pos.file == olmoe);
  CHECK(moe[0].key == "num_experts");
}

TEST_CASE("hf_config paths are relative to the scenario file or with --set to the working directory",
          "[hf][scenario]") {
  const fs::path dir = test::scratch() / "hf-relative";
  fs::create_directories(dir / "hf");
  fs::copy_file(fixture("Llama-2-13b-hf.json"), dir / "hf" / "config.json", fs::copy_options::overwrite_existing);
  const fs::path file = dir / "scenario.toml";
  std::ofstream(file) << training("hf_config = \"hf/config.json\"");
  CHECK(scenario::load_scenario_file(test::catalog(), file.string()).job.model.layers == 40);
  // From --set, the path is the working directory's.
  std::ofstream(dir / "preset.toml") << training("layers = 2");
  const std::string from_cwd = fs::relative(fixture("Llama-2-70b-hf.json"), fs::current_path()).string();
  const Scenario sc = scenario::load_scenario_file(test::catalog(), (dir / "preset.toml").string(),
                                                   {{"model.hf_config", "\"" + from_cwd + "\""}});
  CHECK(sc.job.model.layers == 2);  // the file's shape keys override the config's
  CHECK(sc.job.model.kv_heads == 8);
  CHECK(sc.job.model.vocab == 32000);
}

TEST_CASE("configs gpusim cannot model are refused with the field and its position", "[hf][errors]") {
  SECTION("mixture of experts of a type gpusim does not map") {
    const auto by_field =
        import_errors("llama-moe.json", "{\n  \"model_type\": \"llama\",\n  \"num_local_experts\": 8\n}\n");
    REQUIRE(by_field.size() == 1);
    CHECK(by_field[0].pos.line == 3);
    CHECK(by_field[0].message == "mixture-of-experts models are not modelled yet (num_local_experts = 8)");
    const auto by_type = import_errors("qwen3-moe.json", R"({"model_type": "qwen3_moe", "hidden_size": 2048})");
    REQUIRE(by_type.size() == 1);
    CHECK(by_type[0].message == "mixture-of-experts models are not modelled yet (model_type = \"qwen3_moe\")");
  }
  SECTION("a mapped mixture of experts with a field it cannot hold") {
    const auto listed = import_errors("qwen-moe.json", R"({"model_type": "qwen2_moe", "hidden_size": 2048,
      "intermediate_size": 5632, "max_position_embeddings": 8192, "num_attention_heads": 16,
      "num_hidden_layers": 24, "vocab_size": 151936, "num_experts": 60, "num_experts_per_tok": 4,
      "moe_intermediate_size": 1408, "mlp_only_layers": [0, 5]})");
    REQUIRE(listed.size() == 1);
    CHECK(listed[0].key == "mlp_only_layers");
    const auto missing = import_errors("deepseek.json", R"({"model_type": "deepseek_v3", "hidden_size": 7168,
      "intermediate_size": 18432, "max_position_embeddings": 4096, "num_attention_heads": 128,
      "num_hidden_layers": 61, "vocab_size": 129280, "n_routed_experts": 256, "num_experts_per_tok": 8,
      "moe_intermediate_size": 2048, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128})");
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].key == "kv_lora_rank");
    CHECK(missing[0].message == "missing required key");
  }
  SECTION("unknown model types list the known ones") {
    const auto ds = import_errors("bert.json", "{\n  \"model_type\": \"bert\"\n}\n");
    REQUIRE(ds.size() == 1);
    CHECK(ds[0].pos.line == 2);
    CHECK(ds[0].pos.column == 3);
    CHECK(ds[0].message ==
          "unknown model type \"bert\" (known: \"llama\", \"mistral\", \"qwen2\", \"gemma\", \"phi3\", \"gpt2\", "
          "\"mixtral\", \"qwen2_moe\", \"deepseek_v2\", \"deepseek_v3\")");
    const auto arch = import_errors("arch.json", R"({"architectures": ["BertForMaskedLM"]})");
    REQUIRE(arch.size() == 1);
    CHECK(arch[0].key == "architectures");
    // Without model_type, a known architectures entry picks the mapping.
    const std::string path =
        test::write_temp("gpt2-arch.json", R"({"architectures": ["GPT2LMHeadModel"], "n_layer": 2, "n_embd": 64,
                                               "n_head": 4, "n_positions": 128, "vocab_size": 100})");
    CHECK(scenario::import_hf_config(path).shape.ffn_hidden == 256);
  }
  SECTION("a head dimension other than hidden / heads") {
    // Gemma-7B's shape: 16 heads of 256 on a 3072-wide residual stream.
    const auto ds = import_errors("gemma-7b.json", R"({"model_type": "gemma", "head_dim": 256, "hidden_size": 3072,
      "intermediate_size": 24576, "max_position_embeddings": 8192, "num_attention_heads": 16,
      "num_hidden_layers": 28, "num_key_value_heads": 16, "vocab_size": 256000, "hidden_act": "gelu"})");
    REQUIRE(ds.size() == 1);
    CHECK(ds[0].key == "head_dim");
    CHECK(ds[0].message.find("head_dim = 256 differs from hidden_size / num_attention_heads = 3072 / 16 = 192") == 0);
    // Gemma-2B's 8 heads of 256 on 2048 fit: a tied GeGLU model, modelled as swiglu.
    const std::string path = test::write_temp("gemma-2b.json", R"({"model_type": "gemma", "head_dim": 256,
      "hidden_size": 2048, "intermediate_size": 16384, "max_position_embeddings": 8192, "num_attention_heads": 8,
      "num_hidden_layers": 18, "num_key_value_heads": 1, "vocab_size": 256000, "hidden_act": "gelu"})");
    const scenario::ImportedModel g = scenario::import_hf_config(path);
    CHECK(g.shape.kv_heads == 1);
    CHECK(g.shape.tied_embeddings);
    CHECK(g.shape.ffn == workload::FfnKind::kSwiglu);
    REQUIRE(g.notes.size() == 1);
    CHECK(g.notes[0].find("hidden_act = \"gelu\"") == 0);
  }
}

TEST_CASE("malformed configs give positioned errors and never crash", "[hf][errors]") {
  SECTION("a JSON syntax error gives the line and column") {
    const auto ds =
        import_errors("syntax.json", "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 4096\n  \"x\": 1\n}\n");
    REQUIRE(ds.size() == 1);
    CHECK(ds[0].pos.line == 4);
    CHECK(ds[0].pos.column == 5);  // where the parser stopped: the end of the unexpected "x"
    CHECK(ds[0].message.find("JSON syntax error: ") == 0);
    for (const char* text :
         {"", "{", "[1, 2]", "\"text\"", "{\"a\": }", "\xff\xfe{}", "{\"model_type\": \"llama\"}}"}) {
      INFO(text);
      CHECK_FALSE(import_errors("junk.json", text).empty());
    }
    CHECK(import_errors("deep.json", std::string(100000, '[')).at(0).message ==
          "JSON nested more than 64 deep: not a Hugging Face config.json");
  }
  SECTION("a wrong type names the key and the value") {
    std::string text = kLlamaLike;
    text.replace(text.find("4096,"), 5, "\"4096\",");
    const auto ds = import_errors("type.json", text);
    REQUIRE(ds.size() == 1);
    CHECK(ds[0].format() ==
          (test::scratch() / "type.json").string() + ":3:3: hidden_size: expected a whole number, got \"4096\"");
    std::string tied = kLlamaLike;
    tied.replace(tied.find("\"vocab_size\""), 0, "\"tie_word_embeddings\": \"no\", ");
    CHECK(import_errors("tied.json", tied).at(0).message == "expected true or false, got \"no\"");
  }
  SECTION("counts out of range use the scenario's ranges") {
    for (const auto& [from, to, message] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"\"num_hidden_layers\": 32", "\"num_hidden_layers\": -1", "must be between 1 and 100000, got -1"},
             {"\"num_hidden_layers\": 32", "\"num_hidden_layers\": 0", "must be between 1 and 100000, got 0"},
             {"\"vocab_size\": 32000", "\"vocab_size\": 1e30", "expected a whole number, got 1e+30"},
             {"\"vocab_size\": 32000", "\"vocab_size\": 18446744073709551615",
              "must be between 1 and 10000000, got 18446744073709551615"},
             {"\"hidden_size\": 4096", "\"hidden_size\": 40.5", "expected a whole number, got 40.5"},
             {"\"max_position_embeddings\": 4096", "\"max_position_embeddings\": null",
              "expected a whole number, got null"}}) {
      std::string text = kLlamaLike;
      text.replace(text.find(from), from.size(), to);
      INFO(to);
      const auto ds = import_errors("range.json", text);
      REQUIRE(ds.size() == 1);
      CHECK(ds[0].message == message);
    }
    // A whole-number float is a count, as in scenario files.
    std::string text = kLlamaLike;
    text.replace(text.find("32000"), 5, "3.2e4");
    CHECK(scenario::import_hf_config(test::write_temp("float.json", text)).shape.vocab == 32000);
  }
  SECTION("missing keys and inconsistent heads") {
    const auto ds = import_errors("missing.json", R"({"model_type": "llama", "hidden_size": 4096})");
    CHECK(ds.size() == 5);  // layers, heads, intermediate_size, vocab_size, max_position_embeddings
    std::string text = kLlamaLike;
    text.replace(text.find("\"vocab_size\""), 0, "\"num_key_value_heads\": 5, ");
    CHECK(import_errors("kv.json", text).at(0).message ==
          "num_key_value_heads (5) must divide num_attention_heads (32)");
    CHECK_FALSE(import_errors("no-type.json", R"({"hidden_size": 4096})").empty());
  }
}
