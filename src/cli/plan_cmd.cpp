// gpusim plan SCENARIO: the best parallel layouts for a training job.
#include <sys/resource.h>

#include "cli/options.hpp"
#include "common/strfmt.hpp"
#include "gpusim/model/plan.hpp"
#include "gpusim/report/report.hpp"
#include "report/json_writer.hpp"

namespace gpusim::cli {

using detail::strfmt;

std::vector<Override> parse_overrides(const std::vector<std::string>& sets);

namespace {

const char* recompute_name(Recompute r) {
  return r == Recompute::kNone ? "none" : (r == Recompute::kSelective ? "selective" : "full");
}

// What separates the winner from the runner-up, in words.
std::string why_best(const PlanResult& r, PlanObjective obj) {
  if (r.best.size() < 2) {
    return "the only feasible layout";
  }
  const PlanRow& a = r.best[0];
  const PlanRow& b = r.best[1];
  std::string diff;
  auto add = [&diff](const std::string& s) { diff += (diff.empty() ? "" : ", ") + s; };
  const Layout& x = a.layout;
  const Layout& y = b.layout;
  if (x.gpus != y.gpus) {
    add(strfmt("gpus %d vs %d", x.gpus, y.gpus));
  }
  if (x.tensor != y.tensor) {
    add(strfmt("tensor %d vs %d", x.tensor, y.tensor));
  }
  if (x.pipeline != y.pipeline) {
    add(strfmt("pipeline %d vs %d", x.pipeline, y.pipeline));
  }
  if (x.zero != y.zero) {
    add(strfmt("zero %d vs %d", x.zero, y.zero));
  }
  if (x.micro_batch != y.micro_batch) {
    add(strfmt("micro_batch %lld vs %lld", static_cast<long long>(x.micro_batch),
               static_cast<long long>(y.micro_batch)));
  }
  if (x.recompute != y.recompute) {
    add(strfmt("recompute %s vs %s", recompute_name(x.recompute), recompute_name(y.recompute)));
  }
  if (x.sequence != y.sequence) {
    add(x.sequence ? "sequence parallel" : "no sequence parallelism");
  }
  if (x.virtual_stages != y.virtual_stages) {
    add(strfmt("virtual_stages %d vs %d", x.virtual_stages, y.virtual_stages));
  }
  const double gain = 1.0 - a.objective(obj) / b.objective(obj);
  const StepBreakdown& s = a.step;
  const std::string vs = gain < 5e-4 ? strfmt("ties with #2 (%s) and needs less memory: %.1f vs %.1f GiB", diff.c_str(),
                                              units::to_gibibytes(a.memory), units::to_gibibytes(b.memory))
                                     : strfmt("%.1f %% better than #2 (%s)", 100 * gain,
                                              diff.empty() ? "same layout, different GPU count" : diff.c_str());
  return strfmt(
      "%s; its step is %.0f %% compute, %.0f %% exposed communication, %.0f %% "
      "pipeline bubble, %.0f %% overhead",
      vs.c_str(), 100 * s.compute.value() / s.time.value(), 100 * s.communication.value() / s.time.value(),
      100 * s.bubble.value() / s.time.value(), 100 * s.overhead.value() / s.time.value());
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace

int run_plan(const std::vector<std::string>& args) {
  Common c;
  std::string scenario;
  std::string objective = "time";
  int top = 10;
  int max_gpus = 0;
  std::vector<std::string> sets;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "training scenario")(
      "top", po::value<int>(&top)->default_value(10), "layouts to show")(
      "objective", po::value<std::string>(&objective)->default_value("time"), "time | cost (cloud USD)")(
      "max-gpus", po::value<int>(&max_gpus)->default_value(0), "also search GPU counts up to N")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a scenario key (repeatable)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim plan SCENARIO [--top N] [--objective time|cost] [--max-gpus N]\n"
             "Searches every valid tensor x pipeline x data layout with ZeRO stage, micro-batch, recompute,\n"
             "sequence parallelism and virtual stages (and GPU counts with --max-gpus), timed by the same\n"
             "model as `estimate`, and ranks those that fit by time to train or cloud cost.")) {
    return 0;
  }
  if (scenario.empty()) {
    throw UsageError("missing SCENARIO (see gpusim plan --help)");
  }
  if (objective != "time" && objective != "cost") {
    throw UsageError("--objective must be time or cost, got \"" + objective + "\"");
  }
  if (top < 1) {
    throw UsageError("--top must be at least 1");
  }
  check_format(c.format);
  const Catalog catalog = load_catalog(c.specs);
  const Scenario sc = load_scenario_file(catalog, scenario, parse_overrides(sets));
  if (!sc.training) {
    throw UsageError("plan searches training layouts: the scenario has [inference]");
  }
  PlanOptions o;
  o.objective = objective == "cost" ? PlanObjective::kCost : PlanObjective::kTime;
  o.top = top;
  o.max_gpus = max_gpus;
  const PlanResult r = plan(sc, o);

