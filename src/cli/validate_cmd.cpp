// gpusim validate MEASUREMENTS...: predicted against measured, per row and summarized.
#include <cmath>
#include <iostream>
#include <map>

#include "cli/options.hpp"

namespace gpusim::cli {

int run_validate(const std::vector<std::string>& args) {
  Common c;
  std::vector<std::string> inputs;
  std::string role = "all";
  double fail_above = -1;
  double fail_bias = -1;
  std::string fail_kind;
  bool cross = false;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("inputs", po::value<std::vector<std::string>>(&inputs), "measurement files or directories")(
      "role", po::value<std::string>(&role)->default_value("all"), "check | fit | all: the rows to predict")(
      "fail-above", po::value<double>(&fail_above),
      "exit 3 when the median |error| of the selected scored rows exceeds PCT percent")(
      "cross-validate", po::bool_switch(&cross),
      "predict each publication's rows with every value fitted on it taken back (leave one publication out)")(
      "fail-bias", po::value<double>(&fail_bias),
      "with --cross-validate: exit 3 when a runtime's signed mean error is beyond +-PCT percent")(
      "fail-above-kind", po::value<std::string>(&fail_kind),
      "with --cross-validate: KIND=PCT,...: exit 3 when the median |error| of that kind of row "
      "(microbenchmark, training, serving) exceeds PCT percent");
  po::positional_options_description pos;
  pos.add("inputs", -1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim validate MEASUREMENTS... [--role check|fit|all] [--format text|json|csv] "
             "[--fail-above PCT]\n"
             "                       [--cross-validate [--fail-bias PCT] [--fail-above-kind KIND=PCT,...]]\n"
             "Predicts every measured row under its conditions and prints measured, predicted and signed\n"
             "error, then median / 90th percentile / worst |error| per GPU, per category and per role: check\n"
             "rows are held out from calibration (the evidence), fit rows set or tuned a spec value.\n"
             "--cross-validate leaves each publication out in turn: every spec value fitted on its rows is\n"
             "taken back and fitted again on the other publications, and its rows are predicted so; the\n"
             "summaries (per kind of job, GPU segment, runtime) are then over every row.\n"
             "A report: exit 0 unless --fail-above or --fail-bias is given and exceeded (exit 3).")) {
    return 0;
  }
  if (inputs.empty()) {
    throw UsageError("needs measurement files or directories (e.g. gpusim validate measurements/)");
  }
  check_format(c.format);
  const auto wanted = base::value_in(validation::kRoleNames, role);
  if (role != "all" && !wanted) {
    throw UsageError("--role must be check, fit or all, got \"" + role + "\"");
  }
  if (vm.count("fail-above") != 0U && !(fail_above >= 0)) {
    throw UsageError("--fail-above must be a percentage of at least 0");
  }
  if (vm.count("fail-bias") != 0U && !(fail_bias >= 0)) {
    throw UsageError("--fail-bias must be a percentage of at least 0");
  }
  if ((vm.count("fail-bias") != 0U || vm.count("fail-above-kind") != 0U) && !cross) {
    throw UsageError(vm.count("fail-bias") != 0U ? "--fail-bias needs --cross-validate"
                                                 : "--fail-above-kind needs --cross-validate");
  }
  // --fail-above-kind training=13,serving=22: a bound per kind of row.
  std::map<std::string, double> kind_bounds;
  for (std::size_t at = 0; !fail_kind.empty() && at <= fail_kind.size();) {
    const std::size_t end = std::min(fail_kind.find(',', at), fail_kind.size());
    const std::string item = fail_kind.substr(at, end - at);
    const std::size_t eq = item.find('=');
    const std::string kind = item.substr(0, std::min(eq, item.size()));
    double bound = -1;
    try {
      std::size_t used = 0;
      bound = eq == std::string::npos ? -1 : std::stod(item.substr(eq + 1), &used);
      if (used != item.size() - eq - 1) {
        bound = -1;
      }
    } catch (const std::exception&) {
      bound = -1;
    }
    if (!base::value_in(validation::kRowKindNames, kind) || !(bound >= 0)) {
      throw UsageError(
          "--fail-above-kind takes KIND=PCT,... with KIND one of microbenchmark, training, serving and "
          "PCT >= 0, got \"" +
          item + "\"");
    }
    kind_bounds[kind] = bound;
    at = end + 1;
  }
  const Catalog catalog = load_catalog_with_env(c.specs);
  std::vector<validation::Measurement> rows = validation::load_measurements(catalog, inputs);
  if (wanted) {
    std::erase_if(rows, [&](const validation::Measurement& m) { return m.role != *wanted; });
    if (rows.empty()) {
      throw InputError({Diagnostic{SourcePos{inputs.front()}, "", "no " + role + " rows in these measurements"}});
    }
  }
  if (cross) {
    // Every publication is left out of the fits in turn; the role filter above still applies.
    const validation::CrossValidation cv = validation::cross_validate(rows, catalog);
    write_outputs({{c.out, c.format == "json"  ? report::cross_validation_json(cv)
                           : c.format == "csv" ? report::cross_validation_csv(cv)
                                               : report::cross_validation_text(cv)}});
    const validation::ValidationReport& r = cv.held_out;
    int status = 0;
    if (fail_above >= 0 && (r.all.count == 0 || 100.0 * r.all.median > fail_above)) {
      std::cerr << base::strfmt(
          "gpusim validate: cross-validated median |error| %.2f %% of %d scored rows exceeds %.2f %%\n",
          100.0 * r.all.median, r.all.count, fail_above);
      status = kThresholdExceeded;
    }
    for (const auto& s : r.by_kind) {
      if (const auto b = kind_bounds.find(s.group); b != kind_bounds.end() && 100.0 * s.median > b->second) {
        std::cerr << base::strfmt(
            "gpusim validate: cross-validated median |error| %.2f %% of %d %s rows exceeds %.2f %%\n", 100.0 * s.median,
            s.count, s.group.c_str(), b->second);
        status = kThresholdExceeded;
      }
    }
    for (const auto& s : r.by_runtime) {
      if (fail_bias >= 0 && std::fabs(100.0 * s.mean) > fail_bias) {
        std::cerr << base::strfmt(
            "gpusim validate: runtime %s has a cross-validated mean error of %+.2f %% over %d "
            "rows, beyond +-%.2f %%\n",
            s.group.c_str(), 100.0 * s.mean, s.count, fail_bias);
        status = kThresholdExceeded;
      }
    }
    return status;
  }
  const validation::ValidationReport r = validation::validate(validation::resolve(rows, catalog), true);  // with bands
  write_outputs({{c.out, c.format == "json"  ? report::validation_json(r)
                         : c.format == "csv" ? report::validation_csv(r)
                                             : report::validation_text(r)}});
  if (fail_above >= 0 && (r.all.count == 0 || 100.0 * r.all.median > fail_above)) {
    std::cerr << base::strfmt("gpusim validate: median |error| %.2f %% of %d scored %s rows exceeds %.2f %%\n",
                              100.0 * r.all.median, r.all.count, role.c_str(), fail_above);
    return kThresholdExceeded;
  }
  return 0;
}

}  // namespace gpusim::cli
