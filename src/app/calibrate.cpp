// The calibrate command (include/gpusim/app.hpp): efficiency parameters fitted on the fit rows, the
// overlay files that hold them, and the validation error before and after.
#include "gpusim/app.hpp"

namespace gpusim::app {

CalibrateAnswer calibrate(const catalog::Catalog& catalog, const CalibrateRequest& request) {
  if (request.inputs.empty()) {
    throw RequestError("inputs", "must name measurement files or directories (e.g. measurements/)");
  }
  CalibrateAnswer a;
  auto rows = std::make_shared<const std::vector<validation::Measurement>>(
      validation::load_measurements(catalog, request.inputs));
  a.rows = rows;
  a.fit = validation::calibrate(*rows, catalog);
  a.files = validation::overlay_files(a.fit.params);
  const catalog::Catalog after = validation::with_overlay(catalog, a.fit.params);
  a.before = validation::validate(validation::resolve(*rows, catalog));
  a.after = validation::validate(validation::resolve(*rows, after));
  return a;
}

}  // namespace gpusim::app
