// Validated reading of TOML tables: the one place toml++ types are used (library-internal; they
// never leave the loaders). Contract: every accessor records its key as known; a missing
// required key, a value of the wrong type, a quantity with a wrong or missing unit, or a value out
// of range (a quantity also past its dimension's accepted magnitudes, units::accepted_magnitudes)
// adds a Diagnostic with file:line:col, the full key path and the bad value, and returns
// nullopt. finish() reports every key that no accessor asked for, so typos never become silent
// defaults; it suggests a close spelling, or the table where the key belongs.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusim/base.hpp"
#include "gpusim/hardware.hpp"
#include "gpusim/units.hpp"
#include "gpusim/workload.hpp"

namespace gpusim::parse {

SourcePos pos_of(const toml::source_region& r);
SourcePos pos_of(const toml::node& n);

// Parses TOML text; a syntax error becomes one Diagnostic (toml++ stops at the first).
std::optional<toml::table> parse_toml(std::string_view text, const std::string& path, Diagnostics& diags);
// Reads a whole file; throws InputError naming the file when it cannot be read.
std::string read_file(const std::string& path, const char* what);
// Deep merge: keys of `under` fill in what `over` lacks (`over`'s own values win); nested tables
// merge recursively. Nodes are moved, never copied, so source positions survive, and `over` keeps
// its own source: a key missing from both is reported at `over`'s file.
void merge_under(toml::table& over, toml::table&& under);

// The count a float stands for when it is a whole number within int64 (2e12 for 2000000000000).
std::optional<std::int64_t> whole_number(double d);
// Why `v` is not a count in [min, max] ("expected a whole number" when it is none), or "".
std::string count_problem(std::optional<std::int64_t> v, std::int64_t min, std::int64_t max);

enum class Need { kRequired, kOptional };
enum class Range { kAny, kPositive, kNonNegative, kFraction };  // kFraction: 0 < x <= 1

// The physically sensible range of one spec or scenario key, declared once beside its unit
// (declared_ranges.cpp): the readers check every value against it, and specs/README.md and
// docs/scenarios.md list the same rows. `lo` and `hi` are written as a file writes them
// ("100 MHz"); a key ending in ".*" covers every key of that table. A zero that the key's own rule
// allows (a peer link of "none") is not checked.
struct KeyRange {
  std::string_view folder;        // the files it applies to: "gpus" (with arch/), "hosts", "links", "scenario"
  std::string_view key;           // the full dotted key
  std::optional<units::Dim> dim;  // nullopt: a count
  std::string_view lo;
  std::string_view hi;
  std::string_view why;  // the reason for the bounds, one short clause
};
// Every row, in the order specs/README.md lists them.
const std::vector<KeyRange>& key_ranges();
// The rows of one folder's files (a table that lives as long as the program).
const std::vector<KeyRange>& key_ranges(std::string_view folder);

// For an unknown key: the table (e.g. "parallelism") where a key of that name belongs, or "".
using Elsewhere = std::function<std::string(std::string_view table_path, std::string_view key)>;

class Reader {
 public:
  Reader(const toml::table& table, std::string prefix, Diagnostics& diags);

