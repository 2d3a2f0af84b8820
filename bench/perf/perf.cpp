// gpusim-perf: speed of the model itself (README "Speed", run by scripts/bench-speed). Times, in
// this process, the kernel model per op, a whole estimate, a sweep point, validation, calibration
// and the layout search, each the median of repeated runs. A benchmark, not a test: it prints a
// table and exits 0. The first row times a fixed loop (a chain of dependent multiply-adds, whose
// time is the core's clock and FMA latency alone); every row ends with its time over that loop's,
// measured in the same run, so runs on a loaded or another machine compare by that ratio. Rows
// that spread work over the cores (validate, the serving plan) say how many there were.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "gpusim/gpusim.hpp"

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

// The reference: 1e6 dependent multiply-adds (no vectorization or overlap can shorten a chain).
double reference_loop() {
  double x = sink + 1.0;
  for (int i = 0; i < 1'000'000; ++i) {
    x = x * 1.0000001 + 1e-9;
  }
  return x;
}

double g_reference = 1.0;  // seconds, measured first

// "  [x ref]": a time over the reference loop's.
std::string ref(double seconds) {
  char out[48];
  std::snprintf(out, sizeof out, "  [%.3g ref]", seconds / g_reference);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpusim;
  // --run FILE COMMAND...: runs COMMAND and writes its CPU seconds, peak resident bytes and exit
  // code to FILE, for scripts/bench-speed's whole-process rows. The peak a parent reads of a child
  // includes the memory of the process it was forked from, as it was at the exec: this small
  // process is that one, not the Python interpreter that runs the benchmark.
  if (argc > 3 && std::string(argv[1]) == "--run") {
    const pid_t pid = fork();
    if (pid == 0) {
      execv(argv[3], argv + 3);
      _exit(127);
    }
    int status = 0;
    rusage usage{};
    if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) {
      return 2;
    }
    FILE* out = std::fopen(argv[2], "w");
    if (out == nullptr) {
      return 2;
    }
    const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    std::fprintf(out, "%.6f %ld %d\n", cpu, usage.ru_maxrss * 1024L, WIFEXITED(status) ? WEXITSTATUS(status) : 128);
    std::fclose(out);
    return 0;
  }
  // --reference: the reference loop's median in ms alone, for scripts/bench-speed's whole-process rows.
  if (argc > 1 && std::string(argv[1]) == "--reference") {
    std::printf("%.3f\n", median_seconds(21, [] { sink = sink + reference_loop(); }) * 1e3);
    return 0;
  }
  const std::string root = argc > 1 ? argv[1] : ".";
  const Catalog catalog = Catalog::builtin();
  std::printf("%-52s %14s  %s\n", "what", "median", "per");
  g_reference = median_seconds(21, [] { sink = sink + reference_loop(); });
  std::printf("%-52s %11.1f ms  1e6 dependent multiply-adds; [ref] below is a row's time over this\n", "reference loop",
              g_reference * 1e3);
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());

  const double load = median_seconds(20, [&] { sink = sink + Catalog::builtin().gpu("h100-sxm5-80gb").sm_count; });
  std::printf("%-52s %11.1f us  GPU spec parse + validate (fresh catalog)%s\n", "load h100-sxm5-80gb spec", load * 1e6,
              ref(load).c_str());

  for (const char* s : {"scenarios/llama2-7b-pretrain-a100.toml", "scenarios/llama3-8b-8xh100.toml",
                        "scenarios/gpt2-124m-rtx4090.toml", "scenarios/llama2-7b-decode-rtx4090.toml"}) {
    const Scenario sc = scenario::load_scenario_file(catalog, root + "/" + s);
    const double with = median_seconds(20, [&] { sink = sink + answer::estimate(sc).eval.step.time.value(); });
    const double without =
        median_seconds(20, [&] { sink = sink + answer::estimate(sc, answer::Options{false}).eval.step.time.value(); });
    const double step = median_seconds(20, [&] { sink = sink + step::evaluate(sc).step.time.value(); });
    std::printf("%-52s %11.3f ms  estimate with advice (without %.3f ms; evaluator alone %.3f ms)%s\n", s + 10,
                with * 1e3, without * 1e3, step * 1e3, ref(with).c_str());
  }

  {
    const Scenario sc = scenario::load_scenario_file(catalog, root + "/scenarios/llama2-7b-pretrain-a100.toml");
    const auto ops = lowering::lower_training(sc.job.model, *sc.job.training, sc.layout, sc.runtime);
    const int reps = 2000;
    const double per_pass = median_seconds(9, [&] {
      for (int i = 0; i < reps; ++i) {
        for (const auto& op : ops) {
          sink = sink + physics::kernel_time(op, sc.system.gpu).time.value();
        }
      }
    });
    const double per_op = per_pass / (reps * static_cast<double>(ops.size()));
    std::printf("%-52s %11.1f ns  per op (%zu ops of a Llama-2-7B micro-batch)%s\n", "kernel model", per_op * 1e9,
                ops.size(), ref(per_op).c_str());
  }

  {
    // sweep in process: the file parsed once, every point resolved and estimated (no advice).
    const ParsedScenario parsed = scenario::parse_scenario_file(root + "/scenarios/scaling-llama2-7b.toml");
    const std::vector<search::Axis> axes = {search::parse_axis("system.gpus=8,16,32,64,128,256,512,1024"),
                                            search::parse_axis("training.micro_batch=1,2,4"),
                                            search::parse_axis("parallelism.zero=0,1,2,3")};
    std::size_t points = 0;
    const double t = median_seconds(5, [&] {
      const auto rows = search::sweep(catalog, parsed, {}, axes);
      points = rows.size();
      sink = sink + static_cast<double>(rows.size());
    });
    const double per_point = t / static_cast<double>(points);
    std::printf("%-52s %11.1f us  per point (%zu points, scaling-llama2-7b)%s\n", "sweep", per_point * 1e6, points,
                ref(per_point).c_str());
    // A larger grid over six keys: each value is resolved from the file once, the other points
    // are rebuilt from those resolves (scenario::Variants).
    const std::vector<search::Axis> wide = {search::parse_axis("system.gpus=8,16,32,64,128,256,512,1024"),
                                            search::parse_axis("training.micro_batch=1,2,4"),
                                            search::parse_axis("parallelism.zero=0,1,2,3"),
                                            search::parse_axis("parallelism.tensor=1,2,4,8"),
                                            search::parse_axis("training.precision=bf16,fp16"),
                                            search::parse_axis("training.global_batch=512,1024,2048,4096")};
    const double w = median_seconds(5, [&] {
      search::sweep(catalog, parsed, {}, wide, {},
                    [&](const search::SweepPoint& p) { sink = sink + (p.estimate ? 1.0 : 0.0); });
    });
    const double per_wide = w / static_cast<double>(*search::grid_points(wide));
    std::printf("%-52s %11.1f us  per point (%llu points over 6 keys, scaling-llama2-7b)%s\n", "sweep, larger grid",
                per_wide * 1e6, static_cast<unsigned long long>(*search::grid_points(wide)), ref(per_wide).c_str());
  }

  {
    const std::vector<validation::Measurement> rows = validation::load_measurements(catalog, {root + "/measurements"});
    const double v =
        median_seconds(5, [&] { sink = sink + validation::validate(validation::resolve(rows, catalog)).all.median; });
    std::printf("%-52s %11.1f ms  %zu rows (resolve + predict + summarize; %u cores)%s\n", "validate measurements/",
                v * 1e3, rows.size(), cores, ref(v).c_str());
    const double vb = median_seconds(
        3, [&] { sink = sink + validation::validate(validation::resolve(rows, catalog), true).coverage.share; });
    std::printf("%-52s %11.1f ms  the same with every scenario row's band (gpusim validate)%s\n",
                "validate measurements/ with bands", vb * 1e3, ref(vb).c_str());
    const double c = median_seconds(
        5, [&] { sink = sink + static_cast<double>(validation::calibrate(rows, catalog).params.size()); });
    std::printf("%-52s %11.1f ms  least squares on the fit rows, judged per parameter%s\n", "calibrate measurements/",
                c * 1e3, ref(c).c_str());
  }

  {
    // 100,000 requests through the serving simulation (the Poisson run and its offline saturation run)
    Scenario sc = scenario::load_scenario_file(catalog, root + "/scenarios/llama3-70b-fp8-4xh100-serve.toml");
    sc.job.inference->load.requests = 100000;
    const double t = median_seconds(5, [&] { sink = sink + step::evaluate(sc).inference->requests; });
    std::printf("%-52s %11.1f ms  %.2f M simulated requests/s (100,000 under load + 4,000 for its capacity)%s\n",
                "serve 100,000 requests, 70B on 4 x H100 (vLLM)", t * 1e3, 104000.0 / t / 1e6, ref(t).c_str());
  }

  {
    // A serving estimate with and without its band (gpusim estimate carries the band), at the
    // example's 2,000 requests and at 20,000.
    Scenario sc = scenario::load_scenario_file(catalog, root + "/scenarios/llama3-70b-fp8-4xh100-serve.toml");
    for (const std::int64_t n : {std::int64_t{2000}, std::int64_t{20000}}) {
      sc.job.inference->load.requests = n;
      const double plain = median_seconds(5, [&] {
        sink = sink + answer::estimate(sc, answer::Options{true, false}).eval.tokens;
      });
      const double banded = median_seconds(5, [&] {
        sink = sink + answer::estimate(sc, answer::Options{true, true}).eval.tokens;
      });
      const std::string what = "serving estimate with band, " + std::to_string(n) + " requests";
      std::printf("%-52s %11.1f ms  without the band %.1f ms (x%.1f)%s\n", what.c_str(), banded * 1e3, plain * 1e3,
                  banded / plain, ref(banded).c_str());
    }
  }

  {
    const Scenario sc = scenario::load_scenario_file(catalog, root + "/scenarios/gpt3-175b-1024xa100.toml");
    search::PlanOptions o;
    o.max_gpus = 4096;
    search::PlanResult r;
    const double t = median_seconds(5, [&] { r = search::plan(sc, o); });
    std::printf("%-52s %11.1f ms  %llu sized (%.1f M/s), %llu timed (%.2f M/s)%s\n",
                "plan GPT-3 175B, 1,024-4,096 A100s", t * 1e3, static_cast<unsigned long long>(r.sized),
                static_cast<double>(r.sized) / t / 1e6, static_cast<unsigned long long>(r.timed),
                static_cast<double>(r.timed) / t / 1e6, ref(t).c_str());
    // The search's floor: what a layout costs that no other layout can share. Its memory (every
    // sized layout), and its step: the step's combination and the clock search under the power
    // limit, with every shared term (kernel sums per clock, communication, optimizer) computed,
    // which is the second of two evaluations of the same layout in a row.
    step::Evaluator ev(sc.system, sc.job, sc.runtime);
    for (const auto& p : r.feasible) {
      sink = sink + ev.job_time(p.layout, p.gpus).value();  // every kernel table built
    }
    const double memory = median_seconds(9, [&] {
      for (const auto& p : r.feasible) {
        sink = sink + ev.memory(p.layout).total().value();
      }
    });
    const double once = median_seconds(9, [&] {
      for (const auto& p : r.feasible) {
        sink = sink + ev.job_time(p.layout, p.gpus).value();
      }
    });
    const double twice = median_seconds(9, [&] {
      for (const auto& p : r.feasible) {
        sink = sink + ev.job_time(p.layout, p.gpus).value() + ev.job_time(p.layout, p.gpus).value();
      }
    });
    // The memory loop ran over the timed layouts: scaled to every sized one.
    const double floor =
        memory * static_cast<double>(r.sized) / static_cast<double>(r.timed) + std::max(0.0, twice - once);
    std::printf("%-52s %11.1f ms  memory of every sized layout, the step of every timed one (plan = %.2f x this)%s\n",
                "  its floor: what no layout shares", floor * 1e3, t / floor, ref(floor).c_str());
  }

  {
    // The SLO search on the serving example: every deployment on 1-8 H100s in fp8 and bf16.
    const Scenario sc = scenario::load_scenario_file(catalog, root + "/scenarios/llama3-70b-fp8-4xh100-serve.toml");
    search::PlanOptions o;
    o.max_gpus = 8;
    search::ServingPlanResult r;
    const double t = median_seconds(3, [&] { r = search::plan_serving(sc, o); });
    std::printf(
        "%-52s %11.1f ms  %llu deployments simulated, %llu ruled out (%.0f /s; %u cores), %llu meet the SLO%s\n",
        "plan serving 70B on 1-8 H100s (SLO search)", t * 1e3, static_cast<unsigned long long>(r.timed),
        static_cast<unsigned long long>(r.ruled_out), static_cast<double>(r.timed + r.ruled_out) / t, cores,
        static_cast<unsigned long long>(r.meeting), ref(t).c_str());
  }
  return 0;
}
