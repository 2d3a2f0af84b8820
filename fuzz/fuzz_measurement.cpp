// A measurement file: loads (and its rows predict without breaking) or InputError.
#include <unistd.h>

#include <fstream>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusim;
  static const std::string path = "/tmp/gpusim-fuzz-measurement-" + std::to_string(::getpid()) + ".toml";
  { std::ofstream(path, std::ios::binary) << fuzz::text_of(data, size); }
  try {
    const auto rows = validation::load_measurements(fuzz::catalog(), {path});
    for (const auto& s : validation::resolve(rows, fuzz::catalog())) {
      (void)validation::predict(s);
    }
  } catch (const InputError&) {
  }
  return 0;
}
