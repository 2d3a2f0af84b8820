// --unset KEY: a key (or a whole table) taken out of the scenario as if the file had never written
// it, so its default applies; removals come before every --set; the parsed file is as it was after.
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace gpusim;
using Json = nlohmann::json;

namespace {

const std::string kQlora = test::source("scenarios/llama3-8b-qlora-rtx4090.toml");
const std::string kServing = test::source("scenarios/llama3-70b-fp8-4xh100-serve.toml");

std::string estimate_json(const std::string& scenario, const std::vector<std::string>& sets,
                          const std::vector<std::string>& unsets) {
  app::EstimateRequest r;
  r.scenario = app::ScenarioSource{scenario, std::nullopt};
  r.sets = sets;
  r.unsets = unsets;
  r.bands = false;
  return report::estimate_json(app::estimate(test::catalog(), r).estimate);
}

// RFC 4180 fields of one record (quoted fields may hold commas).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// The file's text without the line that sets `line_start`.
std::string without_line(const std::string& path, const std::string& line_start) {
  std::ifstream in(path);
  std::string out;
  std::string line;
  bool dropped = false;
  while (std::getline(in, line)) {
    if (line.rfind(line_start, 0) == 0) {
      dropped = true;
      continue;
    }
    out += line + "\n";
  }
  REQUIRE(dropped);
  return out;
}

}  // namespace

TEST_CASE("an unset key is as if the file had never written it, so its default applies", "[unset]") {
  // The QLoRA file's 8-bit AdamW, taken out: the default optimizer (32-bit AdamW) holds more state.
  const std::string edited = test::write_temp("no-optimizer.toml", without_line(kQlora, "optimizer ="));
  const std::string unset = estimate_json(kQlora, {}, {"training.optimizer"});
  // The same report but for the scenario's path, which the report does not hold.
  CHECK(unset == estimate_json(edited, {}, {}));
  CHECK(Json::parse(unset)["memory"]["optimizer_bytes"].get<double>() >
        Json::parse(estimate_json(kQlora, {}, {}))["memory"]["optimizer_bytes"].get<double>());
}

TEST_CASE("removals come before every set, so a removed key can be written anew", "[unset]") {
  CHECK(estimate_json(kQlora, {"training.method=\"lora\""}, {"training.method"}) ==
        estimate_json(kQlora, {"training.method=\"lora\""}, {}));
}

TEST_CASE("an unset table takes all of it: no [slo], no SLO verdict", "[unset]") {
  const Json with = Json::parse(estimate_json(kServing, {}, {}));
  const Json without = Json::parse(estimate_json(kServing, {}, {"slo"}));
  CHECK(with["slo"]["met"].is_boolean());
  CHECK(without["slo"]["met"].is_null());
  CHECK(without["slo"]["ttft_limit_s"].is_null());
}

TEST_CASE("the parsed scenario is as the file wrote it after a resolve that removed keys", "[unset]") {
  const scenario::ParsedScenario parsed = scenario::parse_scenario_file(kServing);
  const scenario::Scenario before = scenario::resolve(test::catalog(), parsed, {});
  const scenario::Scenario removed = scenario::resolve(
      test::catalog(), parsed, scenario::parse_overrides({"slo.ttft=\"1 s\""}, {"slo", "serving.length_spread"}));
  REQUIRE(removed.slo.has_value());  // the --set wrote a new [slo] with only ttft
  CHECK_FALSE(removed.slo->tpot.has_value());
  const scenario::Scenario after = scenario::resolve(test::catalog(), parsed, {});
  REQUIRE(after.slo.has_value());
  CHECK(after.slo->tpot == before.slo->tpot);
  CHECK(after.slo->ttft == before.slo->ttft);
  CHECK(after.job.inference->load.length_spread == before.job.inference->load.length_spread);
  CHECK(removed.job.inference->load.length_spread == 0);  // the default: every request of the mean lengths
}

TEST_CASE("a sweep takes --unset as a fixed removal for every point", "[unset][cli]") {
  const test::Run r = test::run("sweep " + kServing + " --unset slo --vary serving.requests=100,200 --format csv");
  REQUIRE(r.code == 0);
  std::istringstream rows(r.out);
  std::string header;
  std::getline(rows, header);
  const std::vector<std::string> columns = csv_cells(header);
  const auto met = std::find(columns.begin(), columns.end(), "slo.met");
  REQUIRE(met != columns.end());
  int points = 0;
  for (std::string line; std::getline(rows, line); ++points) {
    const std::vector<std::string> cells = csv_cells(line);
    CHECK(cells.at(static_cast<std::size_t>(met - columns.begin())).empty());  // no [slo]: no verdict
  }
  CHECK(points == 2);
}

TEST_CASE("an unset that names nothing, overlaps another or is not a key exits 2 and writes nothing", "[unset][cli]") {
  const auto out = test::scratch() / "unset.txt";
  std::filesystem::remove(out);
  for (const auto& [args, says] :
       std::vector<std::pair<std::string, std::string>>{{"--unset slo.ttfx", "does not set slo.ttfx"},
                                                        {"--unset nothing.here", "has no [nothing] table"},
                                                        {"--unset name.first", "\"name\" is not a table"},
                                                        {"--unset slo --unset slo.ttft", "one lies inside the other"},
                                                        {"--unset slo --unset slo", "given twice"},
                                                        {"--unset slo..ttft", "expected a dotted KEY"},
                                                        {"--unset slo.ttft=1", "expected a dotted KEY"}}) {
    INFO(args);
    const test::Run r = test::run("estimate " + kServing + " " + args + " -o " + out.string());
    CHECK(r.code == 2);
    CHECK(r.err.find(says) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}
