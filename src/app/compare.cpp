// The compare command (include/gpusim/app.hpp): one scenario on each of several GPUs
// (search::compare) or whole systems (search::compare_systems), refused when it runs on none.
#include <algorithm>

#include "gpusim/app.hpp"

namespace gpusim::app {

namespace {

void check_ids(const char* field, const char* what, const std::vector<std::string>& ids) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i].empty()) {
      throw RequestError(field, std::string("has an empty ") + what + " (entry " + std::to_string(i + 1) + ")");
    }
  }
}

// No comparison is an answer: every row's reason, once each.
[[noreturn]] void runs_on_none(const std::string& path, const std::vector<std::pair<std::string, std::string>>& why) {
  std::vector<Diagnostic> reasons;
  for (const auto& [what, problem] : why) {
    reasons.push_back(Diagnostic{SourcePos{path}, "", "cannot run on " + what + ": " + problem});
  }
  throw InputError(reasons);
}

}  // namespace

void check(const CompareRequest& r) {
  if (r.gpus.empty() == r.systems.empty()) {
    throw RequestError(r.gpus.empty() ? "gpus" : "systems",
                       r.gpus.empty() ? "names no GPU id (nor systems): nothing to compare"
                                      : "and systems both given: compare GPUs or systems, not both");
  }
  check_ids("gpus", "GPU id", r.gpus);
  check_ids("systems", "system", r.systems);
  for (const std::string& s : r.systems) {
    if (!search::parse_system(s)) {
      throw RequestError("systems", "has \"" + s + "\", which is not [NODES x] GPUS x GPU-ID (e.g. 2xrtx3090, " +
                                        "1xa100-sxm4-80gb, 2x8xh100-sxm5-80gb) with 1 to " +
                                        std::to_string(search::kMaxPlanGpus) + " GPUs");
    }
  }
  if (!base::value_in(search::kObjectiveNames, r.objective)) {
    throw RequestError(
        "objective", "must be one of " + base::quoted_names(search::kObjectiveNames) + ", got \"" + r.objective + "\"");
  }
  if (!r.gpus.empty() && r.objective != "time") {
    throw RequestError("objective",
                       "applies to systems; GPUs are ranked by time to finish (training) or cost per "
                       "million output tokens (serving)");
  }
}

CompareAnswer compare(const catalog::Catalog& catalog, const CompareRequest& r) {
  check(r);
  const scenario::ParsedScenario parsed = parse(r.scenario);
  const std::vector<scenario::Override> overrides = scenario::parse_overrides(r.sets, r.unsets);
  CompareAnswer a{
      scenario::resolve(catalog, parsed, overrides), {}, {}, *base::value_in(search::kObjectiveNames, r.objective)};
  std::vector<std::pair<std::string, std::string>> why;
  if (!r.systems.empty()) {
    std::vector<std::pair<std::string, search::SystemChoice>> systems;
    for (const std::string& s : r.systems) {
      systems.emplace_back(s, *search::parse_system(s));
    }
    a.systems = search::compare_systems(catalog, parsed, overrides, systems, a.objective);
    if (std::any_of(a.systems.begin(), a.systems.end(), [](const search::SystemRow& row) { return row.runs(); })) {
      return a;
    }
    for (const search::SystemRow& row : a.systems) {
      why.emplace_back(row.text, row.problem.empty() ? "no layout fits" : row.problem);
    }
    runs_on_none(r.scenario.path, why);
  }
  a.rows = search::compare(catalog, parsed, overrides, r.gpus);
  if (std::any_of(a.rows.begin(), a.rows.end(),
                  [](const search::CompareRow& row) { return row.estimate.has_value(); })) {
    return a;
  }
  for (const search::CompareRow& row : a.rows) {
    why.emplace_back(row.gpu, row.problem);
  }
  runs_on_none(r.scenario.path, why);
}

}  // namespace gpusim::app
