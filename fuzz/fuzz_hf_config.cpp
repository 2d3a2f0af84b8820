// A Hugging Face config.json: imports into a model shape and estimates a short training job on it
// with a finite, non-negative report, or raises InputError.
#include <unistd.h>

#include <fstream>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusim;
  static const std::string path = "/tmp/gpusim-fuzz-hf-" + std::to_string(::getpid()) + ".json";
  { std::ofstream(path, std::ios::binary) << fuzz::text_of(data, size); }
  try {
    (void)scenario::import_hf_config(path);
    const Scenario sc = scenario::load_scenario(fuzz::catalog(), "s.toml",
                                                "name = \"f\"\n[system]\ngpu = \"h100-sxm5-80gb\"\ngpus = 8\n"
                                                "[model]\nhf_config = \"" +
                                                    path +
                                                    "\"\n[training]\ntokens = 1e9\n"
                                                    "seq_len = 1024\nglobal_batch = 64\n");
    fuzz::check_report(answer::estimate(sc, answer::Options{false}));
  } catch (const InputError&) {
  }
  return 0;
}
