// Private to src/scenario/: what the loader's table readers share. loader.cpp resolves a scenario
// table by table through these readers, each in the file named beside it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusim/scenario.hpp"
#include "parse/parse.hpp"

namespace gpusim::scenario::detail {

// Switches of [training] and [inference] that override the runtime's defaults.
struct RuntimeOverrides {
  std::optional<bool> flash_attention;
  SourcePos where_flash;
  std::optional<bool> cuda_graphs;
  // The [training] keys a runtime's recipe has defaults for, as far as the scenario gave them.
  workload::RecipeDefaults training;
};

// A count that must fit the `int` the model holds it in.
std::optional<int> count(parse::Reader& r, std::string_view key, parse::Need need, std::int64_t min, std::int64_t max);

// [system] (system.cpp); make_system reads a lone [system] table through it too.
void read_system(parse::Reader& r, const catalog::Catalog& cat, hardware::System& s);
// [model] (model.cpp).
void read_model(parse::Reader& r, const catalog::Catalog& cat, workload::ModelShape& m);
// [parallelism] (layout.cpp); `r` is null when the table is absent (all GPUs data-parallel).
void read_parallel(parse::Reader* r, Scenario& sc);
// Once [parallelism]'s keys are read (`data_given`: it names data): data-parallel ranks by
// default, and the rules that tie the layout to the model, the job and the GPU count (layout.cpp).
void check_parallel(parse::Reader& r, Scenario& sc, bool data_given);
// The runtime a scenario without [runtime] name runs on, for its job and layout (runtime.cpp).
std::string default_runtime(const Scenario& sc);
// [runtime] (runtime.cpp): the named or default runtime, with the scenario's overrides applied.
// `r` is null when the table is absent.
void read_runtime(parse::Reader* r, Diagnostics& diags, const catalog::Catalog& cat, Scenario& sc,
                  const RuntimeOverrides& o);
// [input] (runtime.cpp): the host input pipeline.
void read_input(parse::Reader& r, Scenario& sc);
// [cost] (system.cpp); `r` is null when the table is absent.
void read_cost(parse::Reader* r, const catalog::Catalog& cat, Scenario& sc, bool gpu_changed, bool count_changed);
// [training] (training.cpp).
void read_training(parse::Reader& r, Scenario& sc, RuntimeOverrides& overrides);
// Once the runtime is known: the keys the scenario left out take the runtime's recipe defaults
// (training.cpp).
void apply_recipe(Scenario& sc, const workload::RecipeDefaults& given);
// Once layout and runtime are known: the checks across [training], [parallelism] and the recipe
// defaults (training.cpp). `r` reads [training].
void check_training(parse::Reader& r, const Scenario& sc, const workload::RecipeDefaults& given);
// [inference] (serving.cpp).
void read_inference(parse::Reader& r, Scenario& sc, RuntimeOverrides& overrides);
// [serving]: the load and the engine settings that override the runtime's (serving.cpp). Runs
// after the runtime is resolved; `r` is null when the table is absent.
void read_serving(parse::Reader* r, const catalog::Catalog& cat, Scenario& sc);
// [serving.speculative]: the speculative-decoding method and its proposer (speculative.cpp).
void read_speculative(parse::Reader& r, const catalog::Catalog& cat, Scenario& sc);
// [serving.disaggregated]: prefill and decode pools (disaggregated.cpp).
void read_disaggregated(parse::Reader& r, Scenario& sc);
// [slo]: latency limits on a serving scenario (serving.cpp).
void read_slo(parse::Reader& r, Scenario& sc);

// Once every table is read: the rules across the runtime, the layout and [training] (loader.cpp).
// `r` reads the top level; it must hold [training] and [parallelism] tables wherever a rule of
// theirs can fail. Runs the training rules only while `diags` is empty.
void check_across(parse::Reader& r, Diagnostics& diags, const Scenario& sc, const RuntimeOverrides& o);

// What a resolve read beside the scenario itself, for re-resolving it with other values of the
// keys Variants sets (variants.cpp).
struct Trace {
  RuntimeOverrides overrides;
  bool parallel_table = false;  // [parallelism] is there (in the file or from an override)
  bool data_given = false;      // and it names data
};
// resolve(catalog, parsed, overrides) of the file `path` parsed as `tree`, that also fills `trace`;
// nullopt, with the problems in `failed`, where resolve would throw them (loader.cpp).
std::optional<Scenario> resolve_traced(const catalog::Catalog& catalog, const std::string& path,
                                       ParsedScenario::Tree& tree, const std::vector<Override>& overrides, Trace& trace,
                                       Diagnostics& failed);

}  // namespace gpusim::scenario::detail
