// Scenario loading: TOML + overrides -> a validated Scenario with every default resolved (the
// format and its defaults are documented in docs/scenarios.md; schema.cpp lists the keys). This
// file holds the parsed tree, the --set overrides and resolve_tree, which reads the tables in order
// and checks the rules across them; each table's reader lives in its own file (internal.hpp).
#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include "scenario/internal.hpp"

namespace gpusim::scenario {

// An override's value as parsed from its "--set KEY=VALUE" text, the snippet's source on its node.
struct ParsedValue {
  toml::table table;    // holds the value under "value" while no resolve has it
  bool in_use = false;  // a resolve has moved the value into the tree
};

// The parsed file. toml++ drops source positions when it copies a node, so each resolve applies
// its overrides to this one tree, reads it, and puts the tree back as it was (under the lock).
struct ParsedScenario::Tree {
  toml::table root;
  std::mutex mutex;
  // Override values parsed once per --set text (a sweep resolves the same ones again and again): a
  // resolve moves the value into the tree and back, so its source survives. The first
  // kMaxParsedValues texts are kept; others are parsed each time.
  std::map<std::string, ParsedValue, std::less<>> values;
  static constexpr std::size_t kMaxParsedValues = 4096;
};

namespace detail {

std::optional<int> count(parse::Reader& r, std::string_view key, parse::Need need, std::int64_t min, std::int64_t max) {
  static_assert(limits::kDevices <= INT32_MAX && limits::kBatch <= INT32_MAX && limits::kWorkers <= INT32_MAX,
                "counts held in `int`");
  const auto v = r.integer(key, need, min, max);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

void check_across(parse::Reader& r, Diagnostics& diags, const Scenario& sc, const RuntimeOverrides& o) {
  using parse::Need;
  // FlashAttention-2 kernels cover head dimensions up to 256 [dao-2023]; the model has no
  // efficiency for larger ones.
  constexpr std::int64_t kMaxFlashHeadDim = 256;
  const workload::ModelShape& m = sc.job.model;
  if (sc.job.training && sc.runtime.flash_attention() && m.heads > 0 && m.head_dim() > kMaxFlashHeadDim) {
    diags.add(o.where_flash, "training.flash_attention",
              "head dimension " + std::to_string(m.head_dim()) +
                  " (hidden / heads) is above the 256 that flash attention covers; set flash_attention = false");
  }
  if (sc.layout.context > 1 && !sc.runtime.flash_attention()) {
    // Ring attention is a flash-attention kernel over the chunks as they arrive.
    r.table("parallelism", Need::kRequired)
        ->error("context",
                "context parallelism runs ring attention over flash-attention kernels; this runtime's attention is "
                "unfused");
  }

  if (sc.job.training && diags.empty()) {
    const workload::Training& t = *sc.job.training;
    if (t.offload_params != workload::Offload::kNone && sc.layout.zero < 3) {
      r.table("training", Need::kRequired)
          ->error("offload_params",
                  "parameter offload (ZeRO-Infinity) partitions the parameters: it needs "
                  "[parallelism] zero = 3, got " +
                      std::to_string(sc.layout.zero));
    }
    const std::int64_t per_step = sc.layout.micro_batch * sc.layout.data;
    if (per_step > 0 && t.global_batch % per_step != 0) {
      r.table("training", Need::kRequired)
          ->error("global_batch",
                  "global_batch (" + std::to_string(t.global_batch) +
                      ") must be a multiple of micro_batch x data = " + std::to_string(sc.layout.micro_batch) + " x " +
                      std::to_string(sc.layout.data) + " = " + std::to_string(per_step));
    } else {
      auto tr = r.table("training", Need::kRequired);
      check_training(*tr, sc, o.training);
    }
  }
}

}  // namespace detail

namespace {

using detail::read_cost;
using detail::read_input;
using detail::read_model;
using detail::read_parallel;
using detail::read_runtime;
using detail::read_system;
using detail::RuntimeOverrides;
using hardware::System;
using parse::Need;
using parse::Reader;

// What an override replaced, to put back: a table it created, or the node it replaced (moved,
// so its position survives), or nothing when the key was new.
struct Undo {
  toml::table* table = nullptr;
  std::string key;
  toml::table saved;  // holds the replaced node under "v"
  bool had_value = false;
  ParsedValue* from = nullptr;  // where the override's value goes back to, when it is kept
};

// Why a --set argument is not one line of UTF-8 text, or "": a value with a line break would
// become TOML of its own ("x=1\n[cost]..."), and bytes that are not UTF-8 would reach the reports.
std::string text_problem(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n' || c == '\r') {
      return "a --set argument is one line: it holds a line break";
    }
    // The bytes after a lead byte, and the smallest code point that needs that many.
    const int more = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    std::uint32_t cp = more == 0 ? c : more == 1 ? c & 0x1FU : more == 2 ? c & 0x0FU : c & 0x07U;
    bool ok = more >= 0 && i + static_cast<std::size_t>(more) < s.size();
    for (int k = 1; ok && k <= more; ++k) {
      const auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      ok = (b & 0xC0U) == 0x80U;
      cp = (cp << 6U) | (b & 0x3FU);
    }
    constexpr std::uint32_t kLeast[] = {0, 0x80, 0x800, 0x10000};
    if (!ok || cp < kLeast[more] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return "a --set argument is UTF-8 text: byte " + std::to_string(i + 1) + " is not";
    }
    i += static_cast<std::size_t>(more) + 1;
  }
  return {};
}

// An argument as a message shows it: line breaks and bytes that are not printable as \n, \xff.
std::string printable(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    out += c == '\n' ? std::string("\\n") : c < 0x20 || c >= 0x80 ? base::strfmt("\\x%02x", c) : std::string(1, ch);
  }
  return out;
}

