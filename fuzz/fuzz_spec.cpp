// A GPU spec file added over the built-in catalog, then a scenario on that GPU: InputError or a
// finite, non-negative report.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusim;
  Catalog c = Catalog::builtin();
  try {
    c.add_file(SpecKind::kGpu, "fuzz-gpu", catalog::SpecFile{"fuzz-gpu.toml", fuzz::text_of(data, size)});
    const Scenario sc = scenario::load_scenario(c, "s.toml",
                                                "name = \"f\"\n[system]\ngpu = \"fuzz-gpu\"\ngpus = 1\n[model]\n"
                                                "preset = \"gpt2-124m\"\n[training]\ntokens = 1e9\nseq_len = 1024\n"
                                                "global_batch = 16\nmicro_batch = 4\n");
    fuzz::check_report(answer::estimate(sc, answer::Options{false}));
  } catch (const InputError&) {
  }
  return 0;
}
