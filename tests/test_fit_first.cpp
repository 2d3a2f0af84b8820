// Fit first: a job that cannot run (step::runs: its memory, the host's, or a serving engine's KV
// pool short of one request) is reported as such first, with no figure it would have only if it
// ran, and its advice lists only changes that make it run. Checked on every shipped scenario with
// its GPU swapped to a 24 GB card (the RTX 4090) that computes in its datatype.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace gpusim;

namespace {

// Whether the RTX 4090 computes in the scenario's datatype: fp4 weights (Blackwell's) cannot be put
// on it at all, a refusal of the input (tests/test_fp4.cpp) rather than a job short of memory.
bool computes_on_4090(const std::string& path) {
  const Scenario sc = scenario::load_scenario_file(test::catalog(), path);
  return !sc.job.inference || test::catalog().gpu("rtx4090").supports(sc.job.inference->weight_precision);
}

std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> out;
  for (const auto& f : std::filesystem::directory_iterator(test::source("scenarios"))) {
    if (f.path().extension() == ".toml" && computes_on_4090(f.path().string())) {
      out.push_back(f.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

app::EstimateAnswer on_4090(const std::string& scenario, const std::vector<std::string>& sets = {}) {
  app::EstimateRequest r;
  r.scenario = app::ScenarioSource{scenario, std::nullopt};
  r.gpu = "rtx4090";
  r.sets = sets;
  r.bands = false;
  return app::estimate(test::catalog(), r);
}

bool null_at(const nlohmann::json& j, const std::string& section, const std::string& key) {
  return j.contains(section) && j.at(section).contains(key) && j.at(section).at(key).is_null();
}

}  // namespace

TEST_CASE("a job that cannot run reports no time, rate, power or cost, and says by how much it falls short", "[fit]") {
  int short_jobs = 0;
  int running = 0;
  for (const std::string& scenario : shipped_scenarios()) {
    INFO(scenario);
    const app::EstimateAnswer a = on_4090(scenario);
    const nlohmann::json j = nlohmann::json::parse(report::estimate_json(a.estimate));
    const std::string text = report::estimate_text(a.estimate);
    if (step::runs(a.estimate.eval)) {
      ++running;
      CHECK(j["memory"]["fits"] == true);
      CHECK(j["step"]["time_s"].is_number());
      CHECK(j["cost"]["cloud_usd"].is_number());
      CHECK_THAT(text, !Catch::Contains("DOES NOT FIT:"));
      continue;
    }
    ++short_jobs;
    CHECK(j["memory"]["fits"] == false);
    const bool by_bytes =
        j["memory"]["shortfall_bytes"].get<double>() > 0 || j["memory"]["host_shortfall_bytes"].get<double>() > 0;
    const bool by_kv =
        j["inference"]["kv_shortfall_tokens"].is_number() && j["inference"]["kv_shortfall_tokens"].get<double>() > 0;
    CHECK((by_bytes || by_kv));
    for (const auto& [section, key] :
         std::vector<std::pair<std::string, std::string>>{{"step", "time_s"},
                                                          {"throughput", "tokens_per_s"},
                                                          {"utilization", "mfu"},
                                                          {"training", "time_s"},
                                                          {"inference", "time_to_first_token_s"},
                                                          {"inference", "output_tokens_per_s"},
                                                          {"power", "gpu_avg_w"},
                                                          {"power", "energy_kwh"},
                                                          {"cost", "cloud_usd"},
                                                          {"cost", "owned_usd"},
                                                          {"cost", "breakeven_days"}}) {
      INFO(section << "." << key);
      CHECK(null_at(j, section, key));
    }
    // The text: the shortfall first (before the memory line), and none of the lines of a job that ran.
    const std::size_t fit = text.find("\n  fit         DOES NOT FIT: ");
    REQUIRE(fit != std::string::npos);
    CHECK(fit < text.find("\n  memory "));
    for (const char* label : {"\n  step ", "\n  throughput ", "\n  latency ", "\n  time ", "\n  power ", "\n  cost ",
                              "\n  kernels ", "\n  SLO "}) {
      INFO(label);
      CHECK(text.find(label) == std::string::npos);
    }
  }
  // The set holds both kinds of job, so both branches above were checked.
  CHECK(short_jobs >= 5);
  CHECK(running >= 5);
}

TEST_CASE("the advice on a job that cannot run lists only changes that make it run, each checked by running it",
          "[fit]") {
  for (const std::string& scenario : shipped_scenarios()) {
    INFO(scenario);
    const app::EstimateAnswer a = on_4090(scenario);
    if (step::runs(a.estimate.eval)) {
      continue;
    }
    REQUIRE_FALSE(a.estimate.advice.empty());
    for (const explain::Advice& advice : a.estimate.advice) {
      if (advice.change.empty()) {
        continue;  // words with no variant (no change runs it; try `gpusim plan`)
      }
      std::vector<std::string> sets;
      std::string label;
      for (const scenario::Override& o : advice.change) {
        sets.push_back(o.key + "=" + o.value);
        label += sets.back() + " ";
      }
      INFO(label);
      const bool needs_more = advice.kind == explain::AdviceKind::kNeedsMoreGpus ||
                              advice.kind == explain::AdviceKind::kActivationsTooLarge;
      REQUIRE(advice.after.has_value());
      CHECK(advice.after->runs != needs_more);  // the tightest variant tried, when nothing fits
      if (!needs_more) {
        // The change as a user gives it (--set), run again from the file: it runs.
        CHECK(step::runs(on_4090(scenario, sets).estimate.eval));
      }
    }
  }
}
