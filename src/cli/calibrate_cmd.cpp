// gpusim calibrate MEASUREMENTS... -o DIR: fit efficiency parameters on the fit rows, write an
// overlay of spec files, and report the validation error before and after, fit and check rows apart.
#include <filesystem>

#include "cli/options.hpp"

namespace gpusim::cli {

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
             "Fits each GPU's efficiency parameters (and its architecture's defaults) by least squares on the\n"
             "rows marked role = \"fit\", and writes DIR/gpus/<id>.toml and DIR/arch/<arch>.toml, patches over\n"
             "the built-in files that `--specs DIR` loads. Prints the fitted values and the validation error\n"
             "before and after, on fit rows and on the held-out check rows.",
             OutputIs::kDirectory)) {
    return 0;
  }
  if (inputs.empty() || out_dir.empty()) {
    throw UsageError("needs measurement files and -o DIR (see gpusim calibrate --help)");
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec)) {
    throw InputError({Diagnostic{SourcePos{out_dir}, "-o", "exists and is not a directory"}});
  }
  const app::CalibrateAnswer a = app::calibrate(load_catalog_with_env(c.specs), {inputs});
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const auto& f : a.files) {
    outputs.emplace_back((fs::path(out_dir) / f.relative_path).string(), f.text);
  }
  outputs.emplace_back("", report::calibration_text(a.fit, a.before, a.after, out_dir));
  // DIR and its folders are created here and removed again when a write fails: a failed run
  // leaves nothing behind.
  write_outputs(outputs, WriteOptions{true, inputs_of(d, vm)});
  return 0;
}

}  // namespace gpusim::cli
