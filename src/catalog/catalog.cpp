// Spec catalog: embedded files, --specs overrides, `base =` inheritance, architecture defaults.
#include "gpusim/spec/catalog.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "spec/readers.hpp"
#include "spec/toml_reader.hpp"

namespace gpusim {
namespace detail {
struct EmbeddedSpec {
  const char* kind;
  const char* id;
  const char* path;
  const char* text;
};
extern const EmbeddedSpec kEmbeddedSpecs[];
extern const std::size_t kEmbeddedSpecCount;
}  // namespace detail

namespace {

constexpr int kMaxBaseDepth = 8;

const char* kind_name(SpecKind k) {
  switch (k) {
    case SpecKind::kGpu:
      return "GPU";
    case SpecKind::kLink:
      return "link";
    case SpecKind::kModel:
      return "model";
    case SpecKind::kArch:
      return "architecture";
  }
  return "spec";
}

}  // namespace

std::optional<SpecKind> spec_kind_from_folder(std::string_view folder) {
  if (folder == "gpus") {
    return SpecKind::kGpu;
  }
  if (folder == "links") {
    return SpecKind::kLink;
  }
  if (folder == "models") {
    return SpecKind::kModel;
  }
  if (folder == "arch") {
    return SpecKind::kArch;
  }
  return std::nullopt;
}

namespace {

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    throw InputError({Diagnostic{SourcePos{p.string()}, "", "cannot read file"}});
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

[[noreturn]] void unknown_id(const Catalog& c, SpecKind kind, const std::string& id) {
  throw InputError({Diagnostic{
      SourcePos{}, "",
      std::string("unknown ") + kind_name(kind) + " id \"" + id + "\" (known: " + c.known_ids(kind) + ")"}});
}

// Parses layer `layer` of a file and resolves `base =` chains into one merged table. A file whose
// base is its own id patches the layer below it (a calibration overlay over the built-in file).
toml::table merged_table(const Catalog& c, SpecKind kind, const std::string& id, std::size_t layer, Diagnostics& diags,
                         int depth) {
  const SpecFile& f = c.file_layer(kind, id, layer);
  auto parsed = detail::parse_toml(f.text, f.path, diags);
  if (!parsed) {
    return {};
  }
  toml::table table = std::move(*parsed);
  const toml::node* base = table.get("base");
  if (base == nullptr) {
    return table;
  }
  if (!base->is_string()) {
    diags.add(detail::pos_of(*base), "base", "expected the id of another spec file as a string");
    return table;
  }
  const std::string base_id = base->as_string()->get();
  if (depth >= kMaxBaseDepth) {
    diags.add(detail::pos_of(*base), "base", "inheritance deeper than 8 levels (a cycle?) at \"" + base_id + "\"");
    return table;
  }
  const bool patch = base_id == id;
  if (patch ? layer == 0 : !c.has(kind, base_id)) {
    diags.add(detail::pos_of(*base), "base",
              patch ? std::string("a file may name its own id as base only to patch a built-in file")
                    : std::string("unknown ") + kind_name(kind) + " id \"" + base_id + "\"");
    return table;
  }
  const std::size_t base_layer = patch ? layer - 1 : c.layers(kind, base_id) - 1;
  toml::table merged = merged_table(c, kind, base_id, base_layer, diags, depth + 1);
  merged.erase("meta");  // a child's sources and assumptions are its own
  detail::merge_into(merged, std::move(table));
  return merged;
}

toml::table merged_table(const Catalog& c, SpecKind kind, const std::string& id, Diagnostics& diags) {
  return merged_table(c, kind, id, c.layers(kind, id) - 1, diags, 0);
}

GpuSpec load_gpu(const Catalog& c, const std::string& id, const SpecFile& f, Diagnostics& diags) {
  toml::table table = merged_table(c, SpecKind::kGpu, id, diags);
  GpuSpec g;
  g.id = id;
  g.origin = f.path;
  if (!diags.empty()) {
    return g;
  }
  // Architecture defaults ([efficiency], [power], [memory]) go under the GPU's own values.
  if (const auto* arch = table.get_as<std::string>("architecture");
      arch != nullptr && c.has(SpecKind::kArch, arch->get())) {
    toml::table at = merged_table(c, SpecKind::kArch, arch->get(), diags);
    detail::Reader ar(at, "", diags);
    ar.allow({"efficiency", "power", "memory", "meta", "name", "base"});
    ar.finish();
    at.erase("meta");
    at.erase("name");
    at.erase("base");
    detail::merge_into(at, std::move(table));
    table = std::move(at);
  }
  detail::Reader r(table, "", diags);
  detail::read_gpu(r, g);
  return g;
}

}  // namespace

Catalog Catalog::builtin() {
  Catalog c;
  for (std::size_t i = 0; i < detail::kEmbeddedSpecCount; ++i) {
    const auto& e = detail::kEmbeddedSpecs[i];
    if (auto kind = spec_kind_from_folder(e.kind)) {
      c.add_file(*kind, e.id, SpecFile{e.path, e.text});
    }
  }
  return c;
}

void Catalog::add_directory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError({Diagnostic{SourcePos{dir}, "--specs", "not a directory"}});
  }
  auto add_toml_files = [this](const fs::path& folder, SpecKind kind) {
    std::error_code e2;
    for (const auto& entry : fs::directory_iterator(folder, e2)) {
      if (entry.is_regular_file() && entry.path().extension() == ".toml") {
        add_file(kind, entry.path().stem().string(), SpecFile{entry.path().string(), read_text(entry.path())});
      }
    }
  };
  add_toml_files(dir, SpecKind::kGpu);
  for (const char* sub : {"gpus", "links", "models", "arch"}) {
    const fs::path p = fs::path(dir) / sub;
    if (fs::is_directory(p, ec)) {
      add_toml_files(p, *spec_kind_from_folder(sub));
    }
  }
}

