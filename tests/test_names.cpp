// Names that help: suggestions for a misspelt id, command, option or report key (edit distance with
// transpositions, [damerau-1964]), one problem for an unknown preset, the operating system's reason
// for a file that cannot be read, and Hugging Face hub ids read from the local hub cache.
#include "cli_helpers.hpp"

using namespace gpusim;

namespace {

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

const std::string kHub = "HF_HUB_CACHE=" + test::source("tests/data/hf-hub");

}  // namespace

TEST_CASE("the edit distance counts insertions, deletions, substitutions and adjacent transpositions as one each",
          "[names]") {
  CHECK(base::edit_distance("", "") == 0);
  CHECK(base::edit_distance("abc", "") == 3);
  CHECK(base::edit_distance("kitten", "sitting") == 3);   // k->s, e->i, +g
  CHECK(base::edit_distance("rtx4900", "rtx4090") == 1);  // one transposition
  CHECK(base::edit_distance("ca", "abc") == 3);           // the restricted form: no edit inside a transposition
  CHECK(base::edit_distance("vllmm", "vllm") == 1);
}

TEST_CASE("the closest names are a few edits away, without case, closest first, or contain a short name", "[names]") {
  const std::vector<std::string> gpus = {"h100-nvl", "h100-sxm5-80gb", "rtx3090", "rtx4090", "rtx5090", "t4"};
  CHECK(base::closest_names("rtx4900", gpus).front() == "rtx4090");  // 1 edit before the 2-edit ones
  CHECK(base::closest_names("RTX4090", gpus) == std::vector<std::string>{"rtx4090", "rtx3090", "rtx5090"});
  CHECK(base::closest_names("h100", gpus) == std::vector<std::string>{"h100-nvl", "h100-sxm5-80gb"});
  CHECK(base::closest_names("mi300x", gpus).empty());
  CHECK(base::closest_names("", gpus).empty());
  CHECK(base::closest_names("rtx4090", gpus, 1).size() == 1);
  CHECK(base::did_you_mean("rtx4900", {"rtx4090"}) == "did you mean \"rtx4090\"?");
  CHECK(base::did_you_mean("zzz", gpus).empty());
}

TEST_CASE("an unknown GPU, model, runtime, link or host id names the close ids first", "[names][cli][errors]") {
  const std::string s = test::source("scenarios/gpt2-124m-rtx4090.toml");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--gpu rtx4900", "did you mean \"rtx4090\""},
      {"--set model.preset=llama3-8", "did you mean \"llama3-8b\""},
      {"--set runtime.name=vllmm", "did you mean \"vllm\""},
      {"--set system.intra_node=pcie44", "did you mean \"pcie4\""},
      {"--set system.host=desktop-ddr55", "did you mean \"desktop-ddr5\""},
  };
  for (const auto& [args, hint] : cases) {
    INFO(args);
    const test::Run r = test::run("estimate " + s + " " + args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains(hint) && Catch::Contains("known: "));
  }
  // Nothing close: the known ids alone.
  const test::Run far = test::run("estimate " + s + " --gpu quantum-9000");
  CHECK(far.code == 2);
  CHECK_THAT(far.err, !Catch::Contains("did you mean") && Catch::Contains("known: a100"));
}

TEST_CASE("an unknown model preset is one problem, not also the shape keys a preset would give", "[names][errors]") {
  const test::Run r =
      test::run("estimate " + test::source("scenarios/gpt2-124m-rtx4090.toml") + " --set model.preset=llama3-8");
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK_THAT(r.err, !Catch::Contains("missing required key"));
}