// An override's value parsed from its text, in a table under "value"; `where` names the --set.
toml::table parse_value(const Override& o, const std::string& where) {
  toml::table parsed;
  Diagnostics not_toml;  // through parse_toml, so an override is bounded as a file is
  if (auto value = parse::parse_toml("value = " + o.value, where, not_toml)) {
    parsed = std::move(*value);
  } else {  // a bare word: take it as a string, parsed so that its messages name the --set
    std::string quoted = "value = \"";
    for (const char c : o.value) {
      if (c == '"' || c == '\\') {
        quoted += '\\';
      }
      quoted += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
    try {
      parsed = toml::parse(quoted + "\"", where);
    } catch (const toml::parse_error&) {  // a character TOML strings refuse (DEL): the string as it is
      parsed.insert_or_assign("value", o.value);
    }
  }
  return parsed;
}

void apply_override(ParsedScenario::Tree& tree, const Override& o, Diagnostics& diags, std::vector<Undo>& undo) {
  toml::table& root = tree.root;
  const std::string where = "--set " + o.key + "=" + o.value;
  if (const std::string problem = text_problem(o.key + "=" + o.value); !problem.empty()) {
    diags.add(SourcePos{printable(where)}, "", problem);
    return;
  }
  std::vector<std::string> parts;
  for (std::size_t at = 0; at < o.key.size();) {
    const std::size_t dot = std::min(o.key.find('.', at), o.key.size());
    parts.push_back(o.key.substr(at, dot - at));
    at = dot + 1;
  }
  const bool empty_part =
      o.key.empty() || o.key.front() == '.' || o.key.back() == '.' || o.key.find("..") != std::string::npos;
  if (parts.empty() || empty_part) {
    diags.add(SourcePos{where}, o.key, "expected KEY=VALUE with a dotted key such as training.micro_batch");
    return;
  }
  toml::table* t = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    toml::node* n = t->get(parts[i]);
    if (n == nullptr) {  // a table parsed from a one-line snippet, so that its source names the --set
      toml::table created = toml::parse("[t]", where);
      created.get("t")->visit([&](auto&& x) { t->insert(parts[i], std::move(x)); });
      undo.push_back(Undo{t, parts[i], {}, false});
      n = t->get(parts[i]);
    }
    if (!n->is_table()) {
      diags.add(SourcePos{where}, o.key, "\"" + parts[i] + "\" is not a table");
      return;
    }
    t = n->as_table();
  }
  // The value parsed before under the same text, unless this resolve holds it already (the same
  // --set twice).
  ParsedValue* from = nullptr;
  toml::table fresh;
  if (const auto it = tree.values.find(where); it != tree.values.end()) {
    from = it->second.in_use ? nullptr : &it->second;
  } else if (tree.values.size() < ParsedScenario::Tree::kMaxParsedValues) {
    from = &tree.values.emplace(where, ParsedValue{parse_value(o, where)}).first->second;
  }
  if (from == nullptr) {
    fresh = parse_value(o, where);
  }
  toml::table& parsed = from != nullptr ? from->table : fresh;
  // A whole table is never replaced: the undo list holds pointers to tables, which must outlive it.
  if (const toml::node* existing = t->get(parts.back()); existing != nullptr && existing->is_table()) {
    diags.add(SourcePos{where}, o.key, "\"" + o.key + "\" is a table: --set takes a key inside it");
    return;
  }
  Undo u{t, parts.back(), {}, false, from};
  if (toml::node* old = t->get(parts.back())) {
    old->visit([&u](auto&& x) { u.saved.insert_or_assign("v", std::move(x)); });
    u.had_value = true;
  }
  undo.push_back(std::move(u));
  if (from != nullptr) {
    from->in_use = true;
  }
  parsed.get("value")->visit([&](auto&& x) { t->insert_or_assign(parts.back(), std::move(x)); });
}

