// The user's question: a scenario file (format in docs/scenarios.md) parsed, overridden by
// `--set KEY=VALUE` and `--gpu`, validated, and with every default resolved — the hardware, the
// job, its layout, the runtime and the cost assumptions, plus the cloud GPU's system when the cost
// compares against another GPU. Nothing downstream sees TOML, and nothing downstream reads the
// catalog: a Scenario is complete.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusim/catalog.hpp"
#include "gpusim/cost.hpp"
#include "gpusim/hardware.hpp"
#include "gpusim/step.hpp"
#include "gpusim/workload.hpp"

namespace gpusim::scenario {

// A service-level objective on a serving scenario ([slo]): limits on a percentile of the
// per-request latencies. `plan` searches for the layouts that meet it; `estimate` and `compare`
// say whether the scenario does. MLPerf Inference's LLM server scenarios constrain the 99th
// percentile of TTFT and TPOT [mlperf-inference-rules], hence the default.
enum class Percentile { kMean, kP50, kP90, kP99 };
inline constexpr base::Named<Percentile> kPercentileNames[] = {
    {Percentile::kMean, "mean"}, {Percentile::kP50, "p50"}, {Percentile::kP90, "p90"}, {Percentile::kP99, "p99"}};
struct Slo {
  std::optional<Seconds> ttft;  // arrival to the first output token
  std::optional<Seconds> tpot;  // per output token after the first
  std::optional<Seconds> e2e;   // arrival to the last token
  Percentile percentile = Percentile::kP99;
};

// The stored weight formats a serving scenario may name ([inference] weight_precision): bits per
// weight with their block scales, and the datatype the GEMMs compute in.
struct WeightFormat {
  std::string_view name;
  double bits = 16;
  DType compute = DType::kFp16;
  bool ggml_block = false;  // a ggml block format, which llama.cpp and its kin serve and others do not
};
const std::vector<WeightFormat>& weight_formats();
// The scenario with its weights stored in `format` (a name from weight_formats(); InputError when
// unknown, or when the GPU cannot compute in it).
struct Scenario;
Scenario with_weight_format(const Scenario& sc, std::string_view format);

// Scenario keys a real job settles that this scenario leaves to their defaults: the band of an
// estimate varies them over what they could be (answer/uncertainty.cpp).
struct Unset {
  bool micro_batch = false;  // [training] micro_batch absent: 1
  bool runtime = false;      // [runtime] name absent: the default for the job and layout
};

struct Scenario {
  std::string name;
  std::string origin;  // file path
  // --gpu or --set replaced the file's GPU or changed its GPU or node count: the name, which
  // often names the file's hardware, no longer describes what runs (the reports title such an
  // answer by its job and the hardware that ran).
  bool hardware_replaced = false;
  hardware::System system;
  workload::Job job;
  workload::Layout layout;
  workload::Runtime runtime;
  cost::CostConfig cost;
  // The system the cloud price is for when [cost] cloud_gpu names another GPU: the same GPU count
  // and node shape on that GPU, at its TDP.
  std::optional<hardware::System> cloud_system;
  std::optional<Slo> slo;  // serving scenarios only
  Unset unset;
  // The model's error on publications it was not fitted to (the catalog's
  // uncertainty/model-error.toml): part of the band (answer/uncertainty.cpp); none when null.
  std::shared_ptr<const workload::ModelError> model_error;
};

// One `--set KEY=VALUE` override; VALUE is TOML (a bare word is taken as a string). With `remove`,
// `--unset KEY`: the key (or a whole table) is taken out of the file as if it had never been
// written, so its default applies; removals are applied before every --set.
struct Override {
  std::string key;
  std::string value;
  bool remove = false;
};

// A scenario file parsed once (TOML syntax checked), to be resolved many times with different
// overrides (`gpusim sweep`). Cheap to copy.
class ParsedScenario {
 public:
  ParsedScenario(std::string path, std::string text);  // throws InputError on a TOML syntax error
  [[nodiscard]] const std::string& path() const { return path_; }
  struct Tree;  // the parsed TOML, private to the loader