  std::optional<double> quantity(std::string_view key, units::Dim dim, Need need, Range range = Range::kPositive);
  // A plain number; past `max` in magnitude (limits::kRatio unless the key has its own bound) it
  // is out of range.
  std::optional<double> number(std::string_view key, Need need, Range range = Range::kPositive,
                               double max = limits::kRatio);
  // A whole number in [min, max]; every count states its range (limits in gpusim/base.hpp).
  std::optional<std::int64_t> integer(std::string_view key, Need need, std::int64_t min, std::int64_t max);
  std::optional<bool> boolean(std::string_view key, Need need);
  std::optional<std::string> string(std::string_view key, Need need);
  // A string naming one of `allowed` (every value of the enum's table when empty); the message
  // lists the choices.
  template <class E, std::size_t N>
  std::optional<E> choice(std::string_view key, const base::Named<E> (&table)[N], Need need,
                          const std::vector<E>& allowed = {}) {
    const auto s = string(key, need);
    if (!s) {
      return std::nullopt;
    }
    if (const auto v = base::value_in(table, *s)) {
      for (const E a : allowed) {
        if (a == *v) {
          return v;
        }
      }
      if (allowed.empty()) {
        return v;
      }
    }
    error(key, "expected one of " + base::quoted_names(table, allowed) + ", got \"" + *s + "\"");
    return std::nullopt;
  }
  std::vector<std::string> string_list(std::string_view key);
  // An array of whole numbers, each within [min, max]; empty (with a diagnostic if required) when absent.
  std::vector<std::int64_t> integer_list(std::string_view key, Need need, std::int64_t min, std::int64_t max);
  // A latency given either in time units or in cycles; cycles are converted with `clock_hz` (none
  // when it is 0: a clock that was missing or bad has its own diagnostic).
  std::optional<double> latency_seconds(std::string_view key, double clock_hz, Need need);
  // A nested table; nullopt (with a diagnostic if required) when absent.
  std::optional<Reader> table(std::string_view key, Need need);
  // Mark keys as known without reading them (e.g. "base", "meta").
  void allow(std::initializer_list<std::string_view> keys);
  void finish();
  // Used by finish() for unknown keys; inherited by nested tables.
  void set_elsewhere(Elsewhere f) { elsewhere_ = std::move(f); }
  // The declared ranges of this file's keys (key_ranges(folder), which outlives every reader);
  // inherited by nested tables.
  void set_ranges(const std::vector<KeyRange>& ranges) { ranges_ = &ranges; }

  [[nodiscard]] bool has(std::string_view key) const { return table_->contains(key); }
  // Whether `key` holds exactly this string (for keys that take a number or a keyword).
  [[nodiscard]] bool string_value_is(std::string_view key, std::string_view word) const {
    const auto* v = table_->get_as<std::string>(key);
    return v != nullptr && v->get() == word;
  }
  [[nodiscard]] std::string path(std::string_view key) const;
  [[nodiscard]] SourcePos where(std::string_view key) const;
  void error(std::string_view key, const std::string& message);
  [[nodiscard]] Diagnostics& diagnostics() const { return *diags_; }

 private:
  const toml::node* get(std::string_view key, Need need);
  static std::string show(const toml::node& n);
  // Why `v` (SI units) lies outside the declared range of `key`, or "".
  [[nodiscard]] std::string declared_range_problem(std::string_view key, double v) const;