// --unset KEY: the key's node (a value or a whole table) moved out of the tree, to be put back.
void apply_removal(ParsedScenario::Tree& tree, const Override& o, Diagnostics& diags, std::vector<Undo>& undo) {
  const std::string where = "--unset " + o.key;
  toml::table* t = &tree.root;
  std::size_t at = 0;
  std::string part;
  while (true) {
    const std::size_t dot = std::min(o.key.find('.', at), o.key.size());
    part = o.key.substr(at, dot - at);
    if (dot == o.key.size()) {
      break;
    }
    toml::node* n = t->get(part);
    if (n == nullptr || !n->is_table()) {
      diags.add(SourcePos{where}, o.key,
                n == nullptr ? "the scenario has no [" + o.key.substr(0, dot) + "] table to remove it from"
                             : "\"" + o.key.substr(0, dot) + "\" is not a table");
      return;
    }
    t = n->as_table();
    at = dot + 1;
  }
  toml::node* old = t->get(part);
  if (old == nullptr) {
    diags.add(SourcePos{where}, o.key, "the scenario does not set " + o.key + ": there is nothing to remove");
    return;
  }
  Undo u{t, part, {}, true, nullptr};
  old->visit([&u](auto&& x) { u.saved.insert_or_assign("v", std::move(x)); });
  t->erase(part);
  undo.push_back(std::move(u));
}

// Puts the tree back as the file had it, last change first.
void revert(std::vector<Undo>& undo) {
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
    if (it->from != nullptr) {  // the kept value goes back, for the next resolve
      it->table->get(it->key)->visit([&](auto&& x) { it->from->table.insert_or_assign("value", std::move(x)); });
      it->from->in_use = false;
    }
    if (it->had_value) {
      it->saved.get("v")->visit([&](auto&& x) { it->table->insert_or_assign(it->key, std::move(x)); });
    } else {
      it->table->erase(it->key);
    }
  }
  undo.clear();
}

// The table an unknown key belongs to, when it is a key of another table of the schema.
std::string elsewhere(std::string_view table, std::string_view key) {
  for (const TableKeys& t : schema()) {
    if (t.table == table) {
      continue;
    }
    for (const auto k : t.keys) {
      if (k == key) {
        // not "[" + std::string(...): g++ 12 flags that with a false -Wrestrict
        return t.table.empty() ? std::string("the top level") : std::string("[").append(t.table).append("]");
      }
    }
  }
  return {};
}

