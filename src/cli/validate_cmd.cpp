// gpusim validate MEASUREMENTS...: predicted against measured, per row and summarized.
#include "cli/options.hpp"
#include "gpusim/validate/validate.hpp"

namespace gpusim::cli {

int run_validate(const std::vector<std::string>& args) {
  Common c;
  std::vector<std::string> inputs;
  double fail_above = -1;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("inputs", po::value<std::vector<std::string>>(&inputs), "measurement files or directories")(
      "fail-above", po::value<double>(&fail_above),
      "exit 1 when the median |error| of all scored rows exceeds PCT percent");
  po::positional_options_description pos;
  pos.add("inputs", -1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim validate MEASUREMENTS... [--format text|json|csv] [--fail-above PCT]\n"
             "Predicts every measured row under its conditions and prints measured, predicted and signed\n"
             "error, then median / 90th percentile / worst |error| per GPU and per category. A report, not a\n"
             "test: exit 0 unless --fail-above is given and exceeded.")) {
    return 0;
  }
  if (inputs.empty()) {
    throw UsageError("needs measurement files or directories (e.g. gpusim validate measurements/)");
  }
  check_format(c.format);
  const Catalog catalog = load_catalog(c.specs);
  const std::vector<Measurement> rows = load_measurements(catalog, inputs);
  const ValidationReport report = validate(rows, catalog);
  emit(c.format == "json"  ? validation_json(report)
       : c.format == "csv" ? validation_csv(report)
                           : validation_text(report),
       c.out);
  if (fail_above >= 0 && 100.0 * report.all.median > fail_above) {
    return 1;
  }
  return 0;
}

}  // namespace gpusim::cli
