// The compare command (include/gpusim/app.hpp): one scenario on each of several GPUs
// (search::compare), refused when it runs on none of them.
#include <algorithm>

#include "gpusim/app.hpp"

namespace gpusim::app {

CompareAnswer compare(const catalog::Catalog& catalog, const CompareRequest& r) {
  if (r.gpus.empty()) {
    throw RequestError("gpus", "names no GPU id");
  }
  for (std::size_t i = 0; i < r.gpus.size(); ++i) {
    if (r.gpus[i].empty()) {
      throw RequestError("gpus", "has an empty GPU id (entry " + std::to_string(i + 1) + ")");
    }
  }
  const scenario::ParsedScenario parsed = parse(r.scenario);
  const std::vector<scenario::Override> overrides = scenario::parse_overrides(r.sets);
  CompareAnswer a{scenario::resolve(catalog, parsed, overrides), search::compare(catalog, parsed, overrides, r.gpus)};
  if (std::none_of(a.rows.begin(), a.rows.end(),
                   [](const search::CompareRow& row) { return row.estimate.has_value(); })) {
    std::vector<Diagnostic> reasons;
    for (const search::CompareRow& row : a.rows) {
      reasons.push_back(Diagnostic{SourcePos{r.scenario.path}, "", "cannot run on " + row.gpu + ": " + row.problem});
    }
    throw InputError(reasons);
  }
  return a;
}

}  // namespace gpusim::app
