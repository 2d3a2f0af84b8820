// Spec catalog: embedded files, --specs overrides, `base =` inheritance, architecture defaults
// (contract in include/gpusim/catalog.hpp).
#include <algorithm>
#include <filesystem>
#include <mutex>

#include "gpusim/catalog.hpp"
#include "parse/parse.hpp"

namespace gpusim::catalog {

struct SpecFile::Shared {
  std::string owned;  // the text of a file read from disk (empty for a built-in file)
  std::mutex guard;
  int uses = 0;
  bool kept = false;
  std::optional<toml::table> table;  // kept from the second use: nullopt where it does not parse
  std::vector<Diagnostic> errors;    // the parser's, kept with it
};

SpecFile::SpecFile(std::string file_path, std::string file_text)
    : path(std::move(file_path)), shared_(std::make_shared<Shared>()) {
  shared_->owned = std::move(file_text);
  text = shared_->owned;
}

SpecFile SpecFile::built_in(std::string file_path, std::string_view static_text) {
  SpecFile f(std::move(file_path), std::string());
  f.text = static_text;
  return f;
}

// The TOML trees of spec files: a tree is parsed for the first use of its file, parsed again and
// kept at the second, and copied for every use after. Calibration and cross-validation resolve
// the same files under many overlays; a one-off question pays no copy.
struct FileTrees {
  // The tree of `f`, with the parser's diagnostics added to `diags`; nullopt where it does not parse.
  static std::optional<toml::table> of(const SpecFile& f, Diagnostics& diags) {
    SpecFile::Shared& s = *f.shared_;
    std::unique_lock lock(s.guard);
    if (!s.kept && s.uses++ == 0) {
      lock.unlock();
      return parse::parse_toml(f.text, f.path, diags);
    }
    if (!s.kept) {
      Diagnostics own;
      s.table = parse::parse_toml(f.text, f.path, own);
      s.errors = own.list();
      s.kept = true;
    }
    diags.append(s.errors);
    return s.table;
  }
};

namespace embedded {
// Generated at build time by cmake/embed_specs.cmake from specs/.
struct EmbeddedSpec {
  const char* kind;
  const char* id;
  const char* path;
  const char* text;
  std::size_t size;  // of text, without its terminating zero
};
extern const EmbeddedSpec kEmbeddedSpecs[];
extern const std::size_t kEmbeddedSpecCount;
}  // namespace embedded

using hardware::GpuSpec;
using hardware::LinkSpec;
using workload::ModelShape;

// Specs already resolved, by id, each with the files it was built from ("gpus/h100-sxm5-80gb",
// "arch/hopper", ...); adding a file forgets exactly the specs built from a file of that id.
struct Catalog::Memo {
  template <class Spec>
  struct Entry {
    Spec spec;
    std::vector<std::string> from;
  };
  std::mutex mutex;
  std::map<std::string, Entry<GpuSpec>> gpus;
  std::map<std::string, Entry<LinkSpec>> links;
  std::map<std::string, Entry<ModelShape>> models;
  std::map<std::string, Entry<workload::Runtime>> runtimes;
  std::map<std::string, Entry<hardware::CommLibrary>> comms;
  std::map<std::string, Entry<hardware::HostSpec>> hosts;
  std::map<std::string, Entry<std::shared_ptr<const workload::ModelError>>> errors;

  // The spec of `id` from `entries`, or load(from) it, remember it and the files it came from.
  template <class Spec, class Load>
  Spec remembered(std::map<std::string, Entry<Spec>>& entries, const std::string& id, Load&& load) {
    {
      const std::lock_guard lock(mutex);
      if (auto it = entries.find(id); it != entries.end()) {
        return it->second.spec;
      }
    }
    std::vector<std::string> from;
    Spec spec = load(from);  // throws InputError for a bad file, which is not remembered
    const std::lock_guard lock(mutex);
    entries.emplace(id, Entry<Spec>{spec, std::move(from)});
    return spec;
  }

