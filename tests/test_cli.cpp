// The CLI as a user meets it: exit codes, nothing on stdout for bad input, the JSON contract
// for every example scenario, and a golden text report (approval test: on a mismatch the new
// output is written next to the golden file as .received for review).
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

namespace {

struct Run {
  int code = 0;
  std::string out;
  std::string err;
};

// A directory of this test process's own, so parallel test processes never share files.
std::filesystem::path scratch() {
  const auto dir = std::filesystem::temp_directory_path() / ("gpusim-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs gpusim with `args`, optionally prefixed by environment assignments ("VAR=value").
Run run_env(const std::string& env, const std::string& args) {
  const std::string err_file = scratch() / "stderr";
  const std::string cmd = env + " " + std::string(GPUSIM_BINARY) + " " + args + " 2>" + err_file;
  Run r;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) {
    r.out += buf.data();
  }
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  std::filesystem::remove(err_file);
  return r;
}

Run run(const std::string& args) { return run_env("", args); }

std::string source(const std::string& rel) { return std::string(GPUSIM_SOURCE_DIR) + "/" + rel; }

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = scratch() / name;
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST_CASE("estimate prints a report and exits 0", "[cli]") {
  const Run r = run("estimate " + source("scenarios/gpt2-124m-rtx4090.toml"));
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("bottleneck"));
  CHECK(r.err.empty());
}

TEST_CASE("bad input exits 2 with file:line:col on stderr and nothing on stdout", "[cli][errors]") {
  const std::string bad = write_temp("gpusim_bad.toml", R"(name = "bad"
[system]
gpu = "rtx4090"
gpus = 1
[model]
preset = "gpt2-124m"
[training]
tokens = 1e9
seq_len = 1024
global_batch = 8
precsion = "bf16"
)");
  const Run r = run("estimate " + bad + " --format json");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains(bad + ":11:1: training.precsion: unknown key (did you mean \"precision\"?)"));
}

TEST_CASE("an unknown override key exits 2", "[cli][errors]") {
  const Run r = run("estimate " + source("scenarios/gpt2-124m-rtx4090.toml") + " --set training.microbatch=4");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("training.microbatch: unknown key"));
}

TEST_CASE("a missing scenario file and an unknown command exit 2", "[cli][errors]") {
  CHECK(run("estimate /nonexistent/scenario.toml").code == 2);
  CHECK(run("frobnicate").code == 2);
  CHECK(run("estimate").code == 2);
  CHECK(run("estimate " + source("scenarios/gpt2-124m-rtx4090.toml") + " --format yaml").code == 2);
}

TEST_CASE("nothing is written to the -o file when the input is bad", "[cli][errors]") {
  const auto out = scratch() / "should_not_exist.json";
  std::filesystem::remove(out);
  const Run r = run("estimate " + source("scenarios/gpt2-124m-rtx4090.toml") + " --gpu nope -o " + out.string());
  CHECK(r.code == 2);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("every example scenario's JSON carries every DESIGN section 5 key", "[cli][contract]") {
  const char* keys[] = {"\"scenario\"",
                        "\"gpu\"",
                        "\"gpus\"",
                        "\"nodes\"",
                        "\"time_s\"",
                        "\"compute_s\"",
                        "\"communication_s\"",
                        "\"bubble_s\"",
                        "\"input_stall_s\"",
                        "\"overhead_s\"",
                        "\"tokens_per_s\"",
                        "\"tokens_per_s_per_gpu\"",
                        "\"samples_per_s\"",
                        "\"mfu\"",
                        "\"hfu\"",
                        "\"model_tflops_per_gpu\"",
                        "\"per_gpu_bytes\"",
                        "\"capacity_bytes\"",
                        "\"fits\"",
                        "\"weights_bytes\"",
                        "\"gradients_bytes\"",
                        "\"optimizer_bytes\"",
                        "\"activations_bytes\"",
                        "\"kv_cache_bytes\"",
                        "\"tokens\"",
                        "\"gpu_hours\"",
                        "\"time_to_first_token_s\"",
                        "\"time_per_output_token_s\"",
                        "\"output_tokens_per_s\"",
                        "\"request_latency_s\"",
                        "\"gpu_avg_w\"",
                        "\"energy_kwh\"",
                        "\"carbon_kg\"",
                        "\"cloud_usd\"",
                        "\"owned_usd\"",
                        "\"breakeven_days\"",
                        "\"bottleneck\"",
                        "\"advice\""};
  int scenarios = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source("scenarios"))) {
    if (entry.path().extension() != ".toml") {
      continue;
    }
    ++scenarios;
    INFO(entry.path().string());
    const Run r = run("estimate " + entry.path().string() + " --format json");
    REQUIRE(r.code == 0);
    for (const char* k : keys) {
      INFO(k);
      CHECK(r.out.find(k) != std::string::npos);
    }
    CHECK(r.out.find(": nan") == std::string::npos);
    CHECK(r.out.find(": inf") == std::string::npos);
    CHECK(r.out.find(": -inf") == std::string::npos);
  }
  CHECK(scenarios >= 8);
}

