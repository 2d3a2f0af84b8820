// The CLI as a user meets it: exit codes, nothing on stdout for bad input, the JSON contract
// for every example scenario, and a golden text report (approval test: on a mismatch the new
// output is written next to the golden file as .received for review).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_helpers.hpp"
#include "helpers.hpp"

using namespace gpusim::test;

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

TEST_CASE("each report section's fields are contiguous, so no JSON object key repeats", "[cli][contract]") {
  // A section split in two becomes two "cost" objects in the JSON, and a parser keeps only the last.
  for (const char* s : {"scenarios/h100-1b.toml", "scenarios/llama3-70b-fp8-4xh100-serve.toml"}) {
    INFO(s);
    const gpusim::answer::Estimate e =
        gpusim::answer::estimate(gpusim::scenario::load_scenario_file(gpusim::test::catalog(), source(s)));
    std::vector<std::string> closed;
    std::string open;
    for (const gpusim::answer::Field& f : gpusim::answer::report_fields(e)) {
      if (f.section == open || *f.section == '\0') {
        continue;  // top-level keys are not an object
      }
      INFO(f.section);
      CHECK(std::find(closed.begin(), closed.end(), f.section) == closed.end());
      closed.push_back(open);
      open = f.section;
    }
  }
}

TEST_CASE("every example scenario's JSON carries every contract key of docs/report.md", "[cli][contract]") {
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
  check_golden("tests/golden/estimate-gpt2-124m-rtx4090.txt", r.out);
}

TEST_CASE("the text report of a serving scenario matches its golden file", "[cli][golden]") {
  const Run r = run("estimate " + source("scenarios/llama2-7b-decode-rtx4090.toml"));
  REQUIRE(r.code == 0);
  check_golden("tests/golden/estimate-llama2-7b-decode-rtx4090.txt", r.out);
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
  CHECK_THAT(fp8.out, Catch::Contains("cannot run: training.precision: the NVIDIA A100 SXM4 80GB has no fp8 support"));
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
