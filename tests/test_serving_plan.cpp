// Service-level objectives and the serving plan (answer/slo.cpp, search/plan_serving.cpp,
// scenario/serving.cpp [slo], search/compare.cpp's serving order).

#include "cli_helpers.hpp"
#include "helpers.hpp"

using namespace gpusim;

namespace {

// Llama-3-8B on H100s with vLLM, an [slo] and a [serving] table the test chooses.
std::string eight_b(const std::string& serving, const std::string& slo) {
  return R"(name = "8b slo"
[system]
gpu = "h100-sxm5-80gb"
gpus = 2
[model]
preset = "llama3-8b"
[inference]
prompt_tokens = 512
output_tokens = 128
weight_precision = "bf16"
[serving]
)" + serving +
         "\n[slo]\n" + slo + R"(
[runtime]
name = "vllm"
)";
}

step::InferenceResult latencies(double ttft_p99, double tpot_p99) {
  step::InferenceResult r;
  r.ttft.p99 = Seconds(ttft_p99);
  r.tpot.p99 = Seconds(tpot_p99);
  r.ttft.p50 = Seconds(ttft_p99 / 2);
  r.tpot.p50 = Seconds(tpot_p99 / 2);
  return r;
}

}  // namespace

TEST_CASE("an SLO is met when every limited percentile is within its limit and the load does not saturate",
          "[serving][slo]") {
  scenario::Slo slo;
  slo.ttft = Seconds(0.3);
  slo.tpot = Seconds(0.02);
  slo.percentile = scenario::Percentile::kP99;
  const answer::SloCheck ok = answer::check_slo(slo, latencies(0.2, 0.015));
  CHECK(ok.met());
  CHECK(ok.worst == Approx(0.015 / 0.02));  // the larger of 0.2 / 0.3 and 0.015 / 0.02
  const answer::SloCheck slow = answer::check_slo(slo, latencies(0.45, 0.015));
  CHECK_FALSE(slow.met());
  CHECK(slow.worst == Approx(0.45 / 0.3));
  // The same run against its medians: half of each p99 above
  slo.percentile = scenario::Percentile::kP50;
  CHECK(answer::check_slo(slo, latencies(0.45, 0.015)).met());
  step::InferenceResult saturated = latencies(0.1, 0.01);
  saturated.saturated = true;
  CHECK_FALSE(answer::check_slo(slo, saturated).met());
}

TEST_CASE("[slo] errors name the key: no limit, a wrong unit, an unknown percentile, a training scenario",
          "[serving][slo][errors]") {
  auto one = [](const std::string& toml) {
    const auto ds = test::diagnostics_of([&] { (void)test::scenario(toml); });
    for (const auto& d : ds) {
      UNSCOPED_INFO(d.format());
    }
    REQUIRE(ds.size() == 1);
    return ds[0];
  };
  const Diagnostic none = one(eight_b("", "percentile = \"p90\""));
  CHECK(none.key == "slo.ttft");
  CHECK(none.message == "[slo] needs at least one limit: ttft, tpot or e2e (e.g. ttft = \"300 ms\")");
  const Diagnostic unit = one(eight_b("", "ttft = \"300 GB\""));
  CHECK(unit.key == "slo.ttft");
  CHECK(unit.pos.line == 14);  // [slo] follows the 13 lines above it
  CHECK(one(eight_b("", "ttft = \"1 s\"\npercentile = \"p95\"")).key == "slo.percentile");
  CHECK(one(eight_b("", "ttft = \"1 s\"\ntfft = \"1 s\"")).key == "slo.tfft");
  const Diagnostic training = one(test::kSmallTraining + std::string("\n[slo]\nttft = \"1 s\"\n"));
  CHECK(training.key == "slo");
}

