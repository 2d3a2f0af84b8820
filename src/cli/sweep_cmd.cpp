// gpusim sweep SCENARIO --vary KEY=V1,V2,...: a grid over scenario keys, one CSV (or JSON) row per
// point; points that cannot run say why in their row. --shard I/N runs every N-th point from I.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/options.hpp"

namespace gpusim::cli {

int run_sweep(const std::vector<std::string>& args) {
  Common c;
  c.format = "csv";
  std::string scenario;
  std::vector<std::string> varies;
  std::vector<std::string> sets;
  std::string shard = "0/1";
  std::string svg;
  std::string metric = "throughput.tokens_per_s";
  bool quiet = false;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "scenario TOML file")(
      "vary", po::value<std::vector<std::string>>(&varies)->composing(),
      "KEY=V1,V2,... (repeatable: the grid is their product)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "fixed override (repeatable)")(
      "quiet,q", po::bool_switch(&quiet), "no progress line (it is shown only when stderr is a terminal)")(
      "shard", po::value<std::string>(&shard)->default_value("0/1"), "I/N: run points I, I+N, I+2N, ...")(
      "svg", po::value<std::string>(&svg),
      "also write --metric against the first --vary key to FILE (SVG), one line per value of the others")(
      "metric", po::value<std::string>(&metric)->default_value("throughput.tokens_per_s"),
      "report key the --svg plots (docs/report.md), e.g. step.time_s, inference.time_per_output_token_s");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim sweep SCENARIO --vary KEY=V1,V2,... [--vary ...] [--format csv|json] [--shard I/N]\n"
             "                    [--svg FILE [--metric KEY]]\n"
             "Estimates every point of the grid; default output CSV, one row per point. A point that cannot\n"
             "run says why in its row and the sweep goes on: exit 4 when some point failed, 2 when none can\n"
             "run (the reasons on stderr).")) {
    return 0;
  }
  if (scenario.empty() || varies.empty()) {
    throw UsageError("needs SCENARIO and at least one --vary KEY=V1,V2,... (see gpusim sweep --help)");
  }
  if (c.format == "text") {
    c.format = "csv";
  }
  check_format(c.format, {"csv", "json"});
  search::SweepOptions opt;
  if (std::sscanf(shard.c_str(), "%d/%d", &opt.shard, &opt.shards) != 2 || opt.shards < 1 || opt.shard < 0 ||
      opt.shard >= opt.shards) {
    throw UsageError("--shard expects I/N with 0 <= I < N, got \"" + shard + "\"");
  }
  if (!answer::is_report_metric(metric)) {
    throw UsageError("--metric \"" + metric + "\" is not a numeric report key (docs/report.md lists them)");
  }
  std::vector<search::Axis> axes;
  for (const auto& v : varies) {
    axes.push_back(search::parse_axis(v));
  }
  const Catalog catalog = load_catalog_with_env(c.specs);
  const std::vector<Override> fixed = scenario::parse_overrides(sets);
  const ParsedScenario file = scenario::parse_scenario_file(scenario);
  (void)scenario::resolve(catalog, file, fixed);  // the base scenario itself must be valid (exit 2)
  if (!quiet && isatty(STDERR_FILENO) != 0) {
    opt.progress = [](std::size_t done, std::size_t total) {
      if (total > 50 && (done % 50 == 0 || done == total)) {
        std::cerr << "\rsweep: " << done << " of " << total << " points" << (done == total ? "\n" : "") << std::flush;
      }
    };
  }
  const std::vector<search::SweepPoint> points = search::sweep(catalog, file, fixed, axes, opt);
  const bool any_ran = std::any_of(points.begin(), points.end(), [](const auto& p) { return p.estimate.has_value(); });
  if (!points.empty() && !any_ran) {
    std::vector<Diagnostic> problems;
    // One reason for every point (an unknown --vary key): said once.
    const bool same =
        std::all_of(points.begin(), points.end(), [&](const auto& p) { return p.problem == points[0].problem; });
    if (same) {
      throw InputError(
          {Diagnostic{SourcePos{scenario}, "",
                      "no point can run (all " + std::to_string(points.size()) + "): " + points[0].problem}});
    }
    for (const auto& p : points) {
      std::string where;
      for (std::size_t k = 0; k < axes.size(); ++k) {
        where += (k == 0 ? "" : ", ") + axes[k].key + "=" + p.values[k];
      }
      problems.push_back(Diagnostic{SourcePos{scenario}, "", "no point can run; " + where + ": " + p.problem});
      if (problems.size() >= 5) {
        break;
      }
    }
    throw InputError(problems);
  }
  std::vector<std::pair<std::string, std::string>> outputs{
      {c.out, c.format == "json" ? report::sweep_json(axes, points) : report::sweep_csv(axes, points)}};
  if (!svg.empty()) {
    outputs.emplace_back(svg, report::sweep_svg(axes, points, metric));
  }
  write_outputs(outputs);
  const bool all_ran = std::all_of(points.begin(), points.end(), [](const auto& p) { return p.estimate.has_value(); });
  return all_ran ? kOk : kSomePointsFailed;
}

}  // namespace gpusim::cli