  void forget(const std::string& file) {
    auto drop = [&file](auto& entries) {
      std::erase_if(entries, [&file](const auto& e) {
        return std::find(e.second.from.begin(), e.second.from.end(), file) != e.second.from.end();
      });
    };
    drop(gpus);
    drop(links);
    drop(models);
    drop(runtimes);
    drop(comms);
    drop(hosts);
    drop(errors);
  }
};

namespace {

constexpr int kMaxBaseDepth = 8;

[[noreturn]] void unknown_id(const Catalog& c, SpecKind kind, const std::string& id) {
  throw InputError({Diagnostic{
      SourcePos{}, "",
      "unknown id \"" + id + "\" in " + base::name_in(kSpecFolders, kind) + "/ (" + c.known_ids_near(kind, id) + ")"}});
}

// Parses layer `layer` of a file and resolves `base =` chains into one merged table. A file whose
// base is its own id patches the layer below it (a calibration overlay over the built-in file).
toml::table merged_table(const Catalog& c, SpecKind kind, const std::string& id, std::size_t layer, Diagnostics& diags,
                         int depth, std::vector<std::string>* from) {
  const SpecFile& f = c.file_layer(kind, id, layer);
  if (from != nullptr) {
    from->push_back(std::string(base::name_in(kSpecFolders, kind)) + "/" + id);
  }
  std::optional<toml::table> parsed = FileTrees::of(f, diags);
  if (!parsed) {
    return {};
  }
  toml::table table = std::move(*parsed);
  const toml::node* base = table.get("base");
  if (base == nullptr) {
    return table;
  }
  if (!base->is_string()) {
    diags.add(parse::pos_of(*base), "base", "expected the id of another spec file as a string");
    return table;
  }
  const std::string base_id = base->as_string()->get();
  if (depth >= kMaxBaseDepth) {
    diags.add(parse::pos_of(*base), "base", "inheritance deeper than 8 levels (a cycle?) at \"" + base_id + "\"");
    return table;
  }
  const bool patch = base_id == id;
  if (patch ? layer == 0 : !c.has(kind, base_id)) {
    diags.add(parse::pos_of(*base), "base",
              patch ? std::string("a file may name its own id as base only to patch a built-in file")
                    : "unknown id \"" + base_id + "\" in " + base::name_in(kSpecFolders, kind) + "/");
    return table;
  }
  const std::size_t base_layer = patch ? layer - 1 : c.layers(kind, base_id) - 1;
  toml::table merged = merged_table(c, kind, base_id, base_layer, diags, depth + 1, from);
  merged.erase("meta");                          // a child's sources and assumptions are its own
  parse::merge_under(table, std::move(merged));  // the child's file stays the table's source
  return table;
}

toml::table merged_table(const Catalog& c, SpecKind kind, const std::string& id, Diagnostics& diags,
                         std::vector<std::string>* from = nullptr) {
  return merged_table(c, kind, id, c.layers(kind, id) - 1, diags, 0, from);
}

GpuSpec load_gpu(const Catalog& c, const std::string& id, const SpecFile& f, Diagnostics& diags,
                 std::vector<std::string>* from) {
  toml::table table = merged_table(c, SpecKind::kGpu, id, diags, from);
  GpuSpec g;
  g.id = id;
  g.origin = f.path;
  if (!diags.empty()) {
    return g;
  }
  // Architecture defaults ([efficiency], [power], [memory], [uncertainty]) go under the GPU's own
  // values; the merged table keeps the GPU file as its source, so that a key missing from both is
  // reported at the GPU file.
  if (const auto* arch = table.get_as<std::string>("architecture");
      arch != nullptr && c.has(SpecKind::kArch, arch->get())) {
    toml::table at = merged_table(c, SpecKind::kArch, arch->get(), diags, from);
    parse::Reader ar(at, "", diags);
    ar.allow({"efficiency", "power", "memory", "uncertainty", "name", "base"});
    if (auto meta = ar.table("meta", parse::Need::kOptional)) {
      meta->string_list("sources");
      meta->string_list("assumptions");
      meta->finish();
    }
    ar.finish();
    at.erase("meta");
    at.erase("name");
    at.erase("base");
    parse::merge_under(table, std::move(at));
  }
  parse::Reader r(table, "", diags);
  parse::read_gpu(r, g);
  return g;
}

}  // namespace

Catalog::Catalog() : memo_(std::make_unique<Memo>()) {}
Catalog::Catalog(const Catalog& other) : files_(other.files_), memo_(std::make_unique<Memo>()) {
  const std::lock_guard lock(other.memo_->mutex);
  memo_->gpus = other.memo_->gpus;
  memo_->links = other.memo_->links;
  memo_->models = other.memo_->models;
  memo_->runtimes = other.memo_->runtimes;
  memo_->comms = other.memo_->comms;
  memo_->hosts = other.memo_->hosts;
  memo_->errors = other.memo_->errors;
}
Catalog& Catalog::operator=(const Catalog& other) {
  if (this != &other) {
    Catalog copy(other);
    *this = std::move(copy);
  }
  return *this;
}
Catalog::Catalog(Catalog&&) noexcept = default;
Catalog& Catalog::operator=(Catalog&&) noexcept = default;
Catalog::~Catalog() = default;

Catalog Catalog::builtin() {
  Catalog c;
  for (std::size_t i = 0; i < embedded::kEmbeddedSpecCount; ++i) {
    const auto& e = embedded::kEmbeddedSpecs[i];
    if (auto kind = base::value_in(kSpecFolders, e.kind)) {
      c.add_file(*kind, e.id, SpecFile::built_in(e.path, std::string_view(e.text, e.size)));
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
        add_file(kind, entry.path().stem().string(),
                 SpecFile{entry.path().string(), parse::read_file(entry.path().string(), "spec file")});
      }
    }
  };
  add_toml_files(dir, SpecKind::kGpu);
  for (const auto& [kind, sub] : kSpecFolders) {
    const fs::path p = fs::path(dir) / sub;
    if (fs::is_directory(p, ec)) {
      add_toml_files(p, kind);
    }
  }
}

