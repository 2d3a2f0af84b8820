// gpusim sweep SCENARIO --vary KEY=V1,V2,...: a grid over scenario keys, one CSV (or JSON) row per
// point; points that cannot run say why in their row. --shard I/N runs every N-th point from I.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>

#include "cli/options.hpp"
#include "cli/streamed_output.hpp"

namespace gpusim::cli {
int run_sweep(const std::vector<std::string>& args) {
  Common c;
  c.format = "csv";
  std::string scenario;
  std::vector<std::string> varies;
  std::vector<std::string> sets;
  std::vector<std::string> unsets;
  std::string shard = "0/1";
  std::string svg;
  std::string metric = "throughput.tokens_per_s";
  bool quiet = false;
  std::string max_points = std::to_string(search::kMaxSweepPoints);
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "scenario TOML file")(
      "vary", po::value<std::vector<std::string>>(&varies)->composing(),
      "KEY=V1,V2,... (repeatable: the grid is their product)")(
      "unset", po::value<std::vector<std::string>>(&unsets)->composing(),
      "remove a scenario key or a whole table, so its default applies (repeatable; before every --set)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "fixed override (repeatable)")(
      "quiet,q", po::bool_switch(&quiet), "no progress line (it is shown only when stderr is a terminal)")(
      "shard", po::value<std::string>(&shard)->default_value("0/1"), "I/N: run points I, I+N, I+2N, ...")(
      "svg", po::value<std::string>(&svg),
      "also write --metric against the first --vary key to FILE (SVG), one line per value of the others")(
      "metric", po::value<std::string>(&metric)->default_value("throughput.tokens_per_s"),
      "report key the --svg plots (docs/report.md), e.g. step.time_s, inference.time_per_output_token_s")(
      "max-points", po::value<std::string>(&max_points)->default_value(max_points),
      "the most grid points one run estimates (this shard's, with --shard); a larger grid is refused before "
      "any work (exit 2). At most 1000000000000");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim sweep SCENARIO --vary KEY=V1,V2,... [--vary ...] [--format csv|json] [--shard I/N]\n"
             "                    [--svg FILE [--metric KEY]] [--max-points N]\n"
             "Estimates every point of the grid; default output CSV, one row per point. A point that cannot\n"
             "run says why in its row and the sweep goes on: exit 4 when some point failed, 2 when none can\n"
             "run (the reasons on stderr). A grid of more than 10000000 points (--max-points) is refused\n"
             "before any work, exit 2; rows are written as they are computed, so memory stays the same\n"
             "however large the grid (--svg keeps one number per point).")) {
    return 0;
  }
  if (scenario.empty() || varies.empty()) {
    throw UsageError("needs SCENARIO and at least one --vary KEY=V1,V2,... (see gpusim sweep --help)");
  }
  if (c.format == "text") {
    c.format = "csv";
  }
  check_format(c.format, {"csv", "json"});
  app::SweepRequest request;
  request.scenario = app::ScenarioSource{scenario, std::nullopt};
  request.sets = sets;
  request.unsets = unsets;
  if (std::sscanf(shard.c_str(), "%d/%d", &request.shard, &request.shards) != 2) {
    throw UsageError("--shard expects I/N with 0 <= I < N, got \"" + shard + "\"");
  }
  const bool digits = !max_points.empty() && max_points.size() <= 13 &&
                      std::all_of(max_points.begin(), max_points.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  if (!digits) {
    throw UsageError("--max-points must be a whole number from 1 to " + std::to_string(search::kMaxSweepPointsLimit) +
                     ", got \"" + max_points + "\"");
  }
  request.max_points = std::stoull(max_points);
  if (!answer::is_report_metric(metric)) {
    const std::string hint = base::did_you_mean(metric, answer::report_metric_keys());
    throw UsageError("--metric \"" + metric + "\" is not a numeric report key (" + (hint.empty() ? "" : hint + " ") +
                     "docs/report.md lists them)");
  }
  for (const auto& v : varies) {
    request.axes.push_back(search::parse_axis(v));
  }
  app::check(request);  // a grid over the limit is refused before any work
  const Catalog catalog = load_catalog_with_env(c.specs);
  if (!quiet && isatty(STDERR_FILENO) != 0) {
    request.progress = [](std::size_t done, std::size_t total) {
      if (total > 50 && (done % 50 == 0 || done == total)) {
        std::cerr << "\rsweep: " << done << " of " << total << " points" << (done == total ? "\n" : "") << std::flush;
      }
    };
  }
  // Rows are written as they are computed, into a temporary file put in place at the end.
  const std::vector<search::Axis>& axes = request.axes;
  const report::SweepFormat format = c.format == "json" ? report::SweepFormat::kJson : report::SweepFormat::kCsv;
  StreamedOutput out(c.out);
  out.write(report::sweep_begin(format, axes));
  std::vector<report::SweepSample> samples;  // for --svg: the metric of each point, not its estimate
  std::string run;                           // for --svg's title: what the first point that ran was
  std::size_t count = 0;
  const app::SweepAnswer answer = app::sweep(catalog, request, [&](const search::SweepPoint& p) {
    out.write(report::sweep_record(format, axes, p, count++));
    if (!svg.empty()) {
      samples.push_back(report::sweep_sample(p, metric));
      if (run.empty() && p.estimate && step::runs(p.estimate->eval)) {
        run = report::sweep_run_words(p, axes);
      }
    }
  });
  if (!answer.refusal.empty()) {  // nothing is written (the temporary file goes with `out`)
    throw InputError(answer.refusal);
  }
  out.write(report::sweep_end(format, count));
  if (svg.empty()) {
    commit_all({&out});
  } else {
    StreamedOutput picture(svg);
    picture.write(report::sweep_svg(axes, samples, metric, run));
    commit_all({&out, &picture});
  }
  return answer.ran == answer.points ? kOk : kSomePointsFailed;
}

}  // namespace gpusim::cli
