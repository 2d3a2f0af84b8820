// The house is shaped like the pipeline: every stage is a folder under src/ with its public face in
// include/gpusim/<stage>.hpp (a long one continued in include/gpusim/<stage>/); a file includes only its own stage's
// private headers, the faces of stages before its own, and (for parse, which keeps toml++ inside the library)
// parse/parse.hpp. The command line includes the facade and its own headers only.
#include <filesystem>
#include <regex>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;

namespace {

// The stages in pipeline order; a stage may include the faces of those before it. The engine
// (lowering, physics, step) sits below the inputs (parse, catalog, cost, scenario): it takes plain
// structs, never a spec file or a scenario.
const std::vector<std::string> kStages = {"base",   "units",  "hardware",   "workload", "lowering", "physics",
                                          "step",   "parse",  "catalog",    "cost",     "scenario", "explain",
                                          "answer", "search", "validation", "report",   "app",      "cli"};

int order_of(const std::string& stage) {
  const auto it = std::find(kStages.begin(), kStages.end(), stage);
  return it == kStages.end() ? -1 : static_cast<int>(it - kStages.begin());
}

}  // namespace

TEST_CASE("includes only point down the pipeline, and private headers stay in their folder", "[layering]") {
  const fs::path root(GPUSIM_SOURCE_DIR);
  const std::regex include_line(R"re(#include "([^"]+)")re");
  int files = 0;
  for (const char* top : {"include/gpusim", "src"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      if (!entry.is_regular_file()) {
        continue;
      }
      const fs::path rel = fs::relative(entry.path(), root);
      // include/gpusim/<stage>.hpp (continued in include/gpusim/<stage>/), or src/<stage>/...
      const fs::path under = fs::relative(entry.path(), root / top);
      const std::string stage =
          std::next(under.begin()) != under.end() ? under.begin()->string() : entry.path().stem().string();
      if (stage == "gpusim") {
        continue;  // the facade includes every face
      }
      INFO(rel.string());
      REQUIRE(order_of(stage) >= 0);
      ++files;
      const std::string text = gpusim::test::read_text(entry.path());
      for (auto it = std::sregex_iterator(text.begin(), text.end(), include_line); it != std::sregex_iterator(); ++it) {
        const std::string inc = (*it)[1];
        INFO("includes " << inc);
        if (inc.rfind("gpusim/", 0) == 0) {
          // gpusim/<stage>.hpp, or gpusim/<stage>/<part>.hpp: that stage's face
          const fs::path in_face = fs::path(inc.substr(7));
          const std::string face =
              std::next(in_face.begin()) != in_face.end() ? in_face.begin()->string() : in_face.stem().string();
          if (stage == "cli") {
            CHECK(face == "gpusim");  // the command line sees the library through its facade only
          } else {
            CHECK(order_of(face) >= 0);
            CHECK(order_of(face) <= order_of(stage));
          }
        } else {
          const std::string folder = inc.substr(0, inc.find('/'));
          const bool own = folder == stage;
          const bool parse_face = inc == "parse/parse.hpp" && order_of(stage) > order_of("parse");
          CHECK((own || parse_face));
        }
      }
    }
  }
  CHECK(files > 50);
}