  const toml::table* table_;
  std::string prefix_;
  Diagnostics* diags_;
  // Keys read or allowed, in the order asked, repeats included, each followed by a '\0', in one
  // buffer (a string or set node per key would allocate for every key read); finish() splits them
  // once.
  void know(std::string_view key) {
    known_.append(key);
    known_.push_back('\0');
  }
  [[nodiscard]] std::vector<std::string_view> known_keys() const;  // known_ split, in order
  std::string known_;
  Elsewhere elsewhere_;
  const std::vector<KeyRange>* ranges_ = nullptr;
};

// --- Spec tables (formats in specs/README.md) ---
// Each reader reports every problem through the Reader's diagnostics and leaves defaults where a
// value was bad; the caller throws. GPU, host, link and collective library in hardware_specs.cpp,
// runtimes in runtime_specs.cpp, model shapes in model_specs.cpp.

// GPU spec from a fully merged table (base resolved, architecture defaults merged).
void read_gpu(Reader& r, hardware::GpuSpec& out);
void read_link(Reader& r, hardware::LinkSpec& out);
// The [uncertainty] tables (ranges.cpp): an architecture's or GPU's, and a runtime's.
void read_efficiency_ranges(Reader& r, hardware::EfficiencyRanges& out);
void read_runtime_ranges(Reader& r, workload::RuntimeRanges& out, workload::RuntimeKind kind);
void read_host(Reader& r, hardware::HostSpec& out);
// specs/uncertainty/model-error.toml (model_error.cpp): the model's held-out error quantiles;
// `runtimes` are the runtime ids a group may name.
void read_model_error(const toml::table& table, Diagnostics& diags, const std::vector<std::string>& runtimes,
                      workload::ModelError& out);
// Model-shape keys. With Need::kRequired every key must be present (spec files); with kOptional
// only present keys overwrite `out` (a scenario's [model] over a preset).
void read_model_keys(Reader& r, workload::ModelShape& out, Need need);
// Runtime spec (specs/runtimes/<id>.toml).
void read_runtime(Reader& r, workload::Runtime& out);
// The settings of a runtime (everything but its name, kind and sources): all required in a spec
// file; optional in a scenario's [runtime] table, where each one given overrides the named runtime.
void read_runtime_settings(Reader& r, workload::Runtime& out, Need need);
// recipe.cpp: `loss_chunks` (optional in spec files and scenarios), and a training runtime's
// [recipe] table of [training] defaults.
void read_loss_settings(Reader& r, workload::Runtime& out);
void read_recipe(Reader& r, workload::Runtime& out);
// The engine keys of a serving runtime's [serving] table (required in spec files, overrides in a
// scenario's [serving]).
void read_serving_engine(Reader& r, workload::ServingEngine& out, Need need);
void read_comm(Reader& r, hardware::CommLibrary& out);
// Cross-field checks (heads divide hidden, kv_heads divide heads).
void check_model(Reader& r, const workload::ModelShape& m);
// The keys of a ResNet model spec (family = "resnet"; specs/README.md), all required.
void read_resnet_keys(Reader& r, workload::ModelShape& out);
// A ViT model spec (family = "vit"): `image` and `patch` (required) next to the transformer keys,
// and the rules that tie them: max_seq = (image / patch)² + 1, non-causal, learned positions.
void read_vit_keys(Reader& r, workload::ModelShape& out);
void check_vit(Reader& r, const workload::ModelShape& m);

// --- Hugging Face config.json (hf_config.cpp; nlohmann/json stays inside it) ---
// A decoder's transformers config.json (model types in kHfModelTypes) as model-shape keys.
// Throws InputError naming `path`, line:col, the JSON key and its value; unknown model types,
// mixtures of experts of other types and shapes gpusim cannot express are refused, never approximated.
inline constexpr const char* kHfModelTypes[] = {"llama", "mistral", "qwen2",     "gemma",       "phi3",
                                                "gpt2",  "mixtral", "qwen2_moe", "deepseek_v2", "deepseek_v3"};
// The mixtures of experts among them (hf_moe.cpp reads their expert and MLA fields).
inline constexpr const char* kHfMoeTypes[] = {"mixtral", "qwen2_moe", "deepseek_v2", "deepseek_v3"};
struct HfConfig {
  workload::ModelShape shape;  // every key set, name from _name_or_path (else model_type)
  std::string model_type;
  std::vector<std::pair<std::string, std::string>> fields;  // gpusim key -> the JSON field or rule it came from
  std::vector<std::string> notes;                           // choices the mapping made, one sentence each
};
HfConfig read_hf_config(std::string_view text, const std::string& path);
// What hf_moe.cpp needs of the JSON reader: a whole number in [min, max] (nullopt when absent,
// null or bad, with a diagnostic when required or bad), whether a list field is a non-empty
// list, and an error on a key.
struct HfFields {
  std::function<std::optional<std::int64_t>(std::string_view key, bool required, std::int64_t min, std::int64_t max)>
      count;
  std::function<bool(std::string_view key)> nonempty_list;
  std::function<void(std::string_view key, const std::string& message)> error;
};
// The [moe] (and for DeepSeek the [mla]) table of a mixture-of-experts config of `type`.
void read_hf_moe(const HfFields& in, const std::string& type, HfConfig& out);

// --- Hugging Face hub ids (hf_hub.cpp) ---
// "org/name" with the hub's characters, and not a path ("./x", "dir/config.json").
bool looks_like_hub_id(std::string_view s);
// The hub cache folder this environment names ($HF_HUB_CACHE, $HF_HOME/hub, ...).
std::string hub_cache();
// The config.json of hub id `id` in the local cache (its main revision's snapshot, else the first
// snapshot holding one), or nullopt.
std::optional<std::string> find_hub_config(std::string_view id);

}  // namespace gpusim::parse
