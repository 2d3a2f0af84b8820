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
};

// A count that must fit the `int` the model holds it in.
std::optional<int> count(parse::Reader& r, std::string_view key, parse::Need need, std::int64_t min, std::int64_t max);

// [training] (training.cpp).
void read_training(parse::Reader& r, Scenario& sc, RuntimeOverrides& overrides);
// [inference] (serving.cpp).
void read_inference(parse::Reader& r, Scenario& sc, RuntimeOverrides& overrides);
// [serving]: the load and the engine settings that override the runtime's (serving.cpp). Runs
// after the runtime is resolved; `r` is null when the table is absent.
void read_serving(parse::Reader* r, Scenario& sc);
// [slo]: latency limits on a serving scenario (serving.cpp).
void read_slo(parse::Reader& r, Scenario& sc);

}  // namespace gpusim::scenario::detail
