// gpusim validate MEASUREMENTS...: predicted against measured, per row and summarized.
#include "cli/options.hpp"

namespace gpusim::cli {

int run_validate(const std::vector<std::string>& args) {
  Common c;
  std::vector<std::string> inputs;
  std::string role = "all";
  double fail_above = -1;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("inputs", po::value<std::vector<std::string>>(&inputs), "measurement files or directories")(
      "role", po::value<std::string>(&role)->default_value("all"), "check | fit | all: the rows to predict")(
      "fail-above", po::value<double>(&fail_above),
      "exit 3 when the median |error| of the selected scored rows exceeds PCT percent");
  po::positional_options_description pos;
  pos.add("inputs", -1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim validate MEASUREMENTS... [--role check|fit|all] [--format text|json|csv] "
             "[--fail-above PCT]\n"
             "Predicts every measured row under its conditions and prints measured, predicted and signed\n"
             "error, then median / 90th percentile / worst |error| per GPU, per category and per role: check\n"
             "rows are held out from calibration (the evidence), fit rows set or tuned a spec value.\n"
             "A report: exit 0 unless --fail-above is given and exceeded (exit 3).")) {
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
  const Catalog catalog = load_catalog_with_env(c.specs);
  std::vector<validation::Measurement> rows = validation::load_measurements(catalog, inputs);
  if (wanted) {
    std::erase_if(rows, [&](const validation::Measurement& m) { return m.role != *wanted; });
    if (rows.empty()) {
      throw InputError({Diagnostic{SourcePos{inputs.front()}, "", "no " + role + " rows in these measurements"}});
    }
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
