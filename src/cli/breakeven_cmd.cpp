// gpusim breakeven SCENARIO: cloud versus owned across utilization, as a table and an SVG.
#include "cli/options.hpp"

namespace gpusim::cli {

int run_breakeven(const std::vector<std::string>& args) {
  Common c;
  std::string scenario;
  std::string svg;
  std::vector<std::string> sets;
  std::vector<std::string> unsets;
  std::string variant;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "scenario TOML file")(
      "svg", po::value<std::string>(&svg), "also write the picture to FILE (SVG)")(
      "unset", po::value<std::vector<std::string>>(&unsets)->composing(),
      "remove a scenario key or a whole table, so its default applies (repeatable; before every --set)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a scenario key (repeatable)")(
      "gpu-variant", po::value<std::string>(&variant), kGpuVariantHelp);
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim breakeven SCENARIO [--set KEY=VALUE]... [--gpu-variant KEY=VALUE,...] [--svg FILE] "
             "[--format text|json]\n"
             "Cost of a busy hour owned (hardware share over the lifetime + electricity) against renting the\n"
             "same work in the cloud, across utilization, and the break-even days at each.")) {
    return 0;
  }
  if (scenario.empty()) {
    throw UsageError("missing SCENARIO (see gpusim breakeven --help)");
  }
  check_format(c.format, {"text", "json"});
  app::EstimateRequest request;
  request.scenario.path = scenario;
  request.sets = sets;
  request.unsets = unsets;
  if (vm.count("gpu-variant") != 0U) {
    request.variant = gpu_variant_option(variant);
  }
  const report::Breakeven b = app::breakeven(load_catalog_with_env(c.specs), request);
  std::vector<std::pair<std::string, std::string>> outputs{
      {c.out, c.format == "json" ? report::breakeven_json(b) : report::breakeven_text(b)}};
  if (!svg.empty()) {
    outputs.emplace_back(svg, report::breakeven_svg(b));
  }
  write_outputs(outputs);
  return 0;
}

}  // namespace gpusim::cli