TEST_CASE("the text report of the GPT-2 4090 scenario matches its golden file", "[cli][golden]") {
  const Run r = run("estimate " + source("scenarios/gpt2-124m-rtx4090.toml"));
  REQUIRE(r.code == 0);
  const std::string golden_path = source("tests/golden/estimate-gpt2-124m-rtx4090.txt");
  std::ifstream in(golden_path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str() != r.out) {
    std::ofstream(golden_path + ".received") << r.out;
  }
  CHECK(ss.str() == r.out);
}

TEST_CASE("specs check passes on the catalog and fails with positions on a bad file", "[cli][specs]") {
  CHECK(run("specs check").code == 0);
  const std::string dir = (scratch() / "gpus").string();
  std::filesystem::create_directories(dir);
  const std::string bad = dir + "/typo.toml";
  std::ofstream(bad) << "base = \"h100-sxm5-80gb\"\nname = \"t\"\nsm_cont = 132\n";
  const Run r = run("specs check " + bad);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(bad + ":3:1: sm_cont: unknown key (did you mean \"sm_count\"?)"));
}

TEST_CASE("a spec directory given with --specs adds and overrides GPU files", "[cli][specs]") {
  const auto dir = scratch() / "overlay";
  std::filesystem::create_directories(dir / "gpus");
  std::ofstream(dir / "gpus" / "rtx4090-fast.toml")
      << "base = \"rtx4090\"\nname = \"fast 4090\"\n[memory]\nbandwidth = \"2 TB/s\"\n";
  const Run r = run("specs --specs " + dir.string() + " show rtx4090-fast");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("2 TB/s"));
  const Run e = run("estimate " + source("scenarios/gpt2-124m-rtx4090.toml") + " --specs " + dir.string() +
                    " --gpu rtx4090-fast --format json");
  CHECK(e.code == 0);
  CHECK_THAT(e.out, Catch::Contains("fast 4090"));
}

TEST_CASE("compare ranks GPUs and reports the ones that cannot run", "[cli][compare]") {
  const Run r =
      run("compare " + source("scenarios/gpt2-124m-rtx4090.toml") + " --gpus rtx4090,h100-sxm5-80gb,a100-sxm4-80gb");
  CHECK(r.code == 0);
  // The H100 finishes first: it ranks above the 4090.
  CHECK(r.out.find("h100-sxm5-80gb") < r.out.find("rtx4090  "));
  const Run fp8 = run("compare " + source("scenarios/gpt2-124m-rtx4090.toml") +
                      " --set training.precision=fp8 --gpus h100-sxm5-80gb,a100-sxm4-80gb");
  CHECK(fp8.code == 0);
  CHECK_THAT(fp8.out, Catch::Contains("cannot run: the NVIDIA A100 SXM4 80GB has no fp8 support"));
  CHECK(run("compare " + source("scenarios/gpt2-124m-rtx4090.toml") + " --gpus nope").code == 2);
}

TEST_CASE("GPUSIM_SPECS adds spec directories like --specs", "[cli][specs]") {
  const auto dir = scratch() / "env-overlay";
  std::filesystem::create_directories(dir / "gpus");
  std::ofstream(dir / "gpus" / "l4-env.toml") << "base = \"l4\"\nname = \"env L4\"\n";
  const Run r = run("specs show l4-env");
  CHECK(r.code == 2);  // not without the variable
  const Run e = run_env("GPUSIM_SPECS=" + dir.string(), "specs show l4-env");
  CHECK(e.code == 0);
  CHECK_THAT(e.out, Catch::Contains("env L4"));
}

