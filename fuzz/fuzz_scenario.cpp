// A whole scenario file: loads and estimates with a finite, non-negative report, or InputError.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusim;
  try {
    const Scenario sc = scenario::load_scenario(fuzz::catalog(), "fuzz.toml", fuzz::text_of(data, size));
    fuzz::check_report(answer::estimate(sc, answer::Options{false}));
  } catch (const InputError&) {
  }
  return 0;
}
