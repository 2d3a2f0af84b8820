// gpusim estimate SCENARIO: the whole answer for one scenario.
#include <sstream>

#include "cli/options.hpp"
#include "gpusim/cost/defaults.hpp"
#include "gpusim/model/estimate.hpp"
#include "gpusim/report/report.hpp"
#include "gpusim/workload/scenario.hpp"

namespace gpusim::cli {

std::vector<Override> parse_overrides(const std::vector<std::string>& sets) {
  std::vector<Override> out;
  for (const auto& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError("--set expects KEY=VALUE (e.g. training.micro_batch=4), got \"" + s + "\"");
    }
    out.push_back(Override{s.substr(0, eq), s.substr(eq + 1)});
  }
  return out;
}

int run_estimate(const std::vector<std::string>& args) {
  Common c;
  std::string scenario;
  std::string gpu;
  std::vector<std::string> sets;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "scenario TOML file")(
      "gpu", po::value<std::string>(&gpu), "run on this GPU id instead of system.gpu")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(),
      "override a scenario key, e.g. --set training.micro_batch=4 (repeatable)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  std::ostringstream usage;
  usage << "usage: gpusim estimate SCENARIO [--gpu ID] [--set KEY=VALUE]... [--format text|json|csv] [-o FILE]\n"
        << "Defaults of [cost]: electricity " << defaults::kElectricityUsdPerKwh << " USD/kWh, utilization "
        << defaults::kUtilization << ", pue " << defaults::kPue << ", lifetime " << defaults::kLifetimeYears
        << " years, carbon " << defaults::kCarbonKgPerKwh << " kg/kWh, host power " << defaults::kDesktopHostWatts
        << " W (desktop) / " << defaults::kServerHostWatts << " W (SXM server) per node, cloud rate and purchase from "
        << "the GPU spec (+ host share).\n";
  if (!parse(args, d, pos, vm, usage.str().c_str())) {
    return 0;
  }
  if (scenario.empty()) {
    throw UsageError("missing SCENARIO (see gpusim estimate --help)");
  }
  check_format(c.format);
  const Catalog catalog = load_catalog(c.specs);
  const Scenario sc = load_scenario_file(catalog, scenario, parse_overrides(sets), gpu);
  const Estimate e = estimate(sc, catalog);
  std::string text;
  if (c.format == "json") {
    text = report_json(e);
  } else if (c.format == "csv") {
    text = report_csv({e});
  } else {
    text = report_text(e);
  }
  emit(text, c.out);
  return 0;
}

}  // namespace gpusim::cli
