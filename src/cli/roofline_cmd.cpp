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
  std::vector<std::string> unsets;
  std::string variant;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("gpu", po::value<std::string>(&gpu), "GPU id (default: the scenario's GPU)")(
      "gpus", po::value<std::string>(&gpus), "several GPU ids, comma-separated: their roofs on one picture")(
      "scenario", po::value<std::string>(&scenario), "scenario whose step ops are placed on the roofs")(
      "dtype", po::value<std::string>(&dtype)->default_value("bf16"),
      "dtype whose roof and ridge point are highlighted (default bf16, with a scenario its step's dtype; fp16 on a GPU "
      "without bf16)")("svg", po::value<std::string>(&svg), "also write the picture to FILE (SVG)")(
      "unset", po::value<std::vector<std::string>>(&unsets)->composing(),
      "remove a scenario key or a whole table, so its default applies (repeatable; before every --set)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a scenario key (repeatable)")(
      "gpu-variant", po::value<std::string>(&variant), kGpuVariantHelp);
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim roofline --gpu ID [SCENARIO] [--dtype D] [--gpu-variant KEY=VALUE,...] [--svg FILE]\n"
             "                       [--format text|json]\n"
             "       gpusim roofline --gpus ID,ID,... [--dtype D] [--svg FILE] [--format text|json]\n"
             "The GPU's DRAM and L2 roofs and its compute roof per dtype (paper and achievable), the ridge\n"
             "point, and, with a scenario, each op of its step at its arithmetic intensity and attained rate.")) {
    return 0;
  }
  check_gpu_option(vm);
  check_format(c.format, {"text", "json"});
  app::RooflineRequest request;
  request.gpu = gpu;
  request.gpus = vm.count("gpus") != 0U ? gpu_list(gpus) : std::vector<std::string>{};
  if (!scenario.empty()) {
    request.scenario = app::ScenarioSource{scenario, std::nullopt};
  }
  request.sets = sets;
  request.unsets = unsets;
  if (!vm["dtype"].defaulted()) {
    request.dtype = dtype;
  }
  if (vm.count("gpu-variant") != 0U) {
    request.variant = gpu_variant_option(variant);
  }
  const std::vector<explain::Roofline> rs = app::roofline(load_catalog_with_env(c.specs), request);
  std::vector<std::pair<std::string, std::string>> outputs{
      {c.out, c.format == "json" ? report::roofline_json(rs) : report::roofline_text(rs)}};
  if (!svg.empty()) {
    outputs.emplace_back(svg, report::roofline_svg(rs));
  }
  write_outputs(outputs);
  return 0;
}

}  // namespace gpusim::cli
