// The specs command's show and check (include/gpusim/app.hpp); its list is report::catalog_text.
#include <filesystem>

#include "gpusim/app.hpp"

namespace gpusim::app {

catalog::SpecFile show_spec(const catalog::Catalog& catalog, const std::string& id) {
  for (const auto& [kind, folder] : catalog::kSpecFolders) {
    if (catalog.has(kind, id)) {
      if (kind == catalog::SpecKind::kGpu) {
        (void)catalog.gpu(id);  // validate before showing
      }
      return catalog.file(kind, id);
    }
  }
  return catalog.file(catalog::SpecKind::kGpu, id);  // throws "unknown id" with the known GPU ids
}

std::size_t check_specs(const catalog::Catalog& catalog, const std::vector<std::string>& files) {
  std::vector<Diagnostic> problems;
  std::size_t checked = 0;
  if (files.empty()) {
    problems = catalog.check_all();
    for (const auto& [kind, folder] : catalog::kSpecFolders) {
      checked += catalog.ids(kind).size();
    }
  } else {
    for (const std::string& path : files) {
      // A file outside the catalog's folders (gpus/, links/, ..., uncertainty/) is a GPU file.
      const catalog::SpecKind kind =
          base::value_in(catalog::kSpecFolders, std::filesystem::path(path).parent_path().filename().string())
              .value_or(catalog::SpecKind::kGpu);
      const std::vector<Diagnostic> p = catalog::check_file(catalog, kind, path);
      problems.insert(problems.end(), p.begin(), p.end());
      ++checked;
    }
  }
  if (!problems.empty()) {
    throw InputError(problems);
  }
  return checked;
}

}  // namespace gpusim::app