void Catalog::add_file(SpecKind kind, const std::string& id, SpecFile file) {
  files_[kind][id].push_back(std::move(file));
  const std::lock_guard lock(memo_->mutex);
  memo_->forget(std::string(base::name_in(kSpecFolders, kind)) + "/" + id);
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

std::string Catalog::known_ids_near(SpecKind kind, std::string_view asked) const {
  const std::string hint = base::did_you_mean(asked, ids(kind));
  return (hint.empty() ? "" : hint + " ") + "known: " + known_ids(kind);
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
  return memo_->remembered(memo_->gpus, id, [&](std::vector<std::string>& from) {
    Diagnostics diags;
    GpuSpec g = load_gpu(*this, id, file(SpecKind::kGpu, id), diags, &from);
    diags.throw_if_any();
    return g;
  });
}

LinkSpec Catalog::link(const std::string& id) const {
  return memo_->remembered(memo_->links, id, [&](std::vector<std::string>& from) {
    Diagnostics diags;
    const SpecFile& f = file(SpecKind::kLink, id);
    LinkSpec l;
    l.id = id;
    l.origin = f.path;
    toml::table t = merged_table(*this, SpecKind::kLink, id, diags, &from);
    if (diags.empty()) {
      parse::Reader r(t, "", diags);
      r.allow({"base"});
      parse::read_link(r, l);
    }
    diags.throw_if_any();
    return l;
  });
}

ModelShape Catalog::model(const std::string& id) const {
  return memo_->remembered(memo_->models, id, [&](std::vector<std::string>& from) {
    Diagnostics diags;
    (void)file(SpecKind::kModel, id);  // unknown ids throw here
    ModelShape m;
    toml::table t = merged_table(*this, SpecKind::kModel, id, diags, &from);
    if (diags.empty()) {
      parse::Reader r(t, "", diags);
      r.allow({"base"});
      if (auto v = r.string("name", parse::Need::kRequired)) {
        m.name = *v;
      }
      const auto family = r.choice("family", workload::kFamilyNames, parse::Need::kOptional);
      if (family == workload::Family::kResNet) {
        parse::read_resnet_keys(r, m);
      } else {
        if (family == workload::Family::kVit) {
          parse::read_vit_keys(r, m);  // before read_model_keys, which finishes the table
        }
        parse::read_model_keys(r, m, parse::Need::kRequired);
        parse::check_model(r, m);
        if (family == workload::Family::kVit) {
          parse::check_vit(r, m);
        }
      }
      if (auto meta = r.table("meta", parse::Need::kOptional)) {
        meta->string_list("sources");
        meta->string_list("assumptions");
        meta->finish();
      }
      r.finish();
    }
    diags.throw_if_any();
    return m;
  });
}

workload::Runtime Catalog::runtime(const std::string& id) const {
  return memo_->remembered(memo_->runtimes, id, [&](std::vector<std::string>& from) {
    Diagnostics diags;
    workload::Runtime rt;
    rt.id = id;
    rt.origin = file(SpecKind::kRuntime, id).path;
    toml::table t = merged_table(*this, SpecKind::kRuntime, id, diags, &from);
    if (diags.empty()) {
      parse::Reader r(t, "", diags);
      parse::read_runtime(r, rt);
    }
    diags.throw_if_any();
    return rt;
  });
}

hardware::CommLibrary Catalog::comm(const std::string& id) const {
  return memo_->remembered(memo_->comms, id, [&](std::vector<std::string>& from) {
    Diagnostics diags;
    hardware::CommLibrary c;
    c.id = id;
    c.origin = file(SpecKind::kComm, id).path;
    toml::table t = merged_table(*this, SpecKind::kComm, id, diags, &from);
    if (diags.empty()) {
      parse::Reader r(t, "", diags);
      parse::read_comm(r, c);
    }
    diags.throw_if_any();
    return c;
  });
}

hardware::HostSpec Catalog::host(const std::string& id) const {
  return memo_->remembered(memo_->hosts, id, [&](std::vector<std::string>& from) {
    Diagnostics diags;
    hardware::HostSpec h;
    h.id = id;
    h.origin = file(SpecKind::kHost, id).path;
    toml::table t = merged_table(*this, SpecKind::kHost, id, diags, &from);
    if (diags.empty()) {
      parse::Reader r(t, "", diags);
      parse::read_host(r, h);
    }
    diags.throw_if_any();
    return h;
  });
}

std::shared_ptr<const workload::ModelError> Catalog::model_error() const {
  if (!has(SpecKind::kUncertainty, kModelErrorId)) {
    return std::make_shared<const workload::ModelError>();
  }
  return memo_->remembered(memo_->errors, kModelErrorId, [&](std::vector<std::string>& from) {
    Diagnostics diags;
    auto me = std::make_shared<workload::ModelError>();
    me->origin = file(SpecKind::kUncertainty, kModelErrorId).path;
    const toml::table t = merged_table(*this, SpecKind::kUncertainty, kModelErrorId, diags, &from);
    if (diags.empty()) {
      parse::read_model_error(t, diags, ids(SpecKind::kRuntime), *me);
    }
    diags.throw_if_any();
    return std::shared_ptr<const workload::ModelError>(std::move(me));
  });
}

}  // namespace gpusim::catalog
