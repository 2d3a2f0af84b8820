// gpusim specs list | show ID | check [FILES]
#include "cli/options.hpp"

namespace gpusim::cli {

int run_specs(const std::vector<std::string>& args) {
  Common c;
  std::vector<std::string> rest;
  po::options_description d("options");
  add_common(d, c, false);
  d.add_options()("args", po::value<std::vector<std::string>>(&rest), "list | show ID | check [FILES]");
  po::positional_options_description pos;
  pos.add("args", -1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim specs list | show ID | check [FILES...]\n"
             "  list        the catalog (GPUs with their key figures, links, models, runtimes,\n"
             "              collective libraries)\n"
             "  show ID     the spec file of a GPU, link, model, arch, runtime, collective\n"
             "              library or model-error, as the catalog holds it\n"
             "  check       validate every catalog file, or the given files; exit 2 on any problem")) {
    return 0;
  }
  if (rest.empty()) {
    throw UsageError("expected list, show ID or check [FILES]");
  }
  const Catalog catalog = load_catalog_with_env(c.specs);
  const std::string& sub = rest[0];
  if (sub == "list") {
    write_outputs({{"", report::catalog_text(catalog)}});
    return 0;
  }
  if (sub == "show") {
    if (rest.size() != 2) {
      throw UsageError("specs show needs one ID");
    }
    const catalog::SpecFile f = app::show_spec(catalog, rest[1]);
    write_outputs({{"", "# " + f.path + "\n" + std::string(f.text)}});
    return 0;
  }
  if (sub == "check") {
    const std::size_t files = app::check_specs(catalog, std::vector<std::string>(rest.begin() + 1, rest.end()));
    write_outputs({{"", "checked " + std::to_string(files) + " spec files: no problems\n"}});
    return 0;
  }
  throw UsageError("unknown specs subcommand \"" + sub + "\" (list, show ID, check [FILES])");
}

}  // namespace gpusim::cli
