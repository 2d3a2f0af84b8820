// gpusim compare SCENARIO --gpus a,b,c: the purchase comparison, ranked by time to finish.
#include <algorithm>
#include <sstream>

#include "cli/options.hpp"

namespace gpusim::cli {

int run_compare(const std::vector<std::string>& args) {
  Common c;
  std::string scenario;
  std::string gpus;
  std::vector<std::string> sets;
  std::string svg;
  std::string baseline;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "scenario TOML file")(
      "gpus", po::value<std::string>(&gpus), "comma-separated GPU ids to compare (required)")(
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
             "Ranks GPUs for one job: jobs that fit first, then by time to finish; each GPU keeps the\n"
             "scenario's GPU count and layout. A GPU the job cannot run on keeps its row, with the reason\n"
             "(CSV: the status column; JSON: \"problem\"). Exit 2, in every format, when the job runs on none\n"
             "of them: each GPU's reason on stderr, nothing written.")) {
    return 0;
  }
  if (scenario.empty() || gpus.empty()) {
    throw UsageError("needs SCENARIO and --gpus ID,ID,... (see gpusim compare --help)");
  }
  check_format(c.format);
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
  request.gpus = ids;
  const app::CompareAnswer answer = app::compare(load_catalog_with_env(c.specs), request);
  const std::vector<search::CompareRow>& rows = answer.rows;
  const Scenario& base = answer.base;
  const std::string text = c.format == "json"  ? report::compare_json(rows)
                           : c.format == "csv" ? report::compare_csv(rows)
                                               : report::compare_text(base.name, rows);
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
