// The contract of validate, calibrate and roofline on the command line: exit codes, row counts,
// the overlay a calibration writes, and golden outputs.
#include <filesystem>
#include <string>

#include "cli_helpers.hpp"

using namespace gpusim::test;

TEST_CASE("validate reports on the shipped measurements, check and fit rows apart", "[cli][validate]") {
  const Run r = run("validate " + source("measurements"));
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("per category, check rows") && Catch::Contains("per category, fit rows") &&
                        Catch::Contains("not scored"));
  const Run json = run("validate " + source("measurements") + " --format json");
  CHECK(json.code == 0);
  CHECK_THAT(json.out, Catch::Contains("\"by_category_check\"") && Catch::Contains("\"by_role\""));
  const Run check = run("validate " + source("measurements") + " --role check --format csv");
  CHECK(check.code == 0);
  CHECK(check.out.find(",fit,") == std::string::npos);
  CHECK(run("validate " + source("measurements") + " --role some").code == 2);
}

TEST_CASE("validate's check rows match their golden file", "[cli][validate][golden]") {
  const Run r = run("validate " + source("measurements") + " --role check");
  REQUIRE(r.code == 0);
  check_golden("tests/golden/validate-check-rows.txt", r.out);
}

TEST_CASE("validate --fail-above exits 3 when the median error is above the bound", "[cli][validate]") {
  const Run over = run("validate " + source("measurements") + " --fail-above 0.0001");
  CHECK(over.code == 3);
  CHECK_THAT(over.err, Catch::Contains("exceeds 0.00 %"));
  CHECK(run("validate " + source("measurements") + " --fail-above 50").code == 0);
  CHECK(run("validate " + source("measurements") + " --fail-above -1").code == 2);
  const auto empty = scratch() / "no-measurements";
  std::filesystem::create_directories(empty);
  CHECK(run("validate " + empty.string() + " --fail-above 50").code == 2);  // no rows: not a pass
}

TEST_CASE("a bad measurement file exits 2 with its position", "[cli][validate][errors]") {
  const std::string bad = write_temp("bad-measure.toml",
                                     "[[measurement]]\nid = \"x\"\nrole = \"check\"\ngpu = \"rtx4090\"\nbenchmark = "
                                     "\"gemm\"\nvalue = \"170 TFLOPS\"\ndtype = \"bf16\"\nm = 1\nn = 1\nk = 1\n");
  const Run r = run("validate " + bad);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains(bad + ":6:9: measurement[0].value:") && Catch::Contains("write TFLOP/s"));
}

TEST_CASE("calibrate writes an overlay that --specs loads", "[cli][calibrate]") {
  const auto out = scratch() / "overlay-cli";
  const Run r = run("calibrate " + source("measurements") + " -o " + out.string());
  CHECK(r.code == 0);
  CHECK_THAT(r.out,
             Catch::Contains("median before") && Catch::Contains("(check rows)") && Catch::Contains("overlay written"));
  CHECK(std::filesystem::exists(out / "gpus" / "h100-sxm5-80gb.toml"));
  CHECK(run("specs check --specs " + out.string()).code == 0);
  CHECK(run("validate " + source("measurements") + " --specs " + out.string()).code == 0);
  CHECK(run("calibrate " + source("measurements")).code == 2);  // -o is required
  const std::string file = write_temp("not-a-dir", "x");
  CHECK(run("calibrate " + source("measurements") + " -o " + file).code == 2);
}

TEST_CASE("the roofline picture of the llm.c A100 scenario matches its golden SVG", "[cli][roofline][golden]") {
  const auto svg = scratch() / "roof.svg";
  const Run r = run("roofline " + source("scenarios/gpt2-124m-8xa100.toml") + " --svg " + svg.string());
  REQUIRE(r.code == 0);
  check_golden("tests/golden/roofline-gpt2-124m-8xa100.svg", read_text(svg));
  check_golden("tests/golden/roofline-gpt2-124m-8xa100.txt", r.out);
}

TEST_CASE("roofline needs a GPU or a scenario, rejects a dtype the GPU lacks and defaults to fp16 without bf16",
          "[cli][roofline][errors]") {
  CHECK(run("roofline").code == 2);
  const Run fp8 = run("roofline --gpu a100-sxm4-80gb --dtype fp8");
  CHECK(fp8.code == 2);
  CHECK_THAT(fp8.err, Catch::Contains("has no fp8 support"));
  CHECK(run("roofline --gpu a100-sxm4-80gb --dtype int4").code == 2);
  const Run ok = run("roofline --gpu h100-sxm5-80gb --dtype fp8");
  CHECK(ok.code == 0);
  CHECK_THAT(ok.out, Catch::Contains("ridge vs DRAM"));
  // Without --dtype, a GPU without bf16 highlights fp16; asked for by name, bf16 is refused.
  CHECK(run("roofline --gpu t4").code == 0);
  const Run t4 = run("roofline --gpus t4,v100-sxm2-32gb --svg " + (scratch() / "t4.svg").string());
  CHECK(t4.code == 0);
  CHECK_THAT(read_text(scratch() / "t4.svg"), Catch::Contains("Roofline: fp16 on 2 GPUs"));
  CHECK(run("roofline --gpu t4 --dtype bf16").code == 2);
}
