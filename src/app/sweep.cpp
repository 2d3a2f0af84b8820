// The sweep command (include/gpusim/app.hpp): every point of a grid over scenario keys
// (search::sweep), after the request's checks, with why no point ran when none did.
#include <string>

#include "gpusim/app.hpp"

namespace gpusim::app {

void check(const SweepRequest& r) {
  if (r.axes.empty()) {
    throw RequestError("vary", "names no key to vary: give at least one KEY=V1,V2,...");
  }
  if (r.shards < 1 || r.shard < 0 || r.shard >= r.shards) {
    throw RequestError(
        "shard", "must be I of N with 0 <= I < N, got " + std::to_string(r.shard) + " of " + std::to_string(r.shards));
  }
  if (r.max_points < 1 || r.max_points > search::kMaxSweepPointsLimit) {
    throw RequestError("max_points", "must be a whole number from 1 to " +
                                         std::to_string(search::kMaxSweepPointsLimit) + ", got " +
                                         std::to_string(r.max_points));
  }
  search::SweepOptions options;
  options.shard = r.shard;
  options.shards = r.shards;
  options.max_points = r.max_points;
  search::check_grid(r.axes, options);
}

SweepAnswer sweep(const catalog::Catalog& catalog, const SweepRequest& r,
                  const std::function<void(const search::SweepPoint&)>& each) {
  check(r);
  const scenario::ParsedScenario file = parse(r.scenario);
  const std::vector<scenario::Override> fixed = scenario::parse_overrides(r.sets, r.unsets);
  (void)scenario::resolve(catalog, file, fixed);  // the base scenario itself must be valid
  search::SweepOptions options;
  options.shard = r.shard;
  options.shards = r.shards;
  options.max_points = r.max_points;
  options.progress = r.progress;
  SweepAnswer a;
  std::string first_problem;
  bool one_problem = true;  // every point that cannot run says the same
  std::vector<Diagnostic> problems;
  search::sweep(catalog, file, fixed, r.axes, options, [&](const search::SweepPoint& p) {
    ++a.points;
    each(p);
    if (p.estimate) {
      ++a.ran;
      return;
    }
    if (problems.empty()) {
      first_problem = p.problem;
    }
    one_problem = one_problem && p.problem == first_problem;
    if (problems.size() < 5) {
      std::string where;
      for (std::size_t k = 0; k < r.axes.size(); ++k) {
        where += (k == 0 ? "" : ", ") + r.axes[k].key + "=" + p.values[k];
      }
      problems.push_back(Diagnostic{SourcePos{r.scenario.path}, "", "no point can run; " + where + ": " + p.problem});
    }
  });
  if (a.points > 0 && a.ran == 0) {
    a.refusal = one_problem ? std::vector<Diagnostic>{Diagnostic{
                                  SourcePos{r.scenario.path}, "",
                                  "no point can run (all " + std::to_string(a.points) + "): " + first_problem}}
                            : problems;
  }
  return a;
}

}  // namespace gpusim::app
