// The spec catalog: GPU, link, architecture and model-shape files by id. The files under specs/
// are embedded in the binary at build time; directories given with --specs or GPUSIM_SPECS add or
// override files (same layout: gpus/, links/, models/, arch/, runtimes/, comm/, hosts/; a bare *.toml in the directory
// is taken as a GPU file). Formats: specs/README.md.
//
// Contract: loading an id parses the file, resolves `base =` inheritance (deep merge, child wins),
// merges the architecture's [efficiency]/[power]/[memory] defaults under the GPU's own values,
// validates every key and throws InputError listing all problems with file:line:col. Unknown ids
// throw too. A loaded spec is remembered until a file is added, so resolving the same id twice
// costs one parse; a Catalog may be shared between threads.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusim/base.hpp"
#include "gpusim/hardware.hpp"
#include "gpusim/workload.hpp"

namespace gpusim::catalog {

enum class SpecKind { kGpu, kLink, kModel, kArch, kRuntime, kComm, kHost };
// The catalog folder of each kind.
inline constexpr base::Named<SpecKind> kSpecFolders[] = {{SpecKind::kGpu, "gpus"},         {SpecKind::kLink, "links"},
                                                         {SpecKind::kModel, "models"},     {SpecKind::kArch, "arch"},
                                                         {SpecKind::kRuntime, "runtimes"}, {SpecKind::kComm, "comm"},
                                                         {SpecKind::kHost, "hosts"}};

struct SpecFile {
  std::string path;  // shown in messages, e.g. "specs/gpus/h100-sxm5-80gb.toml"
  std::string text;
};

class Catalog {
 public:
  Catalog();
  Catalog(const Catalog& other);
  Catalog& operator=(const Catalog& other);
  Catalog(Catalog&&) noexcept;
  Catalog& operator=(Catalog&&) noexcept;
  ~Catalog();

  // The embedded files only.
  static Catalog builtin();
  // Adds or overrides files from a directory; throws InputError if it cannot be read.
  void add_directory(const std::string& dir);
  // A file with an id already present overrides it; if it says `base = "<its own id>"` it is a
  // patch over the file it overrides (calibration overlays), otherwise a replacement.
  void add_file(SpecKind kind, const std::string& id, SpecFile file);

  [[nodiscard]] std::vector<std::string> ids(SpecKind kind) const;
  [[nodiscard]] bool has(SpecKind kind, const std::string& id) const;
  [[nodiscard]] const SpecFile& file(SpecKind kind, const std::string& id) const;  // the top layer
  [[nodiscard]] std::size_t layers(SpecKind kind, const std::string& id) const;
  [[nodiscard]] const SpecFile& file_layer(SpecKind kind, const std::string& id, std::size_t layer) const;
  // "a100-pcie-40gb, a100-pcie-80gb, ...": for messages about unknown ids.
  [[nodiscard]] std::string known_ids(SpecKind kind) const;

  [[nodiscard]] hardware::GpuSpec gpu(const std::string& id) const;
  [[nodiscard]] hardware::LinkSpec link(const std::string& id) const;
  [[nodiscard]] workload::ModelShape model(const std::string& id) const;
  [[nodiscard]] workload::Runtime runtime(const std::string& id) const;
  [[nodiscard]] hardware::CommLibrary comm(const std::string& id) const;
  [[nodiscard]] hardware::HostSpec host(const std::string& id) const;

  // Validates every file of the catalog; returns all problems found (empty = all good).
  [[nodiscard]] std::vector<Diagnostic> check_all() const;

 private:
  struct Memo;
  std::map<SpecKind, std::map<std::string, std::vector<SpecFile>>> files_;  // layers, bottom first
  std::unique_ptr<Memo> memo_;
};

// Validates one standalone file of the given kind (for `gpusim specs check FILE`); a GPU file may
// name a base from `catalog`; an architecture file is checked as the defaults of every GPU of it.
std::vector<Diagnostic> check_file(const Catalog& catalog, SpecKind kind, const std::string& path);

}  // namespace gpusim::catalog
