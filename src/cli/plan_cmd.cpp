// gpusim plan SCENARIO: the best parallel layouts for a training job.
#include <sys/resource.h>

#include "cli/options.hpp"

namespace gpusim::cli {
namespace {

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
             "usage: gpusim plan SCENARIO [--top N] [--objective time|cost] [--max-gpus N] [--format text|json]\n"
             "Searches every valid tensor x pipeline x data layout with ZeRO stage, micro-batch, recompute,\n"
             "sequence parallelism and virtual stages (and GPU counts with --max-gpus); sizes each with the\n"
             "memory model, times those that fit with the same evaluator as `estimate`, and ranks them by\n"
             "time to train or cloud cost.")) {
    return 0;
  }
  if (scenario.empty()) {
    throw UsageError("missing SCENARIO (see gpusim plan --help)");
  }
  const auto obj = base::value_in(search::kObjectiveNames, objective);
  if (!obj) {
    throw UsageError("--objective must be time or cost, got \"" + objective + "\"");
  }
  if (top < 1) {
    throw UsageError("--top must be at least 1");
  }
  check_format(c.format, {"text", "json"});
  const Catalog catalog = load_catalog_with_env(c.specs);
  const Scenario sc = scenario::load_scenario_file(catalog, scenario, scenario::parse_overrides(sets));
  if (!sc.job.training) {
    throw UsageError("plan searches training layouts: the scenario has [inference]");
  }
  search::PlanOptions o;
  o.objective = *obj;
  o.top = top;
  o.max_gpus = max_gpus;
  const search::PlanResult r = search::plan(sc, o);
  write_outputs({{c.out, c.format == "json" ? report::plan_json(sc, r) : report::plan_text(sc, o, r, peak_rss_mb())}});
  return 0;  // "nothing fits" is an answer, printed with what came closest
}

}  // namespace gpusim::cli
