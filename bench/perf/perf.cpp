// gpusim-perf: speed of the model itself (README "Speed"). Times, in this process, the kernel
// model per op, the whole estimate of a scenario (lowering, kernel model, memory, comm, power,
// cost, advice) and the spec loading, each as the median of repeated runs. A benchmark, not a
// test: it prints a table and exits 0.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "gpusim/model/estimate.hpp"
#include "gpusim/model/kernel.hpp"
#include "gpusim/spec/catalog.hpp"
#include "gpusim/workload/ops.hpp"
#include "gpusim/workload/scenario.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double median_seconds(int reps, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

volatile double sink = 0;

}  // namespace

int main(int argc, char** argv) {
  const std::string root = argc > 1 ? argv[1] : ".";
  const gpusim::Catalog catalog = gpusim::Catalog::builtin();
  std::printf("%-44s %14s %s\n", "what", "median", "per");

  const double load = median_seconds(20, [&] { sink = sink + catalog.gpu("h100-sxm5-80gb").sm_count; });
  std::printf("%-44s %11.1f us  GPU spec parse + validate\n", "load h100-sxm5-80gb spec", load * 1e6);

  for (const char* s : {"scenarios/llama2-7b-pretrain-a100.toml", "scenarios/llama3-8b-8xh100.toml",
                        "scenarios/gpt2-124m-rtx4090.toml"}) {
    const gpusim::Scenario sc = gpusim::load_scenario_file(catalog, root + "/" + s);
    const double t = median_seconds(20, [&] { sink = sink + gpusim::estimate(sc, catalog).step.time.value(); });
    const double core = median_seconds(20, [&] { sink = sink + gpusim::estimate_core(sc).step.time.value(); });
    std::printf("%-44s %11.2f ms  estimate with advice (%.2f ms without)\n", s + 10, t * 1e3, core * 1e3);
  }

  const gpusim::Scenario sc = gpusim::load_scenario_file(catalog, root + "/scenarios/llama2-7b-pretrain-a100.toml");
  const gpusim::StepPlan plan = gpusim::lower_training(sc);
  const int reps = 2000;
  const double per_plan = median_seconds(9, [&] {
    for (int i = 0; i < reps; ++i) {
      for (const auto& op : plan.ops) {
        sink = sink + gpusim::kernel_time(op, sc.system.gpu).time.value();
      }
    }
  });
  std::printf("%-44s %11.1f ns  per op (%zu ops of a Llama-2-7B step)\n", "kernel model",
              per_plan / (reps * static_cast<double>(plan.ops.size())) * 1e9, plan.ops.size());
  return 0;
}