TEST_CASE("the serving plan keeps only deployments that meet the SLO, best tokens/s per GPU first", "[serving][plan]") {
  const Scenario sc =
      test::scenario(eight_b("arrival = \"offline\"\nrequests = 200", "ttft = \"2 s\"\ntpot = \"30 ms\""));
  search::PlanOptions o;
  o.formats = {"bf16", "fp8"};
  const search::ServingPlanResult r = search::plan_serving(sc, o);
  REQUIRE_FALSE(r.best.empty());
  CHECK(r.meeting >= r.best.size());
  for (std::size_t i = 0; i < r.best.size(); ++i) {
    const search::ServingPlanRow& row = r.best[i];
    CHECK(row.meets());
    CHECK(answer::percentile_of(row.estimate.eval.inference->tpot, scenario::Percentile::kP99) <= Seconds(0.03));
    CHECK(row.layout.tensor * row.layout.pipeline * row.layout.data == row.gpus);
    if (i > 0) {
      CHECK(row.per_gpu <= r.best[i - 1].per_gpu);
    }
  }
  // The frontier trades speed per user for throughput per GPU: one falls as the other rises.
  REQUIRE(r.frontier.size() >= 2);
  for (std::size_t i = 1; i < r.frontier.size(); ++i) {
    CHECK(r.frontier[i].per_user <= r.frontier[i - 1].per_user);
    CHECK(r.frontier[i].per_gpu > r.frontier[i - 1].per_gpu);
  }
  // Every candidate was sized out, simulated or ruled out by its bounds.
  CHECK(r.timed + r.no_fit + r.ruled_out == r.candidates);
}

namespace {

// Llama-3-8B on H100s under `runtime`, with a [serving] table and an [slo] the test chooses.
std::string eight_b_on(const std::string& runtime, const std::string& serving, const std::string& slo) {
  std::string text = eight_b(serving, slo);
  const std::string vllm = "name = \"vllm\"";
  text.replace(text.rfind(vllm), vllm.size(), "name = \"" + runtime + "\"");
  return text;
}

void same_rows(const std::vector<search::ServingPlanRow>& a, const std::vector<search::ServingPlanRow>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].gpus == b[i].gpus);
    CHECK(a[i].layout.tensor == b[i].layout.tensor);
    CHECK(a[i].layout.pipeline == b[i].layout.pipeline);
    CHECK(a[i].format == b[i].format);
    CHECK(a[i].batch_limit == b[i].batch_limit);
    CHECK(a[i].per_gpu == b[i].per_gpu);
    CHECK(a[i].per_user == b[i].per_user);
    CHECK(a[i].estimate.slo->worst == b[i].estimate.slo->worst);
  }
}

}  // namespace

TEST_CASE("the serving plan is the same on one thread as on several: rows, order and counts", "[serving][plan]") {
  const Scenario sc = test::scenario(
      eight_b("arrival = \"poisson\"\nrate = \"8 req/s\"\nrequests = 120", "ttft = \"2 s\"\ntpot = \"30 ms\""));
  search::PlanOptions o;
  o.formats = {"bf16", "fp8"};
  o.max_gpus = 4;
  o.threads = 1;
  const search::ServingPlanResult one = search::plan_serving(sc, o);
  o.threads = 3;
  std::size_t calls = 0;
  std::size_t last = 0;
  o.progress = [&](std::size_t done, std::size_t total) {
    ++calls;
    CHECK(done == last + 1);  // one call at a time, counting up
    CHECK(done <= total);
    last = done;
  };
  const search::ServingPlanResult several = search::plan_serving(sc, o);
  CHECK(calls > 1);
  CHECK(several.candidates == one.candidates);
  CHECK(several.timed == one.timed);
  CHECK(several.ruled_out == one.ruled_out);
  CHECK(several.no_fit == one.no_fit);
  CHECK(several.meeting == one.meeting);
  CHECK(several.smallest_no_fit.value() == one.smallest_no_fit.value());
  same_rows(one.best, several.best);  // bit for bit: the same estimate, wherever it ran
  same_rows(one.frontier, several.frontier);
  REQUIRE(one.best.size() + one.frontier.size() > 2);
}