 private:
  friend Scenario resolve(const catalog::Catalog&, const ParsedScenario&, const std::vector<Override>&,
                          const std::string&);
  friend class Variants;
  std::string path_;
  std::shared_ptr<Tree> tree_;
};

// One scenario resolved for every combination of values of a few keys (a sweep's grid). at(choice)
// gives what resolve(catalog, parsed, fixed + {keys[i] = values[i][choice[i]]}) gives: the same
// Scenario, or the same InputError. A training scenario whose keys all set its size, layout or
// batch (system.gpus, parallelism tensor, pipeline, data and zero, training micro_batch and
// global_batch) is resolved from the file only until each value has been read once; the other
// combinations are rebuilt from the parts those resolves read, through the loader's own rules
// (variants.cpp). Not for concurrent use; `catalog` must outlive it.
class Variants {
 public:
  Variants(const catalog::Catalog& catalog, ParsedScenario parsed, std::vector<Override> fixed,
           std::vector<std::string> keys, std::vector<std::vector<std::string>> values);
  ~Variants();
  Variants(Variants&&) noexcept;
  Variants& operator=(Variants&&) noexcept;
  Variants(const Variants&) = delete;
  Variants& operator=(const Variants&) = delete;
  // The scenario for values[i][choice[i]] of each key i, valid until the next call. Throws
  // InputError as resolve does.
  const Scenario& at(const std::vector<std::size_t>& choice);
  // As at(), without an exception: null when the combination does not resolve, with `problem` set
  // to its first problem as InputError::first_message() gives it (a sweep's status column; many
  // combinations of a grid may fail, and a rebuilt one gives its problem without reading the file).
  const Scenario* find(const std::vector<std::size_t>& choice, std::string& problem);
  // How many combinations so far were resolved from the file (the rest were rebuilt).
  [[nodiscard]] std::size_t resolved() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads and parses a scenario file (InputError when it cannot be read or is not TOML).
ParsedScenario parse_scenario_file(const std::string& path);
// Applies overrides (and `gpu_override`), resolves defaults and validates. Throws InputError with
// every problem found (file:line:col, key, value).
Scenario resolve(const catalog::Catalog& catalog, const ParsedScenario& parsed,
                 const std::vector<Override>& overrides = {}, const std::string& gpu_override = "");
Scenario load_scenario(const catalog::Catalog& catalog, const std::string& path, const std::string& text,
                       const std::vector<Override>& overrides = {}, const std::string& gpu_override = "");
Scenario load_scenario_file(const catalog::Catalog& catalog, const std::string& path,
                            const std::vector<Override>& overrides = {}, const std::string& gpu_override = "");
// `--set KEY=VALUE` texts, then `--unset KEY` texts (InputError naming the flag and the text when
// one is not of its form, or one removal lies inside another's table).
std::vector<Override> parse_overrides(const std::vector<std::string>& sets,
                                      const std::vector<std::string>& unsets = {});

// A model read from a Hugging Face transformers config.json, as [model] hf_config reads it (dense
// decoders: llama, mistral, qwen2, gemma, phi3, gpt2; the mapping in docs/scenarios.md). Throws
// InputError naming the file, line:col, the JSON key and value; refuses mixture-of-experts configs,
// unknown model types and shapes gpusim cannot express (a head_dim other than hidden / heads).
struct ImportedModel {
  workload::ModelShape shape;
  std::string model_type;
  std::vector<std::pair<std::string, std::string>> fields;  // gpusim key -> the JSON field it came from
  std::vector<std::string> notes;                           // choices the mapping made
};
ImportedModel import_hf_config(const std::string& path);

// A system of `gpus` GPUs with every [system] default resolved; gpus_per_node 0 = the default.
hardware::System make_system(const catalog::Catalog& catalog, const std::string& gpu, int gpus, int gpus_per_node = 0);

// The scenario with another layout and GPU count: what `plan` ranks and `estimate` re-checks.
Scenario with_layout(const Scenario& sc, const workload::Layout& layout, int gpus);

// Every table of the scenario format and its keys, as the loader accepts them: docs/scenarios.md
// documents each, and an unknown key that belongs to another table is reported as such.
struct TableKeys {
  std::string_view table;  // "" for the top level
  std::vector<std::string_view> keys;
};
const std::vector<TableKeys>& schema();

}  // namespace gpusim::scenario

namespace gpusim::step {

// One step of a scenario (the evaluator sits below the inputs: it takes the system, job, layout
// and runtime a scenario resolves to).
inline Evaluation evaluate(const scenario::Scenario& sc, const Options& options = {}) {
  return evaluate(sc.system, sc.job, sc.layout, sc.runtime, options);
}

}  // namespace gpusim::step
