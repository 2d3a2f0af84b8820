// --set KEY=VALUE strings over a shipped training scenario: each line of the input is one override.
#include <sstream>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusim;
  static const ParsedScenario base =
      scenario::parse_scenario_file(GPUSIM_SOURCE_DIR "/scenarios/gpt2-124m-rtx4090.toml");
  std::vector<std::string> sets;
  std::istringstream lines(fuzz::text_of(data, size));
  for (std::string line; std::getline(lines, line) && sets.size() < 8;) {
    sets.push_back(line);
  }
  try {
    const Scenario sc = scenario::resolve(fuzz::catalog(), base, scenario::parse_overrides(sets));
    fuzz::check_report(answer::estimate(sc, answer::Options{false}));
  } catch (const InputError&) {
  }
  return 0;
}