TEST_CASE("bounds known before a serving run hold for the run", "[serving][plan][bounds]") {
  // Each runtime's scheduler (vLLM's mixed batches, SGLang's and TensorRT-LLM's overlap scheduler,
  // vLLM V0's prompt-only iterations, a static engine) on one, two and four H100s, light and heavy
  // Poisson loads and a queue filled at once.
  const std::vector<std::string> runtimes = {"vllm", "sglang", "tensorrt-llm", "vllm-v0", "hf-transformers"};
  const std::vector<std::string> loads = {"arrival = \"poisson\"\nrate = \"1 req/s\"\nrequests = 150",
                                          "arrival = \"poisson\"\nrate = \"40 req/s\"\nrequests = 300",
                                          "arrival = \"offline\"\nrequests = 200"};
  const std::vector<std::vector<Override>> layouts = {
      {{"system.gpus", "1"}},
      {{"system.gpus", "2"}, {"parallelism.tensor", "2"}},
      {{"system.gpus", "4"}, {"parallelism.tensor", "2"}, {"parallelism.pipeline", "2"}}};
  for (const std::string& runtime : runtimes) {
    for (const std::string& load : loads) {
      for (const auto& layout : layouts) {
        INFO(runtime << " · " << load << " · " << layout.front().value << " GPUs");
        const Scenario sc = test::scenario(eight_b_on(runtime, load, "tpot = \"30 ms\""), layout);
        step::Evaluator evaluator(sc.system, sc.job, sc.runtime);
        const step::ServingBounds b = evaluator.serving_bounds(sc.layout);
        const step::Evaluation e = evaluator.evaluate(sc.layout);
        const step::InferenceResult& r = *e.inference;
        REQUIRE_FALSE(r.truncated);
        REQUIRE(b.iteration.value() > 0);
        REQUIRE(b.tpot.value() > 0);
        CHECK(e.step.time >= b.iteration);  // the run's mean decode iteration
        CHECK(r.tpot.mean >= b.tpot);
        CHECK(r.tpot.p50 >= b.tpot);
        CHECK(r.tpot.p90 >= b.tpot);
        CHECK(r.tpot.p99 >= b.tpot);
        CHECK(r.requests_per_s <= b.capacity_requests_per_s);  // any run's rate is within the capacity
        if (sc.job.inference->load.arrival == workload::Arrival::kPoisson) {
          CHECK(r.saturation_requests_per_s <= b.capacity_requests_per_s);
          CHECK(r.output_tokens_per_s <= b.output_tokens_per_s);
          // The rate bound is the offered load, which a run that keeps up nearly reaches.
          if (!r.saturated) {
            CHECK(r.output_tokens_per_s >= 0.5 * b.output_tokens_per_s);
          }
        } else {
          CHECK(std::isinf(b.output_tokens_per_s));
        }
      }
    }
  }
}

TEST_CASE("a light load's time per output token is near its bound", "[serving][plan][bounds]") {
  // One request at a time decodes alone: each iteration is the floor and its attention, and an
  // engine that hands tokens out late loses one of 127 gaps.
  for (const std::string runtime : {"vllm", "sglang"}) {
    INFO(runtime);
    const Scenario sc = test::scenario(
        eight_b_on(runtime, "arrival = \"poisson\"\nrate = \"0.05 req/s\"\nrequests = 50", "tpot = \"30 ms\""));
    step::Evaluator evaluator(sc.system, sc.job, sc.runtime);
    const step::ServingBounds b = evaluator.serving_bounds(sc.layout);
    const step::InferenceResult r = *evaluator.evaluate(sc.layout).inference;
    CHECK(r.tpot.p50.value() <= 1.2 * b.tpot.value());
  }
}

