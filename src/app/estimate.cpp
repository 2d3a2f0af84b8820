// The estimate and breakeven commands (include/gpusim/app.hpp): one scenario's whole answer, and
// owning against renting its GPUs; and the scenario source every command reads.
#include "gpusim/app.hpp"

namespace gpusim::app {

scenario::ParsedScenario parse(const ScenarioSource& source) {
  return source.text ? scenario::ParsedScenario(source.path, *source.text) : scenario::parse_scenario_file(source.path);
}

namespace {

// The request's scenario; with a GPU variant, resolved again over the patched GPU, so that every
// default that follows from the GPU (its PCIe link, say) follows from the variant.
scenario::Scenario resolve(const catalog::Catalog& catalog, const EstimateRequest& request) {
  check(request.variant);
  const scenario::ParsedScenario parsed = parse(request.scenario);
  const std::vector<scenario::Override> sets = scenario::parse_overrides(request.sets, request.unsets);
  scenario::Scenario sc = scenario::resolve(catalog, parsed, sets, request.gpu);
  if (request.variant.identity()) {
    return sc;
  }
  return scenario::resolve(with_gpu_variant(catalog, sc.system.gpu.id, request.variant), parsed, sets, request.gpu);
}

}  // namespace

EstimateAnswer estimate(const catalog::Catalog& catalog, const EstimateRequest& request) {
  scenario::Scenario sc = resolve(catalog, request);
  answer::Options options;
  options.uncertainty = request.bands;
  answer::Estimate e = answer::estimate(sc, options);
  return EstimateAnswer{std::move(sc), std::move(e)};
}

report::Breakeven breakeven(const catalog::Catalog& catalog, const EstimateRequest& request) {
  const scenario::Scenario sc = resolve(catalog, request);
  return report::breakeven_of(answer::estimate(sc));
}

}  // namespace gpusim::app
