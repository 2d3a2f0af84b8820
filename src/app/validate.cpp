// The validate command (include/gpusim/app.hpp): rows predicted against their measurements, and the
// bounds a run was asked to hold checked against the report.
#include <cmath>

#include "gpusim/app.hpp"

namespace gpusim::app {

namespace {

bool percent(double v) { return std::isfinite(v) && v >= 0; }

}  // namespace

void check(const ValidateRequest& request) {
  if (request.inputs.empty()) {
    throw RequestError("inputs", "must name measurement files or directories (e.g. measurements/)");
  }
  if (request.role != "all" && !base::value_in(validation::kRoleNames, request.role)) {
    throw RequestError("role", "must be check, fit or all, got \"" + request.role + "\"");
  }
  if (request.fail_above && !percent(*request.fail_above)) {
    throw RequestError("fail_above", "must be a percentage of at least 0");
  }
  if (request.fail_bias && !percent(*request.fail_bias)) {
    throw RequestError("fail_bias", "must be a percentage of at least 0");
  }
  for (const auto& [kind, bound] : request.fail_above_kind) {
    if (!base::value_in(validation::kRowKindNames, kind) || !percent(bound)) {
      throw RequestError("fail_above_kind",
                         "takes KIND=PCT with KIND one of microbenchmark, training, serving and PCT >= 0, got \"" +
                             kind + "=" + base::strfmt("%g", bound) + "\"");
    }
  }
  if (!request.cross_validate && request.fail_bias) {
    throw RequestError("fail_bias", "needs a cross-validated run");
  }
  if (!request.cross_validate && !request.fail_above_kind.empty()) {
    throw RequestError("fail_above_kind", "needs a cross-validated run");
  }
}

ValidateAnswer validate(const catalog::Catalog& catalog, const ValidateRequest& request) {
  check(request);
  using Breach = validation::ThresholdBreach;
  auto rows =
      std::make_shared<std::vector<validation::Measurement>>(validation::load_measurements(catalog, request.inputs));
  if (const auto wanted = base::value_in(validation::kRoleNames, request.role)) {
    std::erase_if(*rows, [&](const validation::Measurement& m) { return m.role != *wanted; });
    if (rows->empty()) {
      throw InputError(
          {Diagnostic{SourcePos{request.inputs.front()}, "", "no " + request.role + " rows in these measurements"}});
    }
  }
  ValidateAnswer a;
  a.rows = rows;
  const validation::ValidationReport* r = nullptr;
  if (request.cross_validate) {
    // Every publication is left out of the fits in turn; the role filter above still applies.
    a.cross = validation::cross_validate(*rows, catalog);
    r = &a.cross->held_out;
  } else {
    a.report = validation::validate(validation::resolve(*rows, catalog), true);  // with bands
    r = &*a.report;
  }
  if (request.fail_above && (r->all.count == 0 || 100.0 * r->all.median > *request.fail_above)) {
    a.breaches.push_back(Breach{Breach::What::kMedian, request.cross_validate, request.role, r->all.median,
                                r->all.count, *request.fail_above});
  }
  if (request.cross_validate) {
    for (const auto& s : r->by_kind) {
      for (const auto& [kind, bound] : request.fail_above_kind) {
        if (kind == s.group && 100.0 * s.median > bound) {
          a.breaches.push_back(Breach{Breach::What::kKindMedian, true, s.group, s.median, s.count, bound});
        }
      }
    }
    for (const auto& s : r->by_runtime) {
      if (request.fail_bias && std::fabs(100.0 * s.mean) > *request.fail_bias) {
        a.breaches.push_back(Breach{Breach::What::kRuntimeBias, true, s.group, s.mean, s.count, *request.fail_bias});
      }
    }
  }
  return a;
}

}  // namespace gpusim::app
