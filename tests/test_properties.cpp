// Properties the step model must keep whatever its parameters, and the agreement of every path to
// a step: plan's ranked layouts are what estimate gives for those layouts, under power caps and
// input pipelines, for every shipped training scenario.

#include "helpers.hpp"

using namespace gpusim;

namespace {

step::Evaluation eval(const Scenario& sc) { return step::evaluate(sc); }

}  // namespace

TEST_CASE("more memory bandwidth is never slower", "[properties]") {
  for (const char* file : {"gpt2-124m", "llama2-7b"}) {
    Scenario sc =
        test::scenario(std::string(test::kSmallTraining), {{"model.preset", std::string("\"") + file + "\""}});
    const step::Evaluation base = eval(sc);
    sc.system.gpu.memory_bandwidth = sc.system.gpu.memory_bandwidth * 2.0;
    const step::Evaluation fast = eval(sc);
    CHECK(fast.step.time <= base.step.time);
    CHECK(fast.step.memory_bound < base.step.memory_bound);
  }
}

TEST_CASE("more interconnect bandwidth is never slower", "[properties]") {
  Scenario sc = test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""}, {"parallelism.zero", "3"}});
  const step::Evaluation base = eval(sc);
  sc.system.gpu.peer_bandwidth = sc.system.gpu.peer_bandwidth * 0.1;
  const step::Evaluation slow = eval(sc);
  CHECK(slow.step.communication_total > base.step.communication_total);
  CHECK(slow.step.time >= base.step.time);
}

TEST_CASE("more GPUs never raise per-GPU memory under ZeRO-3", "[properties]") {
  double last = 1e300;
  for (const int gpus : {8, 16, 32, 64, 128}) {
    const Scenario sc = test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""},
                                                              {"parallelism.zero", "3"},
                                                              {"system.gpus", std::to_string(gpus)},
                                                              {"training.global_batch", "1024"}});
    const double bytes = eval(sc).memory.total().value();
    CHECK(bytes <= last);
    last = bytes;
  }
}

TEST_CASE("time to train scales linearly with tokens", "[properties]") {
  const Estimate one = answer::estimate(test::scenario(test::kSmallTraining, {{"training.tokens", "1e9"}}));
  const Estimate ten = answer::estimate(test::scenario(test::kSmallTraining, {{"training.tokens", "1e10"}}));
  CHECK(ten.eval.job_time.value() == Approx(10 * one.eval.job_time.value()));
  CHECK(ten.eval.gpu_time.value() == Approx(10 * one.eval.gpu_time.value()));
  CHECK(ten.energy.energy.value() == Approx(10 * one.energy.energy.value()));
  CHECK(ten.eval.step.time.value() == Approx(one.eval.step.time.value()));
}

TEST_CASE("MFU stays within 0..1 and HFU is never below MFU", "[properties]") {
  for (const char* recompute : {"\"none\"", "\"selective\"", "\"full\""}) {
    const step::Evaluation e = eval(test::scenario(test::kSmallTraining, {{"training.recompute", recompute}}));
    CHECK(e.mfu > 0);
    CHECK(e.mfu < 1);
    CHECK(e.hfu >= e.mfu);
  }
}

TEST_CASE("a power limit lowers the clock until the board power meets it", "[properties][power]") {
  const step::Evaluation full = eval(test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""}}));
  const step::Evaluation capped = eval(
      test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""}, {"system.power_limit", "\"200 W\""}}));
  CHECK(capped.clock < full.clock);
  // compute-bound kernels run at the clock: their time grows by full clock / capped clock (the
  // fixed per-GEMM latency aside)
  CHECK(capped.step.gemm.value() == Approx(full.step.gemm.value() * full.clock / capped.clock).epsilon(0.02));
  // the cap binds: the board draws it
  CHECK(capped.gpu_avg_power.value() == Approx(200.0).epsilon(0.01));
  // MFU is against the nominal dense peak: a capped GPU reaches less of it
  CHECK(capped.peak.value() == Approx(full.peak.value()));
  CHECK(capped.mfu < full.mfu);
}

TEST_CASE("average board power lies between idle and TDP", "[properties][power]") {
  const step::Evaluation e = eval(test::scenario(test::kSmallTraining));
  const hardware::GpuSpec g = test::catalog().gpu("a100-sxm4-80gb");
  CHECK(e.gpu_avg_power > g.idle_power);
  CHECK(e.gpu_avg_power <= g.tdp);
}

TEST_CASE("a tiny model at batch 1 is launch-bound and CUDA graphs relieve it", "[properties][latency]") {
  const std::string toml = R"(name = "tiny"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
preset = "gpt2-124m"
[inference]
batch = 1
prompt_tokens = 128
output_tokens = 128
)";
  const Estimate eager = answer::estimate(test::scenario(toml));
  const hardware::GpuSpec g = test::catalog().gpu("h100-sxm5-80gb");
  const step::StepBreakdown& s = eager.eval.step;
  // host time = kernels x (eager launch + the runtime's dispatch); the GPU waits for whatever
  // exceeds its own work
  const workload::Runtime rt = test::catalog().runtime("hf-transformers");  // the inference default
  CHECK(s.host_launch.value() == Approx(s.kernels * (g.efficiency.launch_eager + rt.dispatch).value()));
  CHECK(s.launch_stall.value() ==
        Approx(s.host_launch.value() - s.compute.value() - s.kernels * g.efficiency.kernel_overhead.value()));
  CHECK(eager.diagnosis.bottleneck == explain::Bottleneck::kLatency);
  CHECK_THAT(report::bottleneck_reason(eager), Catch::StartsWith("launch-bound"));
  const step::Evaluation graphs = eval(test::scenario(toml, {{"inference.cuda_graphs", "true"}}));
  CHECK(graphs.step.time < s.time);
}

