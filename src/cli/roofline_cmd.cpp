// gpusim roofline --gpu ID [SCENARIO]: the teaching picture, as a table and an SVG.

#include "cli/options.hpp"

namespace gpusim::cli {

int run_roofline(const std::vector<std::string>& args) {
  Common c;
  std::string gpu;
  std::string gpus;
  std::string scenario;
  std::string dtype = "bf16";
  std::string svg;
  std::vector<std::string> sets;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("gpu", po::value<std::string>(&gpu), "GPU id (default: the scenario's GPU)")(
      "gpus", po::value<std::string>(&gpus), "several GPU ids, comma-separated: their roofs on one picture")(
      "scenario", po::value<std::string>(&scenario), "scenario whose step ops are placed on the roofs")(
      "dtype", po::value<std::string>(&dtype)->default_value("bf16"),
      "dtype whose roof and ridge point are highlighted (default bf16; fp16 on a GPU without bf16)")(
      "svg", po::value<std::string>(&svg), "also write the picture to FILE (SVG)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a scenario key (repeatable)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim roofline --gpu ID [SCENARIO] [--dtype D] [--svg FILE] [--format text|json]\n"
             "       gpusim roofline --gpus ID,ID,... [--dtype D] [--svg FILE] [--format text|json]\n"
             "The GPU's DRAM and L2 roofs and its compute roof per dtype (paper and achievable), the ridge\n"
             "point, and, with a scenario, each op of its step at its arithmetic intensity and attained rate.")) {
    return 0;
  }
  check_gpu_option(vm);
  const std::vector<std::string> ids = vm.count("gpus") != 0U ? gpu_list(gpus) : std::vector<std::string>{};
  if (gpu.empty() && scenario.empty() && gpus.empty()) {
    throw UsageError("needs --gpu ID, --gpus ID,ID,... or a SCENARIO (see gpusim roofline --help)");
  }
  if (!gpus.empty() && (!gpu.empty() || !scenario.empty())) {
    throw UsageError("--gpus draws roofs only: it takes no --gpu and no SCENARIO");
  }
  check_format(c.format, {"text", "json"});
  const std::vector<DType> roofs = {DType::kFp64, DType::kFp32, DType::kTf32, DType::kFp16,
                                    DType::kBf16, DType::kFp8,  DType::kFp4};
  const auto highlight = base::value_in(units::kDTypeNames, dtype);
  if (!highlight || std::find(roofs.begin(), roofs.end(), *highlight) == roofs.end()) {
    throw UsageError("--dtype must be one of " + base::quoted_names(units::kDTypeNames, roofs) + ", got \"" + dtype +
                     "\"");
  }
  // Without --dtype, a GPU without bf16 (Volta, Turing) highlights its 16-bit format, fp16.
  const bool dtype_given = !vm["dtype"].defaulted();
  auto highlight_for = [&](const hardware::GpuSpec& g) {
    if (g.supports(*highlight)) {
      return *highlight;
    }
    if (!dtype_given && g.supports(DType::kFp16)) {
      return DType::kFp16;
    }
    throw UsageError("the " + g.name + " has no " + dtype + " support");
  };
  const Catalog catalog = load_catalog_with_env(c.specs);
  if (!gpus.empty()) {
    std::vector<explain::Roofline> rs;
    std::string text;
    std::string json = "[\n";
    for (const std::string& id : ids) {
      const hardware::GpuSpec g = catalog.gpu(id);
      rs.push_back(explain::make_roofline(g, nullptr, highlight_for(g)));
      if (!text.empty()) {
        text += '\n';
      }
      text += report::roofline_text(rs.back());
      std::string one = report::roofline_json(rs.back());
      one.pop_back();  // its newline: the array adds separators
      if (rs.size() > 1) {
        json += ",\n";
      }
      json += one;
    }
    std::vector<std::pair<std::string, std::string>> outputs{{c.out, c.format == "json" ? json + "\n]\n" : text}};
    if (!svg.empty()) {
      outputs.emplace_back(svg, report::roofline_svg(rs));
    }
    write_outputs(outputs);
    return 0;
  }
  std::optional<step::Evaluation> eval;
  hardware::GpuSpec g;
  if (!scenario.empty()) {
    const Scenario sc = scenario::load_scenario_file(catalog, scenario, scenario::parse_overrides(sets), gpu);
    eval = step::evaluate(sc, step::Options{true});
    g = sc.system.gpu;
  } else {
    g = catalog.gpu(gpu);
  }
  const explain::Roofline r = explain::make_roofline(g, eval ? &*eval : nullptr, highlight_for(g));
  std::vector<std::pair<std::string, std::string>> outputs{
      {c.out, c.format == "json" ? report::roofline_json(r) : report::roofline_text(r)}};
  if (!svg.empty()) {
    outputs.emplace_back(svg, report::roofline_svg(r));
  }
  write_outputs(outputs);
  return 0;
}

}  // namespace gpusim::cli
