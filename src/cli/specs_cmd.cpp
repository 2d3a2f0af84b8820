// gpusim specs list | show ID | check [FILES]
#include <filesystem>

#include "cli/options.hpp"

namespace gpusim::cli {

namespace {

SpecKind kind_of_path(const std::string& path) {
  // A file outside the catalog's folders (gpus/, links/, ..., uncertainty/) is taken as a GPU file (e.g. a
  // calibration overlay).
  return base::value_in(catalog::kSpecFolders, std::filesystem::path(path).parent_path().filename().string())
      .value_or(SpecKind::kGpu);
}

}  // namespace

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
    for (const auto& [k, folder] : catalog::kSpecFolders) {
      if (catalog.has(k, rest[1])) {
        const catalog::SpecFile& f = catalog.file(k, rest[1]);
        if (k == SpecKind::kGpu) {
          (void)catalog.gpu(rest[1]);  // validate before showing
        }
        write_outputs({{"", "# " + f.path + "\n" + std::string(f.text)}});
        return 0;
      }
    }
    (void)catalog.file(SpecKind::kGpu, rest[1]);  // throws "unknown id" with the known ids
    return kBadInput;
  }
  if (sub == "check") {
    std::vector<Diagnostic> problems;
    std::size_t files = 0;
    if (rest.size() == 1) {
      problems = catalog.check_all();
      for (const auto& [kind, folder] : catalog::kSpecFolders) {
        files += catalog.ids(kind).size();
      }
    } else {
      for (std::size_t i = 1; i < rest.size(); ++i) {
        auto p = catalog::check_file(catalog, kind_of_path(rest[i]), rest[i]);
        problems.insert(problems.end(), p.begin(), p.end());
        ++files;
      }
    }
    if (!problems.empty()) {
      throw InputError(problems);
    }
    write_outputs({{"", "checked " + std::to_string(files) + " spec files: no problems\n"}});
    return 0;
  }
  throw UsageError("unknown specs subcommand \"" + sub + "\" (list, show ID, check [FILES])");
}

}  // namespace gpusim::cli
