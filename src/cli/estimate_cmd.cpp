// gpusim estimate SCENARIO: the whole answer for one scenario.
#include <sstream>

#include "cli/options.hpp"

namespace gpusim::cli {

int run_estimate(const std::vector<std::string>& args) {
  Common c;
  std::string scenario;
  std::string gpu;
  std::vector<std::string> sets;
  std::vector<std::string> unsets;
  std::string variant;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "scenario TOML file (format: docs/scenarios.md)")(
      "gpu", po::value<std::string>(&gpu), "run on this GPU id instead of system.gpu")(
      "unset", po::value<std::vector<std::string>>(&unsets)->composing(),
      "remove a scenario key or a whole table, so its default applies (repeatable; before every --set)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(),
      "override a scenario key, e.g. --set training.micro_batch=4 (repeatable)")(
      "gpu-variant", po::value<std::string>(&variant), kGpuVariantHelp);
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  std::ostringstream usage;
  usage << "usage: gpusim estimate SCENARIO [--gpu ID] [--set KEY=VALUE]... [--gpu-variant KEY=VALUE,...]\n"
        << "                       [--format text|json|csv|html] [-o FILE]\n"
        << "Step time, throughput, MFU, memory, time to train, power, energy, cost, the bottleneck and advice.\n"
        << "Defaults of [cost]: electricity " << cost::kElectricityUsdPerKwh << " USD/kWh, utilization "
        << cost::kUtilization << ", pue " << cost::kPue << ", lifetime " << cost::kLifetimeYears << " years, carbon "
        << cost::kCarbonKgPerKwh << " kg/kWh, host power per node " << cost::kHopperServerHostWatts
        << " W (Hopper/Blackwell SXM), " << cost::kServerHostWatts << " W (other SXM), " << cost::kWorkstationHostWatts
        << " W (PCIe, more than 2 GPUs), " << cost::kDesktopHostWatts << " W (desktop), cloud rate and purchase from "
        << "the GPU spec (+ host share). Report keys: docs/report.md.\n";
  if (!parse(args, d, pos, vm, usage.str().c_str())) {
    return 0;
  }
  if (scenario.empty()) {
    throw UsageError("missing SCENARIO (see gpusim estimate --help)");
  }
  check_gpu_option(vm);
  check_format(c.format, {"text", "json", "csv", "html"});
  app::EstimateRequest request;
  request.scenario.path = scenario;
  request.sets = sets;
  request.unsets = unsets;
  request.gpu = gpu;
  if (vm.count("gpu-variant") != 0U) {
    request.variant = gpu_variant_option(variant);
  }
  const app::EstimateAnswer a = app::estimate(load_catalog_with_env(c.specs), request);
  const Scenario& sc = a.scenario;
  const Estimate& e = a.estimate;
  std::string text;
  if (c.format == "html") {
    const DType roof = sc.system.gpu.supports(e.eval.dtype) ? e.eval.dtype : DType::kBf16;
    text = report::estimate_html(e, explain::make_roofline(sc.system.gpu, &e.eval, roof), report::breakeven_of(e));
  } else {
    text = c.format == "json"  ? report::estimate_json(e)
           : c.format == "csv" ? report::estimate_csv({e})
                               : report::estimate_text(e);
  }
  write_outputs({{c.out, text}});
  return 0;
}

}  // namespace gpusim::cli
