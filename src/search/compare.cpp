// One job on several GPUs (see include/gpusim/search.hpp).
#include <algorithm>
#include <tuple>

#include "gpusim/search.hpp"

namespace gpusim::search {

std::vector<CompareRow> compare(const catalog::Catalog& catalog, const scenario::ParsedScenario& parsed,
                                const std::vector<scenario::Override>& overrides,
                                const std::vector<std::string>& gpus) {
  for (const auto& id : gpus) {
    (void)catalog.file(catalog::SpecKind::kGpu, id);  // an unknown id is bad input, before any work
  }
  std::vector<CompareRow> rows;
  for (const auto& id : gpus) {
    CompareRow r;
    r.gpu = id;
    try {
      r.estimate = answer::estimate(scenario::resolve(catalog, parsed, overrides, id));
    } catch (const InputError& e) {
      r.problem = e.first_message();
    }
    rows.push_back(std::move(r));
  }
  // Training: by time to finish. Serving: deployments meeting the SLO (all, without one) first,
  // then by cloud cost per million output tokens: what a provider pays for the service it sells.
  std::stable_sort(rows.begin(), rows.end(), [](const CompareRow& a, const CompareRow& b) {
    auto key = [](const CompareRow& r) {
      if (!r.estimate) {
        return std::make_tuple(3, 0, 0.0);
      }
      const answer::Estimate& e = *r.estimate;
      const int fits = e.eval.memory.fits() ? 0 : 1;
      if (!e.eval.inference) {
        return std::make_tuple(fits, 0, e.eval.job_time.value());
      }
      const bool meets = !e.slo || e.slo->met();
      return std::make_tuple(fits, meets ? 0 : 1, answer::usd_per_million_tokens(e));
    };
    return key(a) < key(b);
  });
  return rows;
}

}  // namespace gpusim::search
