// The runtime remainder fit (specs/runtimes/*.toml, efficiency.remainder): the share of step time
// no modelled kernel explains, from a runtime's fit end-to-end rows.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "validation/internal.hpp"

namespace gpusim::validation {

// A runtime's remainder (time outside the modelled kernels, as a fraction of kernel time) from its
// fit end-to-end rows: the r that minimizes Σ log(predicted / measured)², by golden-section search
// (each prediction moves monotonically with r). The rows are resolved under the catalog with the
// microbenchmark fits applied, since the step they predict depends on those.
void fit_remainders(const std::vector<Measurement>& rows, const catalog::Catalog& catalog,
                    const std::set<std::string>& scopes, CalibrationResult& out) {
  std::vector<Measurement> e2e;
  for (const Measurement& m : rows) {
    if (m.role == Role::kFit && m.scored && m.benchmark == Benchmark::kScenario) {
      e2e.push_back(m);
    }
  }
  const std::vector<Subject> subjects = resolve(e2e, with_overlay(catalog, out.params));
  std::map<std::string, std::vector<const Subject*>> by_runtime;
  for (const Subject& s : subjects) {
    if (s.scenario && (scopes.empty() || scopes.count("runtime:" + s.scenario->runtime.id) != 0)) {
      by_runtime[s.scenario->runtime.id].push_back(&s);
    }
  }
  // Each runtime's search is independent: each on any thread into its own slot, recorded in
  // runtime order afterwards.
  std::vector<const std::pair<const std::string, std::vector<const Subject*>>*> runtimes;
  for (const auto& entry : by_runtime) {
    runtimes.push_back(&entry);
  }
  std::vector<double> fitted(runtimes.size(), 0.0);
  base::parallel_for(runtimes.size(), 0, [&](std::size_t k) {
    const std::vector<const Subject*>& list = runtimes[k]->second;
    // The remainder is not in a serving table's key: each row's tables serve every r.
    std::vector<step::TableCache> tables(list.size());
    auto cost = [&list, &tables](double r) {
      double sum = 0;
      for (std::size_t i = 0; i < list.size(); ++i) {
        const Subject* s = list[i];
        Subject with = *s;
        with.scenario->runtime.remainder = r;
        const Prediction p = predict(with, &tables[i]);
        if (!p.value || *p.value <= 0) {
          return std::numeric_limits<double>::infinity();
        }
        sum += std::pow(std::log(*p.value / s->row->value), 2);
      }
      return sum;
    };
    constexpr double kMaxRemainder = 3.0;  // three times the kernel time: beyond any framework we model
    const double golden = (std::sqrt(5.0) - 1.0) / 2.0;
    double lo = 0, hi = kMaxRemainder;
    double a = hi - golden * (hi - lo), b = lo + golden * (hi - lo);
    double fa = cost(a), fb = cost(b);
    for (int i = 0; i < 60 && hi - lo > 1e-5; ++i) {
      if (fa <= fb) {
        hi = b;
        b = a;
        fb = fa;
        a = hi - golden * (hi - lo);
        fa = cost(a);
      } else {
        lo = a;
        a = b;
        fa = fb;
        b = lo + golden * (hi - lo);
        fb = cost(b);
      }
    }
    fitted[k] = 0.5 * (lo + hi) < 1e-4 ? 0.0 : 0.5 * (lo + hi);
  });
  for (std::size_t k = 0; k < runtimes.size(); ++k) {
    const std::string& id = runtimes[k]->first;
    const std::vector<const Subject*>& list = runtimes[k]->second;
    const double r = fitted[k];
    FittedParam p{"runtime:" + id, "efficiency", "remainder", list.front()->scenario->runtime.remainder, r,
                  false,           {},           {}};
    std::set<std::string> files;
    for (const Subject* s : list) {
      p.rows.push_back(s->row->id);
      files.insert(s->row->file);
    }
    p.files.assign(files.begin(), files.end());
    out.params.push_back(std::move(p));
  }
}

}  // namespace gpusim::validation
