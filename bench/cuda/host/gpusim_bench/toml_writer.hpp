// Writer of the measurement TOML (docs/measurements.md, the contract that `gpusim validate` and
// `gpusim calibrate` read): a [meta] table describing the machine, then one [[measurement]] table
// per measured figure. Quantities are strings with their units ("2.9 TB/s"); shapes, counts and
// flags are TOML integers and booleans.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace gpusim::bench {

// The [meta] table. An empty field is left out (power_limit without NVML, for example).
struct Meta {
  std::string source;  // "gpusim-bench on NVIDIA H100 80GB HBM3"
  // Every row's role: "fit" (a user's own measurements are what `gpusim calibrate` fits) or
  // "check" (held out, to judge the model by).
  std::string role = "fit";
  std::string date;  // "2026-11"
  std::string gpu_name;
  std::string driver;
  std::string cuda_runtime;
  std::string sm_clock;      // "1980 MHz"
  std::string memory_clock;  // "2619 MHz"
  std::string power_limit;   // "700 W"
};

using TomlScalar = std::variant<bool, std::int64_t, double, std::string>;

// One [[measurement]] table. Keys are written in the order id, gpu, gpus, benchmark, value,
// bytes, the benchmark-specific keys in insertion order, conditions.
struct Measurement {
  std::string id;   // unique within the file
  std::string gpu;  // catalog id
  int gpus = 1;
  std::string benchmark;  // one of benchmark_names()
  std::string value;      // "2.9 TB/s"
  std::string bytes;      // "1 GiB"; empty when it does not apply
  std::vector<std::pair<std::string, TomlScalar>> extra;
  std::string conditions;

  // Benchmark-specific keys (dtype, m, n, k, graph, pinned, ns, ...). Typed overloads so that a
  // string literal never turns into a bool.
  Measurement& set(std::string key, std::string value);
  Measurement& set(std::string key, const char* value);
  Measurement& set(std::string key, bool value);
  Measurement& set(std::string key, std::int64_t value);
  Measurement& set(std::string key, int value);
  Measurement& set(std::string key, double value);
};

// The benchmark names of the contract: stream_copy ... power.
const std::vector<std::string>& benchmark_names();

// A TOML basic string literal with its quotes: `"`, `\` and control characters escaped
// (\b \t \n \f \r, \uXXXX for the others and DEL), bytes that are not valid UTF-8 replaced by
// \uFFFD so the file is always valid UTF-8.
std::string toml_string(std::string_view text);

// A key as TOML wants it: bare when it is [A-Za-z0-9_-]+, otherwise a quoted string.
std::string toml_key(std::string_view key);

// Writes the file. Throws std::invalid_argument when a measurement has an empty or duplicate id,
// no gpu, an unknown benchmark, no value, gpus < 1, or an extra key that repeats a standard key
// or another extra key.
void write_measurements(std::ostream& out, const Meta& meta, const std::vector<Measurement>& rows);
std::string measurements_to_string(const Meta& meta, const std::vector<Measurement>& rows);

}  // namespace gpusim::bench
