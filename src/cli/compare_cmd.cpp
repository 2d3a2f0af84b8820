// gpusim compare SCENARIO --gpus a,b,c: the purchase comparison, ranked by time to finish.
#include <sstream>

#include "cli/options.hpp"

namespace gpusim::cli {

int run_compare(const std::vector<std::string>& args) {
  Common c;
  std::string scenario;
  std::string gpus;
  std::vector<std::string> sets;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "scenario TOML file")(
      "gpus", po::value<std::string>(&gpus), "comma-separated GPU ids to compare (required)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a scenario key (repeatable)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim compare SCENARIO --gpus ID,ID,... [--format text|json|csv]\n"
             "Ranks GPUs for one job: jobs that fit first, then by time to finish; each GPU keeps the\n"
             "scenario's GPU count and layout. Exit 2 when the scenario runs on none of them.")) {
    return 0;
  }
  if (scenario.empty() || gpus.empty()) {
    throw UsageError("needs SCENARIO and --gpus ID,ID,... (see gpusim compare --help)");
  }
  check_format(c.format);
  std::vector<std::string> ids;
  std::stringstream ss(gpus);
  for (std::string id; std::getline(ss, id, ',');) {
    if (!id.empty()) {
      ids.push_back(id);
    }
  }
  if (ids.empty()) {
    throw UsageError("--gpus names no GPU id");
  }
  const Catalog catalog = load_catalog_with_env(c.specs);
  const ParsedScenario file = scenario::parse_scenario_file(scenario);
  const std::vector<Override> overrides = scenario::parse_overrides(sets);
  const Scenario base = scenario::resolve(catalog, file, overrides);  // the file itself must be valid (exit 2)
  const std::vector<search::CompareRow> rows = search::compare(catalog, file, overrides, ids);
  const std::string text = c.format == "json"  ? report::compare_json(rows)
                           : c.format == "csv" ? report::compare_csv(rows)
                                               : report::compare_text(base.name, rows);
  write_outputs({{c.out, text}});
  return 0;
}

}  // namespace gpusim::cli
