// Which fitted values calibration keeps: least squares minimizes squared relative error, while the
// project judges median |error| (docs/measurements.md); a fit that does worse on its own rows by
// that measure than the prior it replaces is dropped.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "validation/internal.hpp"

namespace gpusim::validation {

using base::strfmt;

namespace {

// |error| of each row with its system resolved under `catalog` (nullopt: no prediction).
std::vector<std::optional<double>> row_errors(const std::vector<Measurement>& rows, const catalog::Catalog& catalog) {
  std::vector<std::optional<double>> errs;
  for (const Subject& s : resolve(rows, catalog)) {
    const Prediction p = predict(s);
    errs.push_back(p.value && s.row->value != 0 ? std::optional<double>(std::fabs(*p.value / s.row->value - 1.0))
                                                : std::nullopt);
  }
  return errs;
}

// Median of the errors there are.
double median_of(const std::vector<std::optional<double>>& errs) {
  std::vector<double> present;
  for (const auto& e : errs) {
    if (e) {
      present.push_back(*e);
    }
  }
  return summarize("", present).median;
}

}  // namespace

// Least squares minimizes squared relative error; the project judges median |error|. A fit that
// raises the median |error| of its own rows is dropped, and the prior kept.
// Judges the GPU-level fits first (with no architecture fits present, which would otherwise stand
// in for a dropped GPU fit), then the architecture fits over the kept GPU fits.
void keep_only_improvements(const std::vector<const Measurement*>& rows, const catalog::Catalog& catalog,
                            CalibrationResult& r) {
  std::vector<FittedParam> gpu_params, arch_params;
  for (auto& p : r.params) {
    (p.scope.rfind("arch:", 0) == 0 ? arch_params : gpu_params).push_back(std::move(p));
  }
  auto judge = [&](std::vector<FittedParam>& params, const std::vector<FittedParam>& fixed) {
    // With every fit: the same catalog for each parameter until one is dropped, so each row's
    // error under it is computed once (a row resolves and predicts alone: the same error whichever
    // rows it is judged with).
    std::optional<catalog::Catalog> with_all;
    std::map<const Measurement*, std::optional<double>> with_errors;
    for (std::size_t i = 0; i < params.size();) {
      std::vector<const Measurement*> used;
      for (const Measurement* m : rows) {
        if (std::find(params[i].rows.begin(), params[i].rows.end(), m->id) != params[i].rows.end() &&
            std::find(params[i].files.begin(), params[i].files.end(), m->file) != params[i].files.end()) {
          used.push_back(m);
        }
      }
      std::vector<FittedParam> with = fixed;
      with.insert(with.end(), params.begin(), params.end());
      std::vector<FittedParam> without = with;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(fixed.size() + i));
      if (!with_all) {
        with_all.emplace(with_overlay(catalog, with));
      }
      std::vector<Measurement> unjudged;
      for (const Measurement* m : used) {
        if (with_errors.count(m) == 0) {
          unjudged.push_back(*m);
        }
      }
      if (!unjudged.empty()) {
        const std::vector<std::optional<double>> errs = row_errors(unjudged, *with_all);
        std::size_t k = 0;
        for (const Measurement* m : used) {
          if (with_errors.count(m) == 0) {
            with_errors.emplace(m, errs[k++]);
          }
        }
      }
      std::vector<std::optional<double>> with_errs;
      std::vector<Measurement> used_rows;
      for (const Measurement* m : used) {
        with_errs.push_back(with_errors.at(m));
        used_rows.push_back(*m);
      }
      const double with_err = median_of(with_errs);
      const double without_err = median_of(row_errors(used_rows, with_overlay(catalog, without)));
      if (without_err + 1e-12 < with_err) {
        const FittedParam& p = params[i];
        r.kept.push_back(
            strfmt("%s %s.%s: the fit %.4g raised the median |error| of its %zu row(s) from %.1f %% to "
                   "%.1f %% (kept %.4g)",
                   p.scope.c_str(), p.table.c_str(), p.key.c_str(), p.is_time ? p.value * 1e6 : p.value, used.size(),
                   100 * without_err, 100 * with_err, p.is_time ? p.prior * 1e6 : p.prior));
        params.erase(params.begin() + static_cast<std::ptrdiff_t>(i));
        with_all.reset();  // the fits changed
        with_errors.clear();
      } else {
        ++i;
      }
    }
  };
  judge(gpu_params, {});
  judge(arch_params, gpu_params);
  r.params = std::move(gpu_params);
  r.params.insert(r.params.end(), arch_params.begin(), arch_params.end());
}

}  // namespace gpusim::validation