namespace {

// plan's best layouts against estimate of each, to 1e-9: step time, memory, MFU, time and cost.
void check_plan_equals_estimate(const Scenario& sc, int top) {
  search::PlanOptions o;
  o.top = top;
  const search::PlanResult r = search::plan(sc, o);
  CHECK(r.timed <= r.sized);
  for (const search::PlanRow& row : r.best) {
    INFO("gpus " << row.gpus << " tensor " << row.layout.tensor << " pipeline " << row.layout.pipeline << " data "
                 << row.layout.data << " zero " << row.layout.zero << " micro " << row.layout.micro_batch << " expert "
                 << row.layout.expert);
    const Estimate e = answer::estimate(scenario::with_layout(sc, row.layout, row.gpus), answer::Options{false});
    CHECK(e.eval.step.time.value() == Approx(row.eval.step.time.value()).epsilon(1e-9));
    CHECK(e.eval.step.input_stall.value() == Approx(row.eval.step.input_stall.value()).epsilon(1e-9));
    CHECK(e.eval.memory.total().value() == Approx(row.eval.memory.total().value()).epsilon(1e-9));
    CHECK(e.eval.mfu == Approx(row.eval.mfu).epsilon(1e-9));
    CHECK(e.eval.job_time.value() == Approx(row.eval.job_time.value()).epsilon(1e-9));
    CHECK(e.eval.gpu_avg_power.value() == Approx(row.eval.gpu_avg_power.value()).epsilon(1e-9));
    CHECK(e.cost.cloud.value() == Approx(row.cloud.value()).epsilon(1e-9));
    CHECK(e.eval.memory.fits());
  }
  // ranked by time; plan treats times within 1e-9 as tied (then less memory first)
  for (std::size_t i = 1; i < r.best.size(); ++i) {
    CHECK(r.best[i - 1].eval.job_time.value() <= r.best[i].eval.job_time.value() * (1 + 1e-9));
  }
}

}  // namespace

TEST_CASE("plan times every layout exactly as estimate does, for every shipped training scenario",
          "[plan][properties]") {
  int checked = 0;
  for (const std::string& path : test::shipped_training_scenarios()) {  // plan searches training layouts
    INFO(path);
    const std::string cap = test::halfway_power_limit(scenario::load_scenario_file(test::catalog(), path));
    // As shipped; under a power cap halfway between idle and TDP; with a slow host input pipeline.
    const std::vector<std::vector<Override>> variants = {
        {},
        {{"system.power_limit", cap}},
        {{"input.sample_bytes", "\"4 MB\""}, {"input.cpu_time_per_sample", "\"20 ms\""}, {"input.workers", "2"}},
        {{"system.power_limit", cap}, {"input.sample_bytes", "\"4 MB\""}, {"input.cpu_time_per_sample", "\"20 ms\""}},
    };
    for (const auto& v : variants) {
      check_plan_equals_estimate(scenario::load_scenario_file(test::catalog(), path, v), 3);
    }
    ++checked;
  }
  CHECK(checked >= 10);
}

TEST_CASE("plan with nothing that fits says what was closest", "[plan]") {
  const Scenario sc = test::scenario(R"(name = "too big"
[system]
gpu = "rtx4090"
gpus = 2
gpus_per_node = 2
[model]
preset = "llama2-70b"
[training]
tokens = 1e9
seq_len = 4096
global_batch = 8
micro_batch = 1
)");
  const search::PlanResult r = search::plan(sc, search::PlanOptions{});
  CHECK(r.best.empty());
  CHECK(r.timed == 0);
  CHECK(r.sized > 0);
  REQUIRE(r.closest.has_value());
  CHECK(r.closest_memory > sc.system.gpu.memory_capacity);
  REQUIRE_FALSE(r.infeasible.empty());
  CHECK(r.infeasible[0].why == search::Infeasible::kNoFit);
  CHECK(r.infeasible[0].count == r.sized);
}

TEST_CASE("plan searches more GPU counts when asked", "[plan]") {
  const Scenario sc = test::scenario(test::kSmallTraining);
  search::PlanOptions o;
  o.max_gpus = 64;
  const search::PlanResult r = search::plan(sc, o);
  REQUIRE_FALSE(r.best.empty());
  bool more = false;
  for (const auto& row : r.best) {
    CHECK(row.gpus >= 8);
    more = more || row.gpus > 8;
  }
  CHECK(more);
}

TEST_CASE("an evaluator that keeps kernel sums gives what a fresh evaluation gives", "[step][properties]") {
  const Scenario sc = test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""}});
  step::Evaluator ev(sc.system, sc.job, sc.runtime);
  workload::Layout l = sc.layout;
  for (const std::int64_t mb : {1, 2, 4, 8}) {
    l.micro_batch = mb;
    for (int pass = 0; pass < 2; ++pass) {  // the second pass reads the kept sums
      const step::Evaluation cached = ev.evaluate(l);
      const step::Evaluation fresh = step::evaluate(sc.system, sc.job, l, sc.runtime);
      CHECK(cached.step.time.value() == fresh.step.time.value());
      CHECK(cached.memory.total().value() == fresh.memory.total().value());
    }
  }
}
