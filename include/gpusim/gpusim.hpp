// gpusim's public face: what the command line, the tests of public behaviour and a future Python
// binding use. The pipeline, each stage a folder under src/ and a namespace, its face a header here:
//
//   base → units → hardware → workload → lowering → physics → step → parse → catalog → cost
//        → scenario → explain → answer → search → validation → report → app
//
// (the engine, lowering → physics → step, sits below the inputs: it takes plain structs, never a
// spec file or a scenario)
//
// (parse is library-internal: it keeps toml++ inside the loaders and has no face here.)
//
// A scenario file is loaded against the spec catalog into a complete Scenario; the evaluator
// (step) times one step of it through lowering and physics; answer adds cost and the diagnosis;
// search runs the evaluator many times; validation predicts measured rows with the same
// functions; report formats; app holds each command's request and checks, for every front end.
// Includes only point down this list.
#pragma once

#include <string>
#include <vector>

#include "gpusim/answer.hpp"
#include "gpusim/app.hpp"
#include "gpusim/base.hpp"
#include "gpusim/catalog.hpp"
#include "gpusim/cost.hpp"
#include "gpusim/explain.hpp"
#include "gpusim/report.hpp"
#include "gpusim/scenario.hpp"
#include "gpusim/search.hpp"
#include "gpusim/step.hpp"
#include "gpusim/units.hpp"
#include "gpusim/validation.hpp"

namespace gpusim {

using answer::Estimate;
using catalog::Catalog;
using catalog::SpecKind;
using scenario::Override;
using scenario::ParsedScenario;
using scenario::Scenario;

// The built-in catalog with `dirs` added in order (later directories override earlier files).
inline Catalog load_catalog(const std::vector<std::string>& dirs) {
  Catalog c = Catalog::builtin();
  for (const auto& d : dirs) {
    c.add_directory(d);
  }
  return c;
}

// The whole answer for one scenario file.
inline Estimate estimate_file(const Catalog& catalog, const std::string& path,
                              const std::vector<Override>& overrides = {}, const std::string& gpu = "") {
  return answer::estimate(scenario::load_scenario_file(catalog, path, overrides, gpu));
}

}  // namespace gpusim