TEST_CASE("a deployment ruled out by its bounds changes nothing the serving plan shows", "[serving][plan][bounds]") {
  // 4 ms per token: one H100 decodes the 16 GB of bf16 weights in about 5, so bf16 without a tensor
  // split cannot meet it at any load; 1 ms to the first token no deployment meets (the closest then
  // counts); a queue filled at once bounds no rate, so nothing is ruled out by it.
  struct Case {
    std::string runtime;
    std::string load;
    std::string slo;
    std::vector<std::string> formats = {"bf16", "fp8"};
  };
  const std::vector<Case> cases = {
      {"vllm", "arrival = \"poisson\"\nrate = \"8 req/s\"\nrequests = 200", "ttft = \"2 s\"\ntpot = \"4 ms\""},
      {"sglang", "arrival = \"poisson\"\nrate = \"8 req/s\"\nrequests = 200", "ttft = \"2 s\"\ntpot = \"4 ms\""},
      {"tensorrt-llm", "arrival = \"poisson\"\nrate = \"30 req/s\"\nrequests = 200", "tpot = \"3 ms\""},
      {"vllm", "arrival = \"poisson\"\nrate = \"8 req/s\"\nrequests = 200", "ttft = \"1 ms\"\ntpot = \"4 ms\""},
      {"vllm", "arrival = \"offline\"\nrequests = 200", "tpot = \"4 ms\""},
      // bf16 alone: one GPU's deployments give the most tokens/s per GPU, so those whose batch limit
      // keeps up with the load are on the frontier and only those it saturates are left out.
      {"vllm", "arrival = \"poisson\"\nrate = \"8 req/s\"\nrequests = 200", "tpot = \"4 ms\"", {"bf16"}}};
  std::uint64_t ruled_out = 0;
  for (const Case& c : cases) {
    INFO(c.runtime << " · " << c.load << " · " << c.slo);
    const Scenario sc = test::scenario(eight_b_on(c.runtime, c.load, c.slo));
    search::PlanOptions o;
    o.formats = c.formats;
    o.max_gpus = 4;
    const search::ServingPlanResult fast = search::plan_serving(sc, o);
    o.rule_out = false;
    const search::ServingPlanResult all = search::plan_serving(sc, o);
    CHECK(all.ruled_out == 0);
    CHECK(fast.timed + fast.ruled_out == all.timed);
    CHECK(fast.candidates == all.candidates);
    CHECK(fast.no_fit == all.no_fit);
    CHECK(fast.meeting == all.meeting);
    same_rows(fast.best, all.best);
    same_rows(fast.frontier, all.frontier);
    REQUIRE(fast.closest.has_value() == all.closest.has_value());
    if (all.closest) {
      same_rows({*fast.closest}, {*all.closest});
    }
    ruled_out += fast.ruled_out;
  }
  CHECK(ruled_out > 0);  // the comparison covered deployments left out
}

TEST_CASE("a plan row is what estimate gives for the scenario with that row's settings", "[serving][plan]") {
  const Scenario sc =
      test::scenario(eight_b("arrival = \"offline\"\nrequests = 200", "ttft = \"2 s\"\ntpot = \"30 ms\""));
  search::PlanOptions o;
  o.formats = {"fp8"};
  const search::ServingPlanResult r = search::plan_serving(sc, o);
  REQUIRE_FALSE(r.best.empty());
  const search::ServingPlanRow& best = r.best.front();
  // The row's deployment as a user would write it: a closed loop of `limit` requests per replica.
  const std::int64_t engines = static_cast<std::int64_t>(best.layout.data) * best.layout.pipeline;
  const Scenario again = test::scenario(
      eight_b("arrival = \"concurrency\"\nconcurrency = " + std::to_string(best.batch_limit * engines) +
                  "\nrequests = " + std::to_string(std::max<std::int64_t>(200, 4 * best.batch_limit * engines)) +
                  "\nmax_seqs = " + std::to_string(best.batch_limit * best.layout.pipeline),
              "ttft = \"2 s\"\ntpot = \"30 ms\""),
      {{"system.gpus", std::to_string(best.gpus)},
       {"parallelism.tensor", std::to_string(best.layout.tensor)},
       {"parallelism.pipeline", std::to_string(best.layout.pipeline)},
       {"parallelism.data", std::to_string(best.layout.data)},
       {"inference.weight_precision", "\"fp8\""}});
  const answer::Estimate e = answer::estimate(again);
  CHECK(e.eval.inference->output_tokens_per_s / best.gpus == Approx(best.per_gpu));
  CHECK(e.slo->met());
}

TEST_CASE("when no deployment meets the SLO the plan names the closest and by how much it misses", "[serving][plan]") {
  // 1 ms to the first token: a 512-token prefill of an 8B model alone takes longer on any layout
  const Scenario sc = test::scenario(eight_b("arrival = \"offline\"\nrequests = 100", "ttft = \"1 ms\""));
  search::PlanOptions o;
  o.formats = {"bf16"};
  const search::ServingPlanResult r = search::plan_serving(sc, o);
  CHECK(r.best.empty());
  CHECK(r.meeting == 0);
  REQUIRE(r.closest.has_value());
  CHECK(r.closest->estimate.slo->worst > 1.0);
  const std::string text = report::plan_serving_text(sc, o, r);
  CHECK_THAT(text, Catch::Contains("no deployment meets the SLO; the closest is") && Catch::Contains("MISSED at p99"));
}