  std::string text;
  if (c.format == "json") {
    detail::JsonWriter w;
    w.begin_object();
    w.value("scenario", sc.name);
    w.value("evaluated", static_cast<double>(r.evaluated));
    w.value("seconds", r.seconds);
    w.begin_array("best");
    for (const PlanRow& row : r.best) {
      w.begin_object();
      w.value("gpus", row.layout.gpus);
      w.value("tensor", row.layout.tensor);
      w.value("pipeline", row.layout.pipeline);
      w.value("data", row.layout.data);
      w.value("zero", row.layout.zero);
      w.value("micro_batch", static_cast<double>(row.layout.micro_batch));
      w.value("recompute", recompute_name(row.layout.recompute));
      w.value("sequence", row.layout.sequence);
      w.value("virtual_stages", row.layout.virtual_stages);
      w.value("step_time_s", row.step.time.value());
      w.value("mfu", row.mfu);
      w.value("memory_per_gpu_bytes", row.memory.value());
      w.value("train_time_s", row.train_time.value());
      w.value("cloud_usd", row.cloud.value());
      w.end_object();
    }
    w.end_array();
    w.begin_array("infeasible");
    for (const auto& s : r.infeasible) {
      w.value(nullptr, s);
    }
    w.end_array();
    w.end_object();
    text = w.str() + "\n";
  } else {
    text = strfmt("Plan: %s — %s, %s; %llu layouts in %.3f s (%.2f M/s), peak memory %.0f MB\n", sc.name.c_str(),
                  sc.system.gpu_id.c_str(),
                  max_gpus > sc.system.gpus ? strfmt("%d to %d GPUs", sc.system.gpus, max_gpus).c_str()
                                            : strfmt("%d GPUs", sc.system.gpus).c_str(),
                  static_cast<unsigned long long>(r.evaluated), r.seconds,
                  r.seconds > 0 ? static_cast<double>(r.evaluated) / r.seconds / 1e6 : 0.0, peak_rss_mb());
    text +=
        strfmt("  %-4s %5s %6s %5s %5s %4s %5s %-9s %3s %4s %9s %5s %9s %10s %11s\n", "rank", "gpus", "tensor", "pipe",
               "data", "zero", "micro", "recompute", "sp", "virt", "step", "MFU", "mem GiB", "time", "cloud USD");
    int rank = 0;
    for (const PlanRow& row : r.best) {
      const Layout& l = row.layout;
      text += strfmt("  %-4d %5d %6d %5d %5d %4d %5lld %-9s %3s %4d %8.3fs %4.0f%% %9.1f %9.1fd %11.4g\n", ++rank,
                     l.gpus, l.tensor, l.pipeline, l.data, l.zero, static_cast<long long>(l.micro_batch),
                     recompute_name(l.recompute), l.sequence ? "yes" : "no", l.virtual_stages, row.step.time.value(),
                     100 * row.mfu, units::to_gibibytes(row.memory), units::to_days(row.train_time), row.cloud.value());
    }
    if (!r.best.empty()) {
      text += "  best: " + why_best(r, o.objective) + "\n";
    } else if (r.closest) {
      text += strfmt(
          "  nothing fits: the closest layout (%s) needs %.1f GiB of %.1f GiB per GPU — memory ran out; "
          "add GPUs (--max-gpus), recompute, or a GPU with more memory\n",
          describe(r.closest->layout).c_str(), units::to_gibibytes(r.closest->memory),
          units::to_gibibytes(sc.system.gpu.memory_capacity));
    }
    if (!r.infeasible.empty()) {
      text += "  not feasible:\n";
      for (const auto& s : r.infeasible) {
        text += "    " + s + "\n";
      }
    }
  }
  emit(text, c.out);
  return 0;  // "nothing fits" is an answer, printed above with what came closest
}

}  // namespace gpusim::cli
