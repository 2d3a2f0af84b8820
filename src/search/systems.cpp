// Whole systems for one job, each at its best layout (see include/gpusim/search.hpp). Each system
// is the scenario with its [system] replaced (GPU, GPUs, GPUs per node) and searched by plan or
// plan_serving; the row is then `gpusim estimate` of that scenario with the layout found, so a
// row is reproduced exactly by estimating it with the row's settings.
#include <algorithm>
#include <charconv>
#include <tuple>

#include "gpusim/search.hpp"

namespace gpusim::search {

namespace {

// A count of 1 to kMaxPlanGpus, all of `s` digits.
std::optional<int> count_of(std::string_view s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 1 || v > kMaxPlanGpus) {
    return std::nullopt;
  }
  return v;
}

// The scenario on the system: its GPU, its GPU count and one node's count.
scenario::Scenario on_system(const catalog::Catalog& catalog, const scenario::ParsedScenario& parsed,
                             std::vector<scenario::Override> overrides, const SystemChoice& s) {
  overrides.push_back({"system.gpus", std::to_string(s.gpus())});
  overrides.push_back({"system.gpus_per_node", std::to_string(s.gpus_per_node)});
  return scenario::resolve(catalog, parsed, overrides, s.gpu);
}

void train_on(const scenario::Scenario& sc, Objective objective, SystemRow& row) {
  PlanOptions o;
  o.objective = objective;
  o.top = 1;
  const PlanResult r = plan(sc, o);
  row.layouts = r.sized;
  if (r.best.empty()) {
    row.needs = r.closest_memory;
    row.problem = "no layout fits";
    return;
  }
  const PlanRow& best = r.best.front();
  row.layout = best.layout;
  row.estimate = answer::estimate(scenario::with_layout(sc, best.layout, best.gpus));
}

void serve_on(const scenario::Scenario& sc, Objective objective, SystemRow& row) {
  PlanOptions o;
  o.objective = objective;
  o.top = kMaxPlanTop;
  const ServingPlanResult r = plan_serving(sc, o);
  row.layouts = r.candidates;
  const int gpus = sc.system.gpus;
  auto take = [&](const ServingPlanRow& p) {
    row.estimate = p.estimate;
    row.layout = p.layout;
    row.format = p.format;
    row.batch_limit = p.batch_limit;
  };
  // The best deployment on all of the system's GPUs; the plan also tries fewer.
  const auto all = std::find_if(r.best.begin(), r.best.end(), [&](const ServingPlanRow& p) { return p.gpus == gpus; });
  if (all != r.best.end()) {
    take(*all);
  } else if (r.closest && r.closest->gpus == gpus) {
    take(*r.closest);  // misses the SLO by the least
  } else if (r.meeting + r.timed == 0 || r.no_fit == r.candidates) {
    row.needs = r.smallest_no_fit;
    row.problem = "no deployment fits";
  } else {
    row.problem = "no deployment on all of its GPUs meets the SLO";
  }
}

}  // namespace

std::optional<SystemChoice> parse_system(std::string_view text) {
  std::vector<std::string_view> parts;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t x = std::min(text.find('x', at), text.size());
    // The id is the rest after the counts: GPU ids may hold an 'x' themselves (mi300x).
    if (parts.size() == 2 || !count_of(text.substr(at, x - at))) {
      parts.push_back(text.substr(at));
      break;
    }
    parts.push_back(text.substr(at, x - at));
    at = x + 1;
  }
  if (parts.size() < 2 || parts.back().empty()) {
    return std::nullopt;
  }
  SystemChoice s;
  s.gpu = std::string(parts.back());
  s.gpus_per_node = *count_of(parts[parts.size() - 2]);
  if (parts.size() == 3) {
    s.nodes = *count_of(parts[0]);
  }
  if (static_cast<std::int64_t>(s.nodes) * s.gpus_per_node > kMaxPlanGpus) {
    return std::nullopt;
  }
  return s;
}

std::vector<SystemRow> compare_systems(const catalog::Catalog& catalog, const scenario::ParsedScenario& parsed,
                                       const std::vector<scenario::Override>& overrides,
                                       const std::vector<std::pair<std::string, SystemChoice>>& systems,
                                       Objective objective) {
  for (const auto& [text, s] : systems) {
    (void)catalog.file(catalog::SpecKind::kGpu, s.gpu);  // an unknown id is bad input, before any work
  }
  std::vector<SystemRow> rows;
  for (const auto& [text, s] : systems) {
    SystemRow row;
    row.system = s;
    row.text = text;
    try {
      const scenario::Scenario sc = on_system(catalog, parsed, overrides, s);
      if (sc.job.inference) {
        serve_on(sc, objective, row);
      } else {
        train_on(sc, objective, row);
      }
    } catch (const InputError& e) {
      row.estimate.reset();
      row.problem = e.first_message();
    }
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [objective](const SystemRow& a, const SystemRow& b) {
    auto key = [objective](const SystemRow& r) {
      if (!r.runs()) {
        return std::make_tuple(2, 0.0);
      }
      const answer::Estimate& e = *r.estimate;
      const int missed = r.meets() ? 0 : 1;
      if (!e.eval.inference) {
        return std::make_tuple(0, objective == Objective::kTime ? e.eval.job_time.value() : e.cost.cloud.value());
      }
      const double tpot = units::to_seconds(e.eval.inference->tpot.p50);
      return std::make_tuple(missed, objective == Objective::kTime ? tpot : answer::usd_per_million_tokens(e));
    };
    return key(a) < key(b);
  });
  return rows;
}

}  // namespace gpusim::search
