// The evaluator a search keeps (step::Evaluator) shares terms between the layouts it visits: kernel
// sums per lowering and clock, the communication of the last layout but its ZeRO stage, the
// data-parallel terms per (ZeRO, expert), the memory of the last layout and the steps the clock
// search timed. Whatever the order of the layouts, each must come out exactly as a fresh evaluator
// gives it: these tests visit every shipped training scenario's feasible layouts in a shuffled
// order, each followed by layouts that differ from it in one field only, so that a term kept under
// too narrow a key shows as a difference. The job time alone (Evaluator::job_time, by which a
// search ranks layouts) must equal the full evaluation's.
#include <algorithm>
#include <optional>
#include <random>

#include "helpers.hpp"

using namespace gpusim;

namespace {

// Fields in which two layouts differ.
int differing_fields(const workload::Layout& a, const workload::Layout& b) {
  return (a.tensor != b.tensor) + (a.pipeline != b.pipeline) + (a.data != b.data) + (a.context != b.context) +
         (a.zero != b.zero) + (a.sequence != b.sequence) + (a.virtual_stages != b.virtual_stages) +
         (a.micro_batch != b.micro_batch) + (a.recompute != b.recompute) + (a.expert != b.expert);
}

void check_same(const step::Evaluation& kept, const step::Evaluation& fresh) {
  const step::StepBreakdown& a = kept.step;
  const step::StepBreakdown& b = fresh.step;
  for (Seconds step::StepBreakdown::*f :
       {&step::StepBreakdown::time, &step::StepBreakdown::compute, &step::StepBreakdown::gemm,
        &step::StepBreakdown::memory_bound, &step::StepBreakdown::communication,
        &step::StepBreakdown::communication_total, &step::StepBreakdown::bubble, &step::StepBreakdown::input_stall,
        &step::StepBreakdown::offload, &step::StepBreakdown::overhead, &step::StepBreakdown::launch_stall,
        &step::StepBreakdown::host_launch}) {
    CHECK((a.*f).value() == (b.*f).value());
  }
  CHECK(a.kernels == b.kernels);
  CHECK(kept.memory.total().value() == fresh.memory.total().value());
  CHECK(kept.memory.host.value() == fresh.memory.host.value());
  CHECK(kept.clock == fresh.clock);
  CHECK(kept.gpu_avg_power.value() == fresh.gpu_avg_power.value());
  CHECK(kept.mfu == fresh.mfu);
  CHECK(kept.hfu == fresh.hfu);
  CHECK(kept.job_time.value() == fresh.job_time.value());
}

// Layouts of the scenario's plan over up to twice its GPUs, shuffled, each followed by up to three
// layouts one field away from it; every one evaluated by one kept evaluator and by a fresh one.
int check_reuse(const Scenario& sc, std::mt19937& rng) {
  search::PlanOptions o;
  o.max_gpus = 2 * sc.system.gpus;
  const search::PlanResult r = search::plan(sc, o);
  std::vector<search::PlanPoint> points = r.feasible;
  std::shuffle(points.begin(), points.end(), rng);
  const std::size_t bases = std::min<std::size_t>(points.size(), 40);
  std::vector<search::PlanPoint> order;
  for (std::size_t i = 0; i < bases; ++i) {
    order.push_back(points[i]);
    int neighbours = 0;
    for (const search::PlanPoint& p : r.feasible) {
      if (neighbours < 3 && p.gpus == points[i].gpus && differing_fields(p.layout, points[i].layout) == 1) {
        order.push_back(p);
        ++neighbours;
      }
    }
    order.push_back(points[i]);  // again, after its neighbours
  }
  step::Evaluator kept(sc.system, sc.job, sc.runtime);
  for (const search::PlanPoint& p : order) {
    INFO("gpus " << p.gpus << " tensor " << p.layout.tensor << " pipeline " << p.layout.pipeline << " data "
                 << p.layout.data << " context " << p.layout.context << " zero " << p.layout.zero << " sequence "
                 << p.layout.sequence << " virtual " << p.layout.virtual_stages << " micro " << p.layout.micro_batch
                 << " expert " << p.layout.expert);
    CHECK(kept.memory(p.layout).total().value() ==
          step::Evaluator(sc.system, sc.job, sc.runtime).memory(p.layout).total().value());
    const Scenario alone = scenario::with_layout(sc, p.layout, p.gpus);
    const step::Evaluation fresh = step::evaluate(alone);
    // The job time a search ranks by (Evaluator::job_time), before and after the full evaluation,
    // and the one the plan recorded for the layout.
    CHECK(kept.job_time(p.layout, p.gpus).value() == fresh.job_time.value());
    check_same(kept.evaluate(p.layout, p.gpus), fresh);
    CHECK(kept.job_time(p.layout, p.gpus).value() == fresh.job_time.value());
    CHECK(p.job_time.value() == fresh.job_time.value());
  }
  return static_cast<int>(order.size());
}

}  // namespace

TEST_CASE("an evaluator reused over layouts in any order gives each what a fresh evaluator gives",
          "[step][properties][plan]") {
  std::mt19937 rng(20261126);
  int scenarios = 0;
  int layouts = 0;
  for (const std::string& path : test::shipped_training_scenarios()) {
    INFO(path);
    const Scenario sc = scenario::load_scenario_file(test::catalog(), path);
    // As shipped, and under a power cap halfway between idle and TDP (the clock search then ends
    // between two clock steps).
    layouts += check_reuse(sc, rng);
    layouts += check_reuse(
        scenario::load_scenario_file(test::catalog(), path, {{"system.power_limit", test::halfway_power_limit(sc)}}),
        rng);
    ++scenarios;
  }
  CHECK(scenarios >= 10);
  CHECK(layouts >= 1000);
}

TEST_CASE("an evaluator made from values keeps its own copy of them, through a move", "[step]") {
  // Changing or dropping the caller's inputs after the evaluator is made must not reach it (a
  // borrowing evaluator, Evaluator::Borrow, is for inputs that outlive it: step::evaluate).
  for (const char* file : {"scenarios/llama2-7b-pretrain-a100.toml", "scenarios/llama3-70b-fp8-4xh100-serve.toml"}) {
    INFO(file);
    const Scenario sc = scenario::load_scenario_file(test::catalog(), std::string(GPUSIM_SOURCE_DIR) + "/" + file);
    const step::Evaluation expected = step::evaluate(sc);
    std::optional<step::Evaluator> moved;
    std::optional<step::Evaluation> changed;
    {
      Scenario temp = sc;
      step::Evaluator own(temp.system, temp.job, temp.runtime);
      temp.system.gpu.memory_bandwidth = temp.system.gpu.memory_bandwidth * 0.5;
      temp.runtime.remainder += 0.5;
      moved.emplace(std::move(own));
      changed = step::Evaluator(temp.system, temp.job, temp.runtime).evaluate(sc.layout);
    }
    check_same(moved->evaluate(sc.layout), expected);
    CHECK(changed->step.time.value() > expected.step.time.value());  // the change would have shown
  }
}
