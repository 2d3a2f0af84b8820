// Shared test helpers: the built-in catalog, scenarios from inline TOML, and error capture.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "gpusim/gpusim.hpp"

namespace gpusim::test {

inline const Catalog& catalog() {
  static const Catalog c = Catalog::builtin();
  return c;
}

inline Scenario scenario(const std::string& toml, const std::vector<Override>& overrides = {}) {
  return scenario::load_scenario(catalog(), "test.toml", toml, overrides);
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
