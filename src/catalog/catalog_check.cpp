// The catalog's checks (include/gpusim/catalog.hpp): every file of it, one file against it, and
// the documented range of every key.
#include <algorithm>
#include <filesystem>

#include "gpusim/catalog.hpp"
#include "parse/parse.hpp"

namespace gpusim::catalog {

using hardware::GpuSpec;

std::vector<Diagnostic> Catalog::check_all() const {
  std::vector<Diagnostic> all;
  auto collect = [&all](auto&& load) {
    try {
      load();
    } catch (const InputError& e) {
      all.insert(all.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  };
  for (const auto& id : ids(SpecKind::kGpu)) {
    collect([&] { (void)gpu(id); });
    collect([&] {
      const GpuSpec g = gpu(id);
      if (g.peer_link != "none" && !has(SpecKind::kLink, g.peer_link)) {
        throw InputError(
            {Diagnostic{SourcePos{g.origin}, "peer_link.link", "unknown link id \"" + g.peer_link + "\""}});
      }
    });
  }
  for (const auto& id : ids(SpecKind::kLink)) {
    collect([&] { (void)link(id); });
  }
  for (const auto& id : ids(SpecKind::kModel)) {
    collect([&] { (void)model(id); });
  }
  for (const auto& id : ids(SpecKind::kRuntime)) {
    collect([&] { (void)runtime(id); });
  }
  for (const auto& id : ids(SpecKind::kComm)) {
    collect([&] { (void)comm(id); });
  }
  for (const auto& id : ids(SpecKind::kHost)) {
    collect([&] { (void)host(id); });
  }
  for (const auto& id : ids(SpecKind::kUncertainty)) {
    if (id != kModelErrorId) {
      all.push_back(Diagnostic{SourcePos{file(SpecKind::kUncertainty, id).path}, "",
                               std::string("uncertainty/ holds ") + kModelErrorId + ".toml only"});
    }
  }
  collect([&] { (void)model_error(); });
  // Duplicates of a GPU failing both loads are reported once.
  std::sort(all.begin(), all.end(), [](const Diagnostic& a, const Diagnostic& b) { return a.format() < b.format(); });
  all.erase(std::unique(all.begin(), all.end(),
                        [](const Diagnostic& a, const Diagnostic& b) { return a.format() == b.format(); }),
            all.end());
  return all;
}

std::vector<Diagnostic> check_file(const Catalog& catalog, SpecKind kind, const std::string& path) {
  Catalog c = catalog;
  const std::string id = std::filesystem::path(path).stem().string();
  try {
    c.add_file(kind, id, SpecFile{path, parse::read_file(path, "spec file")});
    switch (kind) {
      case SpecKind::kGpu:
        (void)c.gpu(id);
        break;
      case SpecKind::kLink:
        (void)c.link(id);
        break;
      case SpecKind::kModel:
        (void)c.model(id);
        break;
      case SpecKind::kRuntime:
        (void)c.runtime(id);
        break;
      case SpecKind::kComm:
        (void)c.comm(id);
        break;
      case SpecKind::kHost:
        (void)c.host(id);
        break;
      case SpecKind::kUncertainty:
        if (id != kModelErrorId) {
          return {Diagnostic{SourcePos{path}, "", std::string("uncertainty/ holds ") + kModelErrorId + ".toml only"}};
        }
        (void)c.model_error();
        break;
      case SpecKind::kArch:
        // An architecture file holds defaults: check it under every GPU of that architecture.
        for (const auto& gpu_id : c.ids(SpecKind::kGpu)) {
          const GpuSpec g = catalog.gpu(gpu_id);
          if (hardware::to_string(g.arch) == id) {
            (void)c.gpu(gpu_id);
          }
        }
        break;
    }
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  return {};
}

std::vector<KeyRange> key_ranges() {
  std::vector<KeyRange> out;
  for (const parse::KeyRange& k : parse::key_ranges()) {
    out.push_back(
        KeyRange{std::string(k.folder), std::string(k.key), std::string(k.lo), std::string(k.hi), std::string(k.why)});
  }
  return out;
}

}  // namespace gpusim::catalog