// Reads the tree with the overrides applied; it is as it was when this returns or throws.
// Throws InputError with every problem found, or with `failed` moves them there and returns nullopt.
std::optional<Scenario> resolve_tree(const catalog::Catalog& catalog, const std::string& path,
                                     ParsedScenario::Tree& tree, const std::vector<Override>& overrides,
                                     const std::string& gpu_override, detail::Trace* trace = nullptr,
                                     Diagnostics* failed = nullptr) {
  toml::table& root = tree.root;
  std::vector<Undo> undo;
  struct Reverter {
    std::vector<Undo>& undo;
    ~Reverter() { revert(undo); }
  } reverter{undo};
  Diagnostics diags;
  const std::string file_gpu = root["system"]["gpu"].value_or(std::string());
  // The file's counts as written (integers only: value_or would convert a float such as 1e308 to an
  // integer, which is undefined; a count that is no integer is refused by the [system] reader).
  const auto count_at = [&root](const char* key) -> std::optional<std::int64_t> {
    if (const auto* v = root["system"][key].as_integer()) {
      return v->get();
    }
    return std::nullopt;
  };
  const std::optional<std::int64_t> file_gpus = count_at("gpus");
  const std::optional<std::int64_t> file_per_node = count_at("gpus_per_node");
  for (const auto& o : overrides) {  // removals first, so that a --set may write the key anew
    if (o.remove) {
      apply_removal(tree, o, diags, undo);
    }
  }
  for (const auto& o : overrides) {
    if (!o.remove) {
      apply_override(tree, o, diags, undo);
    }
  }
  if (!gpu_override.empty()) {
    apply_override(tree, Override{"system.gpu", "\"" + gpu_override + "\""}, diags, undo);
  }
  if (!diags.empty() && failed != nullptr) {
    *failed = std::move(diags);
    return std::nullopt;
  }
  diags.throw_if_any();

  Scenario sc;
  sc.origin = path;
  Reader r(root, "", diags);
  r.set_elsewhere(elsewhere);
  r.set_ranges(parse::key_ranges("scenario"));
  sc.name = r.string("name", Need::kRequired).value_or("");
  if (auto s = r.table("system", Need::kRequired)) {
    read_system(*s, catalog, sc.system);
  }
  if (auto m = r.table("model", Need::kRequired)) {
    read_model(*m, catalog, sc.job.model);
  }
  const bool has_training = r.has("training");
  const bool has_inference = r.has("inference");
  if (has_training == has_inference) {
    r.error(has_training ? "inference" : "training", "a scenario needs exactly one of [training] or [inference]");
  }
  RuntimeOverrides runtime_overrides;
  if (auto t = r.table("training", Need::kOptional)) {
    detail::read_training(*t, sc, runtime_overrides);
  }
  if (auto t = r.table("inference", Need::kOptional)) {
    read_inference(*t, sc, runtime_overrides);
  }
  {
    auto p = r.table("parallelism", Need::kOptional);
    read_parallel(p ? &*p : nullptr, sc);
    if (trace != nullptr) {
      trace->parallel_table = p.has_value();
      trace->data_given = p && p->has("data");
    }
  }
  if (has_training != has_inference) {
    auto rt = r.table("runtime", Need::kOptional);
    read_runtime(rt ? &*rt : nullptr, diags, catalog, sc, runtime_overrides);
    detail::apply_recipe(sc, runtime_overrides.training);
  } else {
    r.allow({"runtime"});
  }
  if (sc.job.inference && diags.empty()) {
    auto sv = r.table("serving", Need::kOptional);
    detail::read_serving(sv ? &*sv : nullptr, catalog, sc);
  } else if (has_training && r.has("serving")) {
    r.error("serving", "[serving] describes the load on an inference deployment; this scenario trains");
  } else {
    r.allow({"serving"});
  }
  if (sc.job.inference) {
    if (auto t = r.table("slo", Need::kOptional)) {
      detail::read_slo(*t, sc);
    }
  } else if (r.has("slo")) {
    r.error("slo", "[slo] sets latency limits on a serving scenario; this scenario trains");
    r.allow({"slo"});
  }
  detail::check_across(r, diags, sc, runtime_overrides);
  if (auto in = r.table("input", Need::kOptional)) {
    read_input(*in, sc);
  }
  {
    auto c = r.table("cost", Need::kOptional);
    const bool count_changed = count_at("gpus") != file_gpus || count_at("gpus_per_node") != file_per_node;
    const bool gpu_changed = !file_gpu.empty() && file_gpu != sc.system.gpu.id;
    sc.hardware_replaced = gpu_changed || count_changed;
    read_cost(c ? &*c : nullptr, catalog, sc, gpu_changed, count_changed);
  }
  r.finish();
  // The model's held-out error, which the band adds to the assumption ranges (a bad file is bad input).
  try {
    sc.model_error = catalog.model_error();
  } catch (const InputError& e) {
    diags.append(e.diagnostics());
  }
  if (!diags.empty() && failed != nullptr) {
    *failed = std::move(diags);
    return std::nullopt;
  }
  diags.throw_if_any();
  if (trace != nullptr) {
    trace->overrides = runtime_overrides;
  }
  return sc;
}

}  // namespace

std::optional<Scenario> detail::resolve_traced(const catalog::Catalog& catalog, const std::string& path,
                                               ParsedScenario::Tree& tree, const std::vector<Override>& overrides,
                                               Trace& trace, Diagnostics& failed) {
  const std::lock_guard lock(tree.mutex);
  return resolve_tree(catalog, path, tree, overrides, "", &trace, &failed);
}

ParsedScenario::ParsedScenario(std::string path, std::string text) : path_(std::move(path)) {
  Diagnostics diags;
  auto parsed = parse::parse_toml(text, path_, diags);
  diags.throw_if_any();
  auto tree = std::make_shared<Tree>();
  tree->root = std::move(*parsed);
  tree_ = std::move(tree);
}

Scenario resolve(const catalog::Catalog& catalog, const ParsedScenario& parsed, const std::vector<Override>& overrides,
                 const std::string& gpu_override) {
  ParsedScenario::Tree& tree = *parsed.tree_;
  const std::lock_guard lock(tree.mutex);
  return std::move(*resolve_tree(catalog, parsed.path(), tree, overrides, gpu_override));
}

