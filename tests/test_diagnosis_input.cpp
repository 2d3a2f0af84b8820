// A step that stalls on its input pipeline is input-bound whatever the GPU's largest part: the step
// is as long as the pipeline takes (step/evaluator.cpp), so no faster GPU part shortens it; and
// advice that shortens the time per token by less than 1 % is not given.
#include "cli_helpers.hpp"

using namespace gpusim;

namespace {

answer::Estimate on_4090_with_cpu_time(const std::string& per_sample) {
  app::EstimateRequest r;
  r.scenario = app::ScenarioSource{test::source("scenarios/gpt2-124m-h100-input-bound.toml"), std::nullopt};
  r.gpu = "rtx4090";
  r.sets = {"input.cpu_time_per_sample=\"" + per_sample + "\""};
  r.bands = false;
  return app::estimate(test::catalog(), r).estimate;
}

}  // namespace

TEST_CASE("a step that stalls on its input is input-bound even when compute is its largest part", "[diagnosis]") {
  const answer::Estimate e = on_4090_with_cpu_time("10 ms");
  const step::StepBreakdown& s = e.eval.step;
  REQUIRE(s.input_stall.value() > 0);
  REQUIRE(s.gemm > s.input_stall);  // compute is the largest part of the step
  CHECK(e.diagnosis.bottleneck == explain::Bottleneck::kInput);
  CHECK(e.diagnosis.share == Approx(s.input_stall / s.time));
  for (const explain::Advice& a : e.advice) {
    CHECK(a.kind != explain::AdviceKind::kFp8);  // a faster GPU only lengthens the stall
  }
}

TEST_CASE("advice whose variant moves the time per token by less than 1 % is not given", "[diagnosis]") {
  // Just below the stall: fp8 would halve the GEMMs, and the input pipeline would then set the step.
  const answer::Estimate e = on_4090_with_cpu_time("8 ms");
  REQUIRE(e.eval.step.input_stall.value() == 0);
  REQUIRE(e.diagnosis.bottleneck == explain::Bottleneck::kCompute);
  for (const explain::Advice& a : e.advice) {
    if (a.before && a.after) {
      CHECK(1.0 - a.after->time_per_token / a.before->time_per_token >= 0.01);
    }
    CHECK(a.kind != explain::AdviceKind::kFp8);
  }
  // Without the input pipeline fp8 shortens the step by more than that, and is advised.
  app::EstimateRequest r;
  r.scenario = app::ScenarioSource{test::source("scenarios/gpt2-124m-rtx4090.toml"), std::nullopt};
  r.bands = false;
  bool fp8 = false;
  for (const explain::Advice& a : app::estimate(test::catalog(), r).estimate.advice) {
    fp8 = fp8 || a.kind == explain::AdviceKind::kFp8;
  }
  CHECK(fp8);
}