TEST_CASE("a weight format the GPU cannot compute in is refused before any search", "[serving][plan][errors]") {
  const Scenario sc = test::scenario(eight_b("arrival = \"offline\"\nrequests = 100", "ttft = \"1 s\""),
                                     {{"system.gpu", "\"a100-sxm4-80gb\""}});
  search::PlanOptions o;
  o.formats = {"fp8"};
  const auto ds = test::diagnostics_of([&] { (void)search::plan_serving(sc, o); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].key == "weight_precision");
  CHECK(ds[0].message == "the NVIDIA A100 SXM4 80GB has no fp8 support");
  o.formats = {"int3"};
  const auto unknown = test::diagnostics_of([&] { (void)search::plan_serving(sc, o); });
  REQUIRE(unknown.size() == 1);
  CHECK_THAT(unknown[0].message, Catch::StartsWith("unknown weight format \"int3\""));
}

TEST_CASE("compare on a serving scenario ranks GPUs meeting the SLO first, then by cost per million tokens",
          "[serving][compare]") {
  const scenario::ParsedScenario parsed(
      "test.toml",
      eight_b("arrival = \"poisson\"\nrate = \"4 req/s\"\nrequests = 300", "ttft = \"500 ms\"\ntpot = \"40 ms\""));
  const auto rows =
      search::compare(test::catalog(), parsed, {}, {"rtx4090", "h100-sxm5-80gb", "a100-sxm4-80gb", "l40s"});
  REQUIRE(rows.size() == 4);
  // The order is (misses the SLO, USD per million output tokens), ascending.
  auto key = [](const search::CompareRow& row) {
    return std::make_pair(row.estimate->slo->met() ? 0 : 1, answer::usd_per_million_tokens(*row.estimate));
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    REQUIRE(rows[i].estimate.has_value());
    REQUIRE(rows[i].estimate->eval.memory.fits());
    REQUIRE(rows[i].estimate->slo.has_value());
    if (i > 0) {
      CHECK(key(rows[i - 1]) <= key(rows[i]));
    }
  }
}

TEST_CASE("the serving plan's table matches its golden file", "[cli][plan][serving][golden]") {
  const test::Run r =
      test::run("plan " + test::source("scenarios/llama3-70b-fp8-4xh100-serve.toml") + " --formats fp8 --top 5");
  REQUIRE(r.code == 0);
  test::check_golden("tests/golden/plan-serving-llama3-70b-fp8-h100.txt", r.out);
}

TEST_CASE("plan on a serving scenario prints the SLO table and the frontier, and draws it", "[cli][plan][serving]") {
  const std::string svg = (test::scratch() / "frontier.svg").string();
  const test::Run r =
      test::run("plan " + test::source("scenarios/llama3-70b-fp8-4xh100-serve.toml") + " --formats fp8 --svg " + svg);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("best by output tokens/s per GPU") && Catch::Contains("frontier"));
  const std::string drawn = test::read_text(svg);
  CHECK_THAT(drawn, Catch::StartsWith("<svg") && Catch::Contains("output tokens/s per user"));
  CHECK(test::run("plan " + test::source("scenarios/llama3-70b-fp8-4xh100-serve.toml") + " --formats fp8,,bf16").code ==
        2);
  CHECK(test::run("plan " + test::source("scenarios/llama3-70b-fp8-4xh100-serve.toml") + " --formats int3").code == 2);
  // A training scenario draws its own picture (time against cost) and takes no --formats.
  CHECK(test::run("plan " + test::source("scenarios/scaling-llama2-7b.toml") + " --svg " + svg).code == 0);
  CHECK_THAT(test::read_text(svg), Catch::Contains("time to train"));
  CHECK(test::run("plan " + test::source("scenarios/scaling-llama2-7b.toml") + " --formats fp8").code == 2);
}
