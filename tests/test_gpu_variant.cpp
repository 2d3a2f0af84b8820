// GPU what-ifs (app::GpuVariant): a patch over the GPU's spec file that scales its DRAM bandwidth or
// SM clock, or sets its PCIe generation, read back by the spec reader; and the rule that more
// bandwidth or a faster clock is never slower.
#include "cli_helpers.hpp"

using namespace gpusim;

namespace {

std::string refused_field(const app::GpuVariant& v) {
  try {
    app::check(v);
  } catch (const app::RequestError& e) {
    return e.option();
  }
  return "(none)";
}

double step_seconds(const std::string& scenario, const app::GpuVariant& v) {
  app::EstimateRequest r;
  r.scenario = app::ScenarioSource{test::source("scenarios/" + scenario), std::nullopt};
  r.bands = false;
  r.variant = v;
  return app::estimate(test::catalog(), r).estimate.eval.step.time.value();
}

}  // namespace

TEST_CASE("a GPU variant scales the DRAM bandwidth and, with the clock, every compute peak and clock",
          "[app][variant]") {
  const hardware::GpuSpec g = test::catalog().gpu("h100-sxm5-80gb");
  app::GpuVariant v;
  v.memory_bandwidth = 2;
  v.clock = 1.1;
  const hardware::GpuSpec w = app::with_gpu_variant(test::catalog(), g.id, v).gpu(g.id);
  CHECK(w.memory_bandwidth.value() == Approx(2 * g.memory_bandwidth.value()).epsilon(1e-15));
  CHECK(w.boost_clock.value() == Approx(1.1 * g.boost_clock.value()).epsilon(1e-15));
  CHECK(w.max_clock.value() == Approx(1.1 * g.max_clock.value()).epsilon(1e-15));
  for (const auto& [dt, key] : units::kDTypeNames) {
    INFO(key);
    REQUIRE(w.supports(dt) == g.supports(dt));
    if (g.supports(dt)) {
      CHECK(w.peak_for(dt).value() == Approx(1.1 * g.peak_for(dt).value()).epsilon(1e-15));
    }
  }
  // Operations per SM per clock, what the kernel model derives from the peak, are the silicon's.
  CHECK(w.peak_for(DType::kBf16).value() / w.boost_clock.value() ==
        Approx(g.peak_for(DType::kBf16).value() / g.boost_clock.value()).epsilon(1e-14));
  CHECK(w.memory_latency.value() == Approx(g.memory_latency.value()).epsilon(1e-15));  // DRAM: seconds
  CHECK(w.memory_capacity.value() == g.memory_capacity.value());
  CHECK(w.tdp.value() == g.tdp.value());
  CHECK(w.pcie_gen == g.pcie_gen);
}

TEST_CASE("a GPU variant's PCIe generation gives GPUs without NVLink the link of that generation", "[app][variant]") {
  // Two RTX 4090s (PCIe 4, no NVLink) talk over their PCIe generation's link (docs/scenarios.md).
  const std::string text = test::read_text(test::source("scenarios/llama2-7b-full-bf16-4x4090-fsdp.toml"));
  app::EstimateRequest r;
  r.scenario = app::ScenarioSource{"fsdp.toml", text};
  r.bands = false;
  const app::EstimateAnswer base = app::estimate(test::catalog(), r);
  REQUIRE(base.scenario.system.gpu.pcie_gen == 4);
  CHECK(base.scenario.system.intra_node.id == "pcie4");
  r.variant.pcie_gen = 5;
  const app::EstimateAnswer gen5 = app::estimate(test::catalog(), r);
  CHECK(gen5.scenario.system.gpu.pcie_gen == 5);
  CHECK(gen5.scenario.system.intra_node.id == "pcie5");
  CHECK(gen5.estimate.eval.step.time.value() <= base.estimate.eval.step.time.value());
}

