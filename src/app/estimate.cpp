// The estimate and breakeven commands (include/gpusim/app.hpp): one scenario's whole answer, and
// owning against renting its GPUs; and the scenario source every command reads.
#include "gpusim/app.hpp"

namespace gpusim::app {

scenario::ParsedScenario parse(const ScenarioSource& source) {
  return source.text ? scenario::ParsedScenario(source.path, *source.text) : scenario::parse_scenario_file(source.path);
}

EstimateAnswer estimate(const catalog::Catalog& catalog, const EstimateRequest& request) {
  scenario::Scenario sc =
      scenario::resolve(catalog, parse(request.scenario), scenario::parse_overrides(request.sets), request.gpu);
  answer::Options options;
  options.uncertainty = request.bands;
  answer::Estimate e = answer::estimate(sc, options);
  return EstimateAnswer{std::move(sc), std::move(e)};
}

report::Breakeven breakeven(const catalog::Catalog& catalog, const EstimateRequest& request) {
  const scenario::Scenario sc =
      scenario::resolve(catalog, parse(request.scenario), scenario::parse_overrides(request.sets), request.gpu);
  return report::breakeven_of(answer::estimate(sc));
}

}  // namespace gpusim::app
