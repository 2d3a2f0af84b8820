// gpusim calibrate MEASUREMENTS... -o DIR: fit efficiency parameters, write an overlay of spec
// files, and report the validation error before and after.
#include <cstdio>
#include <iostream>

#include "cli/options.hpp"
#include "common/strfmt.hpp"
#include "gpusim/validate/calibrate.hpp"
#include "gpusim/validate/validate.hpp"

namespace gpusim::cli {

using detail::strfmt;

int run_calibrate(const std::vector<std::string>& args) {
  Common c;
  std::vector<std::string> inputs;
  std::string out_dir;
  po::options_description d("options");
  add_common(d, c, false);
  d.add_options()("inputs", po::value<std::vector<std::string>>(&inputs), "measurement files or directories")(
      "output,o", po::value<std::string>(&out_dir), "directory to write the overlay spec files to (required)");
  po::positional_options_description pos;
  pos.add("inputs", -1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim calibrate MEASUREMENTS... -o DIR\n"
             "Fits each GPU's efficiency parameters (and its architecture's defaults) by least squares and\n"
             "writes DIR/gpus/<id>.toml and DIR/arch/<arch>.toml, patches over the built-in files that\n"
             "`--specs DIR` loads. Prints the fitted values and the validation error before and after.")) {
    return 0;
  }
  if (inputs.empty() || out_dir.empty()) {
    throw UsageError("needs measurement files and -o DIR (see gpusim calibrate --help)");
  }
  const Catalog before = load_catalog(c.specs);
  const std::vector<Measurement> rows = load_measurements(before, inputs);
  const CalibrationResult fit = calibrate(rows, before);
  write_overlay(fit, out_dir);

  Catalog after = before;
  after.add_directory(out_dir);
  const ValidationReport v0 = validate(rows, before);
  const ValidationReport v1 = validate(rows, after);

  std::string text = strfmt("%-22s %-28s %12s %12s  %s\n", "scope", "parameter", "prior", "fitted", "rows");
  for (const auto& p : fit.params) {
    const double k = p.is_time ? 1e6 : 1.0;
    text += strfmt("%-22s %-28s %12.4g %12.4g  %zu%s\n", p.scope.c_str(), (p.table + "." + p.key).c_str(), p.prior * k,
                   p.value * k, p.rows.size(), p.is_time ? " (us)" : "");
  }
  if (!fit.kept.empty()) {
    text += "\nkept at their prior values:\n";
    for (const auto& k : fit.kept) {
      text += "  " + k + "\n";
    }
  }
  text += strfmt("\n%-16s %8s %16s %16s\n", "category", "rows", "median before", "median after");
  for (std::size_t i = 0; i < v0.by_category.size() && i < v1.by_category.size(); ++i) {
    text += strfmt("%-16s %8d %15.1f%% %15.1f%%\n", v0.by_category[i].group.c_str(), v0.by_category[i].count,
                   100 * v0.by_category[i].median, 100 * v1.by_category[i].median);
  }
  text += strfmt("%-16s %8d %15.1f%% %15.1f%%\n", "all", v0.all.count, 100 * v0.all.median, 100 * v1.all.median);
  text += "overlay written to " + out_dir + " (use --specs " + out_dir + ")\n";
  std::cout << text;
  return 0;
}

}  // namespace gpusim::cli
