// One job on several GPUs (see include/gpusim/search.hpp).
#include <algorithm>

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
  std::stable_sort(rows.begin(), rows.end(), [](const CompareRow& a, const CompareRow& b) {
    auto key = [](const CompareRow& r) {
      return std::make_pair(!r.estimate ? 2 : (r.estimate->eval.memory.fits() ? 0 : 1),
                            r.estimate ? r.estimate->eval.job_time.value() : 0.0);
    };
    return key(a) < key(b);
  });
  return rows;
}

}  // namespace gpusim::search