TEST_CASE("an unknown command, option or report key names the close ones", "[names][cli][errors]") {
  const test::Run command = test::run("estimat x.toml");
  CHECK(command.code == 2);
  CHECK_THAT(command.err, Catch::StartsWith("gpusim: unknown command \"estimat\" (did you mean \"estimate\"?)"));
  const test::Run option = test::run("estimate x.toml --gpuu rtx4090");
  CHECK(option.code == 2);
  CHECK_THAT(option.err, Catch::Contains("'--gpuu'") && Catch::Contains("did you mean \"--gpu\""));
  const test::Run metric =
      test::run("sweep " + test::source("scenarios/gpt2-124m-rtx4090.toml") + " --vary system.gpus=1,2 --svg " +
                (test::scratch() / "m.svg").string() + " --metric tokens_per_s");
  CHECK(metric.code == 2);
  CHECK_THAT(metric.err, Catch::Contains("did you mean \"throughput.tokens_per_s\""));
  CHECK_FALSE(std::filesystem::exists(test::scratch() / "m.svg"));
}

TEST_CASE("a file that cannot be read is reported with the operating system's reason", "[names][errors]") {
  const test::Run missing = test::run("estimate " + (test::scratch() / "no-such.toml").string());
  CHECK(missing.code == 2);
  CHECK_THAT(missing.err, Catch::Contains("cannot read scenario file: No such file or directory"));
  const test::Run folder = test::run("estimate " + test::source("scenarios"));
  CHECK(folder.code == 2);
  CHECK_THAT(folder.err, Catch::Contains("cannot read scenario file: it is a directory"));
}

TEST_CASE("a Hugging Face hub id is read from the local hub cache: the main revision, else the one snapshot",
          "[names][hf]") {
  // model import of the hub id gives the spec of the file its refs/main names, not of the snapshot
  // first in name order (which holds GPT-2).
  const test::Run hub = test::run_env(kHub, "model import meta-llama/Meta-Llama-3-8B");
  const test::Run file = test::run("model import " + test::source("tests/data/hf/Meta-Llama-3-8B.json"));
  REQUIRE(hub.code == 0);
  REQUIRE(file.code == 0);
  auto body = [](const std::string& text) {  // the spec without its comment lines, which name the source
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind('#', 0) != 0 && line.rfind("sources", 0) != 0) {
        out += line + "\n";
      }
    }
    return out;
  };
  CHECK(body(hub.out) == body(file.out));
  CHECK_THAT(hub.out, Catch::Contains("layers = 32"));
  const test::Run only = test::run_env(kHub, "model import openai-community/gpt2");
  REQUIRE(only.code == 0);
  CHECK_THAT(only.out, Catch::Contains("layers = 12"));
  // In a scenario: [model] hf_config = "org/name".
  auto scenario = [](const std::string& name, const std::string& hf_config) {
    return test::write_temp(
        name, "name = \"x\"\n[system]\ngpu = \"h100-sxm5-80gb\"\ngpus = 1\n[model]\nhf_config = \"" + hf_config +
                  "\"\n[training]\ntokens = 1e9\nseq_len = 2048\nglobal_batch = 8\n"
                  "micro_batch = 1\nprecision = \"bf16\"\n");
  };
  const test::Run by_id =
      test::run_env(kHub, "estimate " + scenario("hub.toml", "meta-llama/Meta-Llama-3-8B") + " --format json");
  const test::Run by_path = test::run(
      "estimate " + scenario("path.toml", test::source("tests/data/hf/Meta-Llama-3-8B.json")) + " --format json");
  REQUIRE(by_id.code == 0);
  REQUIRE(by_path.code == 0);
  CHECK(by_id.out == by_path.out);
}

TEST_CASE("a hub id the cache lacks says where it looked and how to get its config", "[names][hf][errors]") {
  const test::Run r = test::run_env(kHub, "model import meta-llama/Llama-3.3-70B-Instruct");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains(test::source("tests/data/hf-hub")) &&
                        Catch::Contains("huggingface-cli download meta-llama/Llama-3.3-70B-Instruct config.json"));
  // A path that is not a hub id is only a missing file.
  const test::Run path = test::run_env(kHub, "model import ./missing/config.json");
  CHECK(path.code == 2);
  CHECK_THAT(path.err, !Catch::Contains("hub id"));
}
