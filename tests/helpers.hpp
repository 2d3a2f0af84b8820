// Shared test helpers: the built-in catalog, scenarios from inline TOML, and error capture.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "gpusim/gpusim.hpp"

namespace gpusim::test {

inline const Catalog& catalog() {
  static const Catalog c = Catalog::builtin();
  return c;
}

// The shipped scenarios (scenarios/*.toml) whose job trains: their paths, in order.
inline std::vector<std::string> shipped_training_scenarios() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(GPUSIM_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() == ".toml" &&
        scenario::load_scenario_file(catalog(), entry.path().string()).job.training) {
      out.push_back(entry.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A power limit halfway between the scenario's GPU's idle power and its TDP, as a scenario value.
inline std::string halfway_power_limit(const Scenario& sc) {
  const hardware::GpuSpec& g = sc.system.gpu;
  return base::strfmt("\"%.0f W\"", 0.5 * (g.tdp + g.idle_power).value());
}

// A directory of this test process's own under the system's temporary directory, removed when the
// process exits (parallel test processes never share files, and none are left behind).
inline std::filesystem::path process_scratch(const std::string& prefix) {
  struct Owned {
    std::filesystem::path dir;
    Owned(const Owned&) = delete;
    Owned& operator=(const Owned&) = delete;
    explicit Owned(std::filesystem::path d) : dir(std::move(d)) {}
    ~Owned() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  };
  // One directory per prefix, each removed at exit.
  static std::mutex guard;
  static std::map<std::string, std::unique_ptr<Owned>> owned;
  const std::lock_guard lock(guard);
  std::unique_ptr<Owned>& dir = owned[prefix];
  if (dir == nullptr) {
    dir = std::make_unique<Owned>(std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid())));
  }
  std::filesystem::create_directories(dir->dir);
  return dir->dir;
}

inline Scenario scenario(const std::string& toml, const std::vector<Override>& overrides = {}) {
  return scenario::load_scenario(catalog(), "test.toml", toml, overrides);
}

// A Llama-3-8B serving scenario on one H100 under `runtime`, Poisson arrivals.
inline std::string serving_scenario(const std::string& runtime) {
  return R"(name = "v"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
preset = "llama3-8b"
[inference]
prompt_tokens = 256
output_tokens = 32
weight_precision = "bf16"
[runtime]
name = ")" +
         runtime + R"("
[serving]
arrival = "poisson"
rate = "1 req/s"
requests = 20
)";
}

// The estimate of `sc` with its band (answer::Options::uncertainty).
inline answer::Estimate banded(const Scenario& sc) {
  answer::Options o;
  o.uncertainty = true;
  return answer::estimate(sc, o);
}

// The band of report key `key`, which the estimate must have.
inline answer::Band band(const answer::Estimate& e, std::string_view key) {
  const auto b = answer::band_of(e, key);
  REQUIRE(b.has_value());
  return *b;
}

// The diagnostics a load throws (empty if it does not throw).
template <class F>
std::vector<Diagnostic> diagnostics_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  return {};
}

// A small training scenario every test can vary with overrides.
inline const char* kSmallTraining = R"(name = "small"
[system]
gpu = "a100-sxm4-80gb"
gpus = 8
[model]
preset = "gpt2-124m"
[training]
tokens = 1e9
seq_len = 1024
global_batch = 64
micro_batch = 8
)";

}  // namespace gpusim::test
