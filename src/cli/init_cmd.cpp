// gpusim init training|serving [-o FILE]: a commented scenario to start from (app::init,
// report::scenario_template).
#include <filesystem>

#include "cli/options.hpp"

namespace gpusim::cli {

int run_init(const std::vector<std::string>& args) {
  std::string kind;
  std::string out;
  po::options_description d("options");
  d.add_options()("help,h", "show this help")("kind", po::value<std::string>(&kind), "training | serving")(
      "output,o", po::value<std::string>(&out), "write the template to FILE (refuses to overwrite one)");
  po::positional_options_description pos;
  pos.add("kind", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim init training|serving [-o FILE]\n"
             "Prints a commented scenario to start from; every key is documented in docs/scenarios.md.")) {
    return 0;
  }
  if (kind.empty()) {
    throw UsageError("init needs training or serving");
  }
  std::error_code ec;  // a file there is kept; a device or pipe (or a link to one) takes the template
  if (!out.empty() && out != "-" && std::filesystem::is_regular_file(out, ec)) {
    throw UsageError(out + " exists: init does not overwrite a scenario");
  }
  write_outputs({{out, app::init(kind)}});
  return 0;
}

}  // namespace gpusim::cli
