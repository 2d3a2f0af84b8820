// gpusim roofline --gpu ID [SCENARIO]: the teaching picture, as a table and an SVG.
#include <algorithm>
#include <fstream>

#include "cli/options.hpp"
#include "gpusim/model/roofline.hpp"
#include "gpusim/report/report.hpp"
#include "gpusim/workload/scenario.hpp"

namespace gpusim::cli {

std::vector<Override> parse_overrides(const std::vector<std::string>& sets);

int run_roofline(const std::vector<std::string>& args) {
  Common c;
  std::string gpu;
  std::string scenario;
  std::string dtype = "bf16";
  std::string svg;
  std::vector<std::string> sets;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("gpu", po::value<std::string>(&gpu), "GPU id (default: the scenario's GPU)")(
      "scenario", po::value<std::string>(&scenario), "scenario whose step ops are placed on the roofs")(
      "dtype", po::value<std::string>(&dtype)->default_value("bf16"),
      "dtype whose roof and ridge point are highlighted")("svg", po::value<std::string>(&svg),
                                                          "also write the picture to FILE (SVG)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a scenario key (repeatable)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim roofline --gpu ID [SCENARIO] [--dtype D] [--svg FILE] [--format text|json]\n"
             "The GPU's DRAM and L2 roofs and its compute roof per dtype (paper and achievable), the ridge\n"
             "point, and, with a scenario, each op of its step at its arithmetic intensity and attained rate.")) {
    return 0;
  }
  if (gpu.empty() && scenario.empty()) {
    throw UsageError("needs --gpu ID or a SCENARIO (see gpusim roofline --help)");
  }
  if (c.format == "csv") {
    throw UsageError("--format must be text or json for roofline");
  }
  check_format(c.format);
  const Catalog catalog = load_catalog(c.specs);
  const std::vector<std::string> dtypes = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};
  if (std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end()) {
    throw UsageError("--dtype must be one of fp64, fp32, tf32, fp16, bf16, fp8, got \"" + dtype + "\"");
  }
  const DType highlight = dtype == "fp64"   ? DType::kFp64
                          : dtype == "fp32" ? DType::kFp32
                          : dtype == "tf32" ? DType::kTf32
                          : dtype == "fp16" ? DType::kFp16
                          : dtype == "fp8"  ? DType::kFp8
                                            : DType::kBf16;
  std::optional<Estimate> est;
  GpuSpec g;
  if (!scenario.empty()) {
    const Scenario sc = load_scenario_file(catalog, scenario, parse_overrides(sets), gpu);
    est = estimate(sc, catalog);
    g = sc.system.gpu;
  } else {
    g = catalog.gpu(gpu);
  }
  if (!g.supports(highlight)) {
    throw UsageError("the " + g.name + " has no " + dtype + " support");
  }
  const Roofline r = make_roofline(g, est ? &*est : nullptr, highlight);
  const std::string text = c.format == "json" ? roofline_json(r) : roofline_text(r);
  if (!svg.empty()) {
    const std::string picture = roofline_svg(r);
    std::ofstream out(svg, std::ios::binary);
    if (!out) {
      throw InputError({Diagnostic{SourcePos{svg}, "--svg", "cannot open for writing"}});
    }
    out << picture;
  }
  emit(text, c.out);
  return 0;
}

}  // namespace gpusim::cli
