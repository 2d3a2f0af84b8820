// The README shows what gpusim prints: every fenced block that opens with "$ build/gpusim ..." is
// that command's output now, run from the repository's root (a change to a report changes the
// README with it).
#include <fstream>
#include <sstream>

#include "cli_helpers.hpp"

using namespace gpusim;

namespace {

struct Example {
  std::string args;    // after "build/gpusim "
  std::string output;  // the block's lines after the command
};

std::vector<Example> readme_examples() {
  std::ifstream in(test::source("README.md"));
  std::vector<Example> out;
  std::string line;
  bool in_block = false;
  Example* current = nullptr;
  const std::string prompt = "$ build/gpusim ";
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      current = nullptr;
      continue;
    }
    if (!in_block) {
      continue;
    }
    if (current == nullptr && line.rfind(prompt, 0) == 0) {
      out.push_back({line.substr(prompt.size()), ""});
      current = &out.back();
    } else if (current != nullptr) {
      current->output += line + "\n";
    }
  }
  return out;
}

}  // namespace

TEST_CASE("every example output in the README is what its command prints now", "[docs]") {
  const std::vector<Example> examples = readme_examples();
  REQUIRE(examples.size() >= 3);  // the estimate at the top and the two systems compared
  for (const Example& e : examples) {
    INFO("gpusim " << e.args);
    const test::Run r = test::run_env("cd '" + std::string(GPUSIM_SOURCE_DIR) + "' &&", e.args);
    REQUIRE(r.code == 0);
    CHECK(r.out == e.output);
  }
}
