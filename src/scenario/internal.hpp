// Private to src/scenario/: what the loader's table readers share.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

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
void read_serving(parse::Reader* r, Scenario& sc);
// [slo]: latency limits on a serving scenario (serving.cpp).
void read_slo(parse::Reader& r, Scenario& sc);

}  // namespace gpusim::scenario::detail
