// gpusim validate MEASUREMENTS...: predicted against measured, per row and summarized.
#include <algorithm>
#include <iostream>

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
  check_format(c.format);
  app::ValidateRequest request;
  request.inputs = inputs;
  request.role = role;
  request.cross_validate = cross;
  if (vm.count("fail-above") != 0U) {
    request.fail_above = fail_above;
  }
  if (vm.count("fail-bias") != 0U) {
    request.fail_bias = fail_bias;
  }
  // --fail-above-kind training=13,serving=22: a bound per kind of row (app::check checks each).
  if (!fail_kind.empty()) {
    std::string bad;
    const auto bounds = key_numbers(fail_kind, bad);
    if (!bounds) {
      throw UsageError(
          "--fail-above-kind takes KIND=PCT,... with KIND one of microbenchmark, training, serving and PCT >= 0, "
          "got \"" +
          bad + "\"");
    }
    request.fail_above_kind = *bounds;
  }
  app::check(request);
  const app::ValidateAnswer a = app::validate(load_catalog_with_env(c.specs), request);
  if (a.cross) {
    write_outputs({{c.out, c.format == "json"  ? report::cross_validation_json(*a.cross)
                           : c.format == "csv" ? report::cross_validation_csv(*a.cross)
                                               : report::cross_validation_text(*a.cross)}});
  } else {
    write_outputs({{c.out, c.format == "json"  ? report::validation_json(*a.report)
                           : c.format == "csv" ? report::validation_csv(*a.report)
                                               : report::validation_text(*a.report)}});
  }
  for (const auto& b : a.breaches) {
    std::cerr << "gpusim validate: " << report::threshold_breach_text(b) << '\n';
  }
  return a.breaches.empty() ? 0 : kThresholdExceeded;
}

}  // namespace gpusim::cli