Scenario load_scenario(const catalog::Catalog& catalog, const std::string& path, const std::string& text,
                       const std::vector<Override>& overrides, const std::string& gpu_override) {
  return resolve(catalog, ParsedScenario(path, text), overrides, gpu_override);
}

ParsedScenario parse_scenario_file(const std::string& path) {
  return ParsedScenario(path, parse::read_file(path, "scenario file"));
}

Scenario load_scenario_file(const catalog::Catalog& catalog, const std::string& path,
                            const std::vector<Override>& overrides, const std::string& gpu_override) {
  return resolve(catalog, parse_scenario_file(path), overrides, gpu_override);
}

ImportedModel import_hf_config(const std::string& path) {
  std::error_code ec;
  std::string file = path;
  if (!std::filesystem::exists(file, ec) && parse::looks_like_hub_id(path)) {
    // Not a file: a Hugging Face hub id, read from the local hub cache when it holds it.
    const std::optional<std::string> cached = parse::find_hub_config(path);
    if (!cached) {
      throw InputError({Diagnostic{SourcePos{path}, "",
                                   "no such file, and as a Hugging Face hub id no snapshot of it with a config.json "
                                   "in " +
                                       parse::hub_cache() + ": download it (huggingface-cli download " + path +
                                       " config.json) or give the path of a local config.json"}});
    }
    file = *cached;
  }
  parse::HfConfig c = parse::read_hf_config(parse::read_file(file, "Hugging Face config.json"), file);
  return ImportedModel{std::move(c.shape), std::move(c.model_type), std::move(c.fields), std::move(c.notes)};
}

std::vector<Override> parse_overrides(const std::vector<std::string>& sets, const std::vector<std::string>& unsets) {
  std::vector<Override> out;
  for (const auto& s : sets) {
    const auto eq = s.find('=');
    if (const std::string problem = text_problem(s); !problem.empty()) {
      throw InputError({Diagnostic{SourcePos{"--set " + printable(s)}, "", problem}});
    }
    if (eq == std::string::npos || eq == 0) {
      throw InputError({Diagnostic{SourcePos{"--set " + s}, "",
                                   "expected KEY=VALUE (e.g. training.micro_batch=4), got \"" + s + "\""}});
    }
    out.push_back(Override{s.substr(0, eq), s.substr(eq + 1)});
  }
  for (const auto& key : unsets) {
    if (const std::string problem = text_problem(key); !problem.empty()) {
      throw InputError({Diagnostic{SourcePos{"--unset " + printable(key)}, "", problem}});
    }
    const bool empty_part =
        key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos;
    if (empty_part || key.find('=') != std::string::npos) {
      throw InputError(
          {Diagnostic{SourcePos{"--unset " + key}, "",
                      "expected a dotted KEY (e.g. training.lora_rank) or a table (e.g. slo), got \"" + key + "\""}});
    }
    for (const Override& o : out) {
      const auto inside = [](const std::string& a, const std::string& b) {
        return a.size() > b.size() && a.compare(0, b.size(), b) == 0 && a[b.size()] == '.';
      };
      if (o.remove && (o.key == key || inside(key, o.key) || inside(o.key, key))) {
        throw InputError({Diagnostic{
            SourcePos{"--unset " + key}, "",
            o.key == key ? "is given twice" : "overlaps --unset " + o.key + ": one lies inside the other"}});
      }
    }
    out.push_back(Override{key, "", true});
  }
  return out;
}

System make_system(const catalog::Catalog& catalog, const std::string& gpu, int gpus, int gpus_per_node) {
  // The same defaults as a scenario's [system] table with only these keys given.
  toml::table t;
  t.insert("gpu", gpu);
  t.insert("gpus", gpus);
  if (gpus_per_node > 0) {
    t.insert("gpus_per_node", gpus_per_node);
  }
  Diagnostics diags;
  Reader r(t, "system", diags);
  System s;
  read_system(r, catalog, s);
  diags.throw_if_any();
  return s;
}

Scenario with_layout(const Scenario& sc, const workload::Layout& layout, int gpus) {
  Scenario s = sc;
  s.system = hardware::with_gpus(sc.system, gpus);
  if (s.cloud_system) {
    s.cloud_system = hardware::with_gpus(*sc.cloud_system, gpus);
  }
  s.layout = layout;
  s.unset.micro_batch = false;  // the layout names it
  return s;
}

}  // namespace gpusim::scenario
