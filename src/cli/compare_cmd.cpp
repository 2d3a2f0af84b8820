// gpusim compare SCENARIO --gpus a,b,c: the purchase comparison, ranked by time to finish.
#include <algorithm>
#include <sstream>

#include "cli/options.hpp"

namespace gpusim::cli {

int run_compare(const std::vector<std::string>& args) {
  Common c;
  std::string scenario;
  std::string gpus;
  std::string systems;
  std::string objective;
  std::vector<std::string> sets;
  std::vector<std::string> unsets;
  std::string svg;
  std::string baseline;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "scenario TOML file")(
      "gpus", po::value<std::string>(&gpus),
      "comma-separated GPU ids to compare, each at the scenario's count and layout")(
      "systems", po::value<std::string>(&systems),
      "comma-separated systems to compare instead, each at its best layout: [NODES x] GPUS x ID, e.g. "
      "1xrtx4090,2xrtx3090,1xa100-sxm4-80gb")(
      "objective", po::value<std::string>(&objective),
      "with --systems: time (time to finish; serving: time per output token) or cost (cloud cost of the job; "
      "serving: per million output tokens); default time")(
      "unset", po::value<std::vector<std::string>>(&unsets)->composing(),
      "remove a scenario key or a whole table, so its default applies (repeatable; before every --set)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a scenario key (repeatable)")(
      "svg", po::value<std::string>(&svg),
      "also write bars of speed, speed per purchase USD and tokens per cloud USD relative to --baseline to FILE")(
      "baseline", po::value<std::string>(&baseline),
      "GPU id the --svg bars are relative to (default: the first of --gpus)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim compare SCENARIO --gpus ID,ID,... [--format text|json|csv] [--svg FILE [--baseline ID]]\n"
             "       gpusim compare SCENARIO --systems N x ID,... [--objective time|cost] [--format text|json|csv] "
             "[--svg FILE]\n"
             "Ranks GPUs for one job: jobs that fit first, then by time to finish; each GPU keeps the\n"
             "scenario's GPU count and layout. With --systems, ranks whole systems (2xrtx3090: one machine\n"
             "of two RTX 3090s; 2x8xh100-sxm5-80gb: two machines of eight), each at its best layout (as plan\n"
             "finds it), with its purchase price, power, owned and cloud cost and break-even. A GPU or system\n"
             "the job cannot run on keeps its row, with the reason (CSV: the status column; JSON:\n"
             "\"problem\"). Exit 2, in every format, when the job runs on none of them: each one's reason on\n"
             "stderr, nothing written.")) {
    return 0;
  }
  if (scenario.empty() || gpus.empty() == systems.empty()) {
    throw UsageError(!gpus.empty() ? "takes --gpus or --systems, not both (see gpusim compare --help)"
                                   : "needs SCENARIO and --gpus ID,ID,... or --systems N x ID,... (see gpusim "
                                     "compare --help)");
  }
  check_format(c.format);
  if (!systems.empty()) {
    if (!baseline.empty()) {
      throw UsageError("--baseline applies to --gpus; the --systems bars are absolute");
    }
    app::CompareRequest request;
    request.scenario = app::ScenarioSource{scenario, std::nullopt};
    request.sets = sets;
    request.unsets = unsets;
    request.systems = gpu_list(systems, "--systems", "system");
    request.objective = objective.empty() ? "time" : objective;
    const app::CompareAnswer answer = app::compare(load_catalog_with_env(c.specs), request);
    const std::string title = report::job_words(answer.base);
    const std::string text = c.format == "json"  ? report::systems_json(title, answer.systems, answer.objective)
                             : c.format == "csv" ? report::systems_csv(answer.systems)
                                                 : report::systems_text(title, answer.systems, answer.objective);
    std::vector<std::pair<std::string, std::string>> outputs{{c.out, text}};
    if (!svg.empty()) {
      outputs.emplace_back(svg, report::systems_svg(title, answer.systems));
    }
    write_outputs(outputs);
    return 0;
  }
  if (!objective.empty()) {
    throw UsageError("--objective applies to --systems");
  }
  const std::vector<std::string> ids = gpu_list(gpus);
  if (!baseline.empty() && svg.empty()) {
    throw UsageError("--baseline applies to --svg");
  }
  if (baseline.empty()) {
    baseline = ids.front();
  } else if (std::find(ids.begin(), ids.end(), baseline) == ids.end()) {
    throw UsageError("--baseline \"" + baseline + "\" is not one of --gpus");
  }
  app::CompareRequest request;
  request.scenario = app::ScenarioSource{scenario, std::nullopt};
  request.sets = sets;
  request.unsets = unsets;
  request.gpus = ids;
  const app::CompareAnswer answer = app::compare(load_catalog_with_env(c.specs), request);
  const std::vector<search::CompareRow>& rows = answer.rows;
  const Scenario& base = answer.base;
  const std::string text = c.format == "json"  ? report::compare_json(rows)
                           : c.format == "csv" ? report::compare_csv(rows)
                                               : report::compare_text(report::compare_title(base), rows);
  std::vector<std::pair<std::string, std::string>> outputs{{c.out, text}};
  if (!svg.empty()) {
    const bool runs = std::any_of(rows.begin(), rows.end(), [&](const search::CompareRow& r) {
      return r.gpu == baseline && r.estimate && r.estimate->eval.memory.fits();
    });
    if (!runs) {
      throw UsageError("the baseline " + baseline +
                       " cannot run this job, so nothing can be relative to it: pick "
                       "another --baseline");
    }
    outputs.emplace_back(svg, report::compare_svg(rows, baseline));
  }
  write_outputs(outputs);
  return 0;
}

}  // namespace gpusim::cli