TEST_CASE("more DRAM bandwidth or a faster SM clock is never slower", "[app][variant]") {
  for (const char* scenario : {"llama2-7b-decode-rtx4090.toml", "gpt2-124m-rtx4090.toml", "llama3-8b-8xh100.toml",
                               "llama3-70b-fp8-4xh100-serve.toml"}) {
    INFO(scenario);
    const double base = step_seconds(scenario, {});
    app::GpuVariant bw;
    bw.memory_bandwidth = 2;
    app::GpuVariant clock;
    clock.clock = 1.2;
    CHECK(step_seconds(scenario, bw) <= base * (1 + 1e-12));
    CHECK(step_seconds(scenario, clock) <= base * (1 + 1e-12));
  }
  // Decoding one sequence reads every weight per token: DRAM-bound, it speeds up with the bandwidth.
  app::GpuVariant bw;
  bw.memory_bandwidth = 2;
  CHECK(step_seconds("llama2-7b-decode-rtx4090.toml", bw) < 0.75 * step_seconds("llama2-7b-decode-rtx4090.toml", {}));
}

TEST_CASE("a GPU variant outside its ranges, or over several GPUs, is refused naming gpu_variant",
          "[app][variant][errors]") {
  CHECK(refused_field({}) == "(none)");
  for (const double f : {0.0, 0.05, 11.0, -1.0, std::nan(""), HUGE_VAL}) {
    INFO(f);
    app::GpuVariant bw;
    bw.memory_bandwidth = f;
    CHECK(refused_field(bw) == "gpu_variant");
    app::GpuVariant clock;
    clock.clock = f;
    CHECK(refused_field(clock) == "gpu_variant");
  }
  for (const int gen : {2, 7}) {
    app::GpuVariant pcie;
    pcie.pcie_gen = gen;
    CHECK(refused_field(pcie) == "gpu_variant");
  }
  app::RooflineRequest several;
  several.gpus = {"rtx4090", "h100-sxm5-80gb"};
  several.variant.memory_bandwidth = 2;
  CHECK_THROWS_AS(app::roofline(test::catalog(), several), app::RequestError);
  app::GpuVariant unknown_gpu;
  unknown_gpu.clock = 2;
  CHECK_THROWS_AS(app::gpu_variant_patch(test::catalog(), "no-such-gpu", unknown_gpu), InputError);
}

TEST_CASE("a GPU variant's patch saved under --specs gives the command line the same estimate", "[app][variant][cli]") {
  app::GpuVariant v;
  v.memory_bandwidth = 1.5;
  v.clock = 0.8;
  const catalog::SpecFile patch = app::gpu_variant_patch(test::catalog(), "rtx4090", v);
  const auto dir = test::scratch() / "variant";
  std::filesystem::create_directories(dir / "gpus");
  { std::ofstream(dir / "gpus" / "rtx4090.toml") << patch.text; }
  const std::string scenario = test::source("scenarios/gpt2-124m-rtx4090.toml");
  const test::Run cli = test::run("estimate " + scenario + " --specs " + dir.string() + " --format json");
  REQUIRE(cli.code == 0);
  app::EstimateRequest r;
  r.scenario = app::ScenarioSource{scenario, std::nullopt};
  r.variant = v;
  CHECK(cli.out == report::estimate_json(app::estimate(test::catalog(), r).estimate));
}

TEST_CASE(
    "the command line's GPU variant refuses an unknown key, a key twice, a value that is not a number and a fractional "
    "generation, with exit 2 and nothing written",
    "[app][variant][cli][errors]") {
  const std::string scenario = test::source("scenarios/gpt2-124m-rtx4090.toml");
  const auto out = test::scratch() / "variant-refused.json";
  for (const char* bad : {"mem=2", "clock=1.1,clock=1.2", "clock=fast", "clock=", "pcie_gen=4.5", "pcie_gen=1e30",
                          "memory_bandwidth=2,", "memory_bandwidth=0.01", "pcie_gen=2"}) {
    INFO(bad);
    std::filesystem::remove(out);
    const test::Run r = test::run("estimate " + scenario + " --gpu-variant '" + bad + "' -o " + out.string());
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("--gpu-variant"));
    CHECK_FALSE(std::filesystem::exists(out));
  }
  const test::Run ok = test::run("estimate " + scenario + " --gpu-variant memory_bandwidth=2,clock=1.1,pcie_gen=5");
  CHECK(ok.code == 0);
  CHECK_THAT(ok.out, Catch::Contains("what-if: memory bandwidth x2, clock x1.1, PCIe 5"));
}