void Catalog::add_file(SpecKind kind, const std::string& id, SpecFile file) {
  files_[kind][id].push_back(std::move(file));
}

std::size_t Catalog::layers(SpecKind kind, const std::string& id) const {
  if (!has(kind, id)) {
    unknown_id(*this, kind, id);
  }
  return files_.at(kind).at(id).size();
}

const SpecFile& Catalog::file_layer(SpecKind kind, const std::string& id, std::size_t layer) const {
  if (!has(kind, id)) {
    unknown_id(*this, kind, id);
  }
  return files_.at(kind).at(id).at(layer);
}

std::vector<std::string> Catalog::ids(SpecKind kind) const {
  std::vector<std::string> out;
  if (auto it = files_.find(kind); it != files_.end()) {
    for (const auto& [id, f] : it->second) {
      out.push_back(id);
    }
  }
  return out;
}

std::string Catalog::known_ids(SpecKind kind) const {
  std::string known;
  for (const auto& k : ids(kind)) {
    known += (known.empty() ? "" : ", ") + k;
  }
  return known;
}

bool Catalog::has(SpecKind kind, const std::string& id) const {
  auto it = files_.find(kind);
  return it != files_.end() && it->second.count(id) > 0;
}

const SpecFile& Catalog::file(SpecKind kind, const std::string& id) const {
  if (!has(kind, id)) {
    unknown_id(*this, kind, id);
  }
  return files_.at(kind).at(id).back();
}

GpuSpec Catalog::gpu(const std::string& id) const {
  Diagnostics diags;
  GpuSpec g = load_gpu(*this, id, file(SpecKind::kGpu, id), diags);
  diags.throw_if_any();
  return g;
}

LinkSpec Catalog::link(const std::string& id) const {
  Diagnostics diags;
  const SpecFile& f = file(SpecKind::kLink, id);
  LinkSpec l;
  l.id = id;
  l.origin = f.path;
  toml::table t = merged_table(*this, SpecKind::kLink, id, diags);
  if (diags.empty()) {
    detail::Reader r(t, "", diags);
    r.allow({"base"});
    detail::read_link(r, l);
  }
  diags.throw_if_any();
  return l;
}

ModelShape Catalog::model(const std::string& id) const {
  Diagnostics diags;
  (void)file(SpecKind::kModel, id);  // unknown ids throw here
  ModelShape m;
  toml::table t = merged_table(*this, SpecKind::kModel, id, diags);
  if (diags.empty()) {
    detail::Reader r(t, "", diags);
    r.allow({"base"});
    if (auto v = r.string("name", detail::Need::kRequired)) {
      m.name = *v;
    }
    detail::read_model_keys(r, m, detail::Need::kRequired);
    detail::check_model(r, m);
    if (auto meta = r.table("meta", detail::Need::kOptional)) {
      meta->string_list("sources");
      meta->string_list("assumptions");
      meta->finish();
    }
    r.finish();
  }
  diags.throw_if_any();
  return m;
}

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
    c.add_file(kind, id, SpecFile{path, read_text(path)});
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
      case SpecKind::kArch:
        break;
    }
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  return {};
}

}  // namespace gpusim
