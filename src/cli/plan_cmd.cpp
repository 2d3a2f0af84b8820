// gpusim plan SCENARIO: the best parallel layouts for a training job, or the serving deployments
// that meet a service-level objective.
#include <sys/resource.h>
#include <unistd.h>

#include <iostream>
#include <optional>

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
  std::string gpu;
  std::string objective = "time";
  int top = 10;
  int max_gpus = 0;
  std::string formats;
  std::string svg;
  std::vector<std::string> sets;
  std::vector<std::string> unsets;
  bool quiet = false;
  bool timing = false;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "training scenario")(
      "gpu", po::value<std::string>(&gpu), "plan on this GPU id instead of system.gpu")(
      "top", po::value<int>(&top)->default_value(10), "layouts to show")(
      "objective", po::value<std::string>(&objective)->default_value("time"),
      "time | cost: training, time to train or cloud USD; serving, output tokens/s per GPU or cloud USD per "
      "million output tokens")("quiet,q", po::bool_switch(&quiet),
                               "no progress line (it is shown only when stderr is a terminal)")(
      "timing", po::bool_switch(&timing),
      "also report the search's wall time (text: with its rate and the peak memory), which varies from run to "
      "run; without it one question always gives the same bytes")(
      "max-gpus", po::value<int>(&max_gpus)->default_value(0), "also search GPU counts up to N")(
      "formats", po::value<std::string>(&formats),
      "serving: weight formats to try, comma-separated (default: the scenario's, bf16 and fp8)")(
      "svg", po::value<std::string>(&svg),
      "write a picture to FILE (SVG): training, time against cost of every layout that fits; serving, the "
      "throughput-latency frontier")(
      "unset", po::value<std::vector<std::string>>(&unsets)->composing(),
      "remove a scenario key or a whole table, so its default applies (repeatable; before every --set)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a scenario key (repeatable)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim plan SCENARIO [--gpu ID] [--top N] [--objective time|cost] [--max-gpus N]\n"
             "                            [--format text|json] [--formats F1,F2,...] [--svg FILE] [--timing]\n"
             "Training: searches every valid tensor x pipeline x data layout with ZeRO stage, micro-batch,\n"
             "recompute, sequence parallelism and virtual stages (and GPU counts with --max-gpus); sizes each\n"
             "with the memory model, times those that fit with the same evaluator as `estimate`, and ranks\n"
             "them by time to train or cloud cost.\n"
             "Serving: searches GPU counts (powers of two up to --max-gpus), tensor x pipeline x data, weight\n"
             "formats and a batch limit per replica; simulates each deployment that fits under the scenario's\n"
             "load (Poisson: its rate; otherwise a closed loop of batch-limit requests per replica), keeps\n"
             "those meeting the scenario's [slo], ranks them by tokens/s per GPU or USD per million tokens,\n"
             "and prints the frontier of tokens/s per GPU against tokens/s per user (--svg draws it).\n"
             "Deployments whose bounds show they miss the TPOT limit and would not be shown are counted,\n"
             "not simulated: the report is that of simulating them all.")) {
    return 0;
  }
  if (scenario.empty()) {
    throw UsageError("missing SCENARIO (see gpusim plan --help)");
  }
  check_gpu_option(vm);
  app::PlanRequest request;
  request.scenario = app::ScenarioSource{scenario, std::nullopt};
  request.sets = sets;
  request.unsets = unsets;
  request.gpu = gpu;
  request.objective = objective;
  request.top = top;
  request.max_gpus = max_gpus;
  for (std::size_t start = 0; !formats.empty() && start <= formats.size();) {
    const std::size_t comma = std::min(formats.find(',', start), formats.size());
    if (comma == start) {
      throw UsageError("--formats takes names separated by commas, got \"" + formats + "\"");
    }
    request.formats.push_back(formats.substr(start, comma - start));
    start = comma + 1;
  }
  if (!quiet && isatty(STDERR_FILENO) != 0) {
    request.progress = [](std::size_t done, std::size_t total) {
      std::cerr << "\rplan: " << done << " of " << total << " deployments" << (done == total ? "\n" : "") << std::flush;
    };
  }
  app::check(request);
  check_format(c.format, {"text", "json"});
  const app::PlanAnswer a = app::plan(load_catalog_with_env(c.specs), request);
  const Scenario& sc = a.scenario;
  const std::optional<report::SearchTiming> t =
      timing ? std::optional<report::SearchTiming>(report::SearchTiming{peak_rss_mb()}) : std::nullopt;
  std::vector<std::pair<std::string, std::string>> outputs;
  if (a.serving) {
    outputs.emplace_back(c.out, c.format == "json" ? report::plan_serving_json(sc, *a.serving, t)
                                                   : report::plan_serving_text(sc, a.options, *a.serving, t));
    if (!svg.empty()) {
      outputs.emplace_back(svg, report::plan_serving_svg(sc, *a.serving));
    }
  } else {
    outputs.emplace_back(c.out, c.format == "json" ? report::plan_json(sc, *a.training, t)
                                                   : report::plan_text(sc, a.options, *a.training, t));
    if (!svg.empty()) {
      outputs.emplace_back(svg, report::plan_svg(sc, *a.training));
    }
  }
  write_outputs(outputs);
  return 0;  // "nothing fits" and "nothing meets the SLO" are answers, printed with what came closest
}

}  // namespace gpusim::cli