TEST_CASE("validate reports on the shipped measurements and exits 0", "[cli][validate]") {
  const Run r = run("validate " + source("measurements"));
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("per category:") && Catch::Contains("not scored"));
  const Run json = run("validate " + source("measurements") + " --format json");
  CHECK(json.code == 0);
  CHECK_THAT(json.out, Catch::Contains("\"by_category\""));
}

TEST_CASE("validate --fail-above exits 1 when the median error is above the bound", "[cli][validate]") {
  CHECK(run("validate " + source("measurements") + " --fail-above 0.0001").code == 1);
  CHECK(run("validate " + source("measurements") + " --fail-above 50").code == 0);
}

TEST_CASE("a bad measurement file exits 2 with its position", "[cli][validate][errors]") {
  const std::string bad = write_temp("bad-measure.toml",
                                     "[[measurement]]\nid = \"x\"\ngpu = \"rtx4090\"\nbenchmark = \"gemm\"\nvalue = "
                                     "\"170 TFLOPS\"\ndtype = \"bf16\"\nm = 1\nn = 1\nk = 1\n");
  const Run r = run("validate " + bad);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains(bad + ":5:9: measurement[0].value:") && Catch::Contains("write TFLOP/s"));
}

TEST_CASE("calibrate writes an overlay that --specs loads", "[cli][calibrate]") {
  const auto out = scratch() / "overlay-cli";
  const Run r = run("calibrate " + source("measurements") + " -o " + out.string());
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("median before") && Catch::Contains("overlay written"));
  CHECK(std::filesystem::exists(out / "gpus" / "h100-sxm5-80gb.toml"));
  CHECK(run("specs check --specs " + out.string()).code == 0);
  CHECK(run("validate " + source("measurements") + " --specs " + out.string()).code == 0);
  CHECK(run("calibrate " + source("measurements")).code == 2);  // -o is required
}

namespace {
// Approval test: on a mismatch the new output is written beside the golden file as .received.
void check_golden(const std::string& rel, const std::string& actual) {
  const std::string path = source(rel);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str() != actual) {
    std::ofstream(path + ".received") << actual;
  }
  CHECK(ss.str() == actual);
}
}  // namespace

TEST_CASE("the roofline picture of the llm.c A100 scenario matches its golden SVG", "[cli][roofline][golden]") {
  const auto svg = scratch() / "roof.svg";
  const Run r = run("roofline " + source("scenarios/gpt2-124m-8xa100.toml") + " --svg " + svg.string());
  REQUIRE(r.code == 0);
  std::ifstream in(svg);
  std::stringstream ss;
  ss << in.rdbuf();
  check_golden("tests/golden/roofline-gpt2-124m-8xa100.svg", ss.str());
  check_golden("tests/golden/roofline-gpt2-124m-8xa100.txt", r.out);
}

TEST_CASE("roofline needs a GPU or a scenario and rejects a dtype the GPU lacks", "[cli][roofline][errors]") {
  CHECK(run("roofline").code == 2);
  const Run fp8 = run("roofline --gpu a100-sxm4-80gb --dtype fp8");
  CHECK(fp8.code == 2);
  CHECK_THAT(fp8.err, Catch::Contains("has no fp8 support"));
  const Run ok = run("roofline --gpu h100-sxm5-80gb --dtype fp8");
  CHECK(ok.code == 0);
  CHECK_THAT(ok.out, Catch::Contains("ridge vs DRAM"));
}

TEST_CASE("breakeven prints the curve and draws it", "[cli][breakeven]") {
  const auto svg = scratch() / "be.svg";
  const Run r = run("breakeven " + source("scenarios/breakeven-desktop.toml") + " --svg " + svg.string());
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("owning is cheaper over the lifetime above"));
  CHECK(std::filesystem::file_size(svg) > 1000);
  CHECK(run("breakeven " + source("scenarios/breakeven-desktop.toml") + " --format json").code == 0);
  CHECK(run("breakeven").code == 2);
}
