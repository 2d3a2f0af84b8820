// Predicted against measured, summarized per role, category and GPU (median, 90th percentile and
// worst |error|).
#include <algorithm>
#include <cmath>
#include <map>

#include "gpusim/validation.hpp"

namespace gpusim::validation {

std::optional<double> RowResult::error() const {
  if (!prediction.value || measurement->value == 0) {
    return std::nullopt;
  }
  return (*prediction.value - measurement->value) / measurement->value;
}

std::optional<bool> RowResult::inside_band() const {
  if (!prediction.band) {
    return std::nullopt;
  }
  return measurement->value >= prediction.band->low && measurement->value <= prediction.band->high;
}

Coverage summarize_coverage(const std::string& group, const std::vector<BandCheck>& rows) {
  Coverage c;
  c.group = group;
  std::vector<double> half;
  for (const BandCheck& r : rows) {
    ++c.rows;
    c.inside += r.measured >= r.band.low && r.measured <= r.band.high ? 1 : 0;
    if (r.predicted != 0) {
      half.push_back(0.5 * (r.band.high - r.band.low) / std::fabs(r.predicted));
    }
  }
  c.share = c.rows > 0 ? static_cast<double>(c.inside) / c.rows : 0.0;
  c.median_half_width = summarize(group, half).median;
  return c;
}

Summary summarize(const std::string& group, std::vector<double> errs) {
  Summary s;
  s.group = group;
  s.count = static_cast<int>(errs.size());
  if (errs.empty()) {
    return s;
  }
  std::sort(errs.begin(), errs.end());
  const std::size_t n = errs.size();
  s.median = n % 2 == 1 ? errs[n / 2] : 0.5 * (errs[n / 2 - 1] + errs[n / 2]);
  // nearest rank: the smallest value with at least 90 % of the values at or below it
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(n)));
  s.p90 = errs[std::max<std::size_t>(rank, 1) - 1];
  s.worst = errs.back();
  return s;
}

Summary summarize_signed(const std::string& group, const std::vector<double>& errors) {
  std::vector<double> abs;
  double sum = 0;
  for (const double e : errors) {
    abs.push_back(std::fabs(e));
    sum += e;
  }
  Summary s = summarize(group, abs);
  s.mean = errors.empty() ? 0.0 : sum / static_cast<double>(errors.size());
  return s;
}

RowResult row_result(const Subject& s, Prediction p) {
  RowResult rr{s.row, std::move(p), RowKind::kMicrobenchmark, std::nullopt, {}, false, {}};
  if (s.scenario) {
    rr.kind = s.scenario->job.training ? RowKind::kTraining : RowKind::kServing;
    rr.segment = s.scenario->system.gpu.segment;
    rr.runtime = s.scenario->runtime.id;
    rr.runtime_named = !s.scenario->unset.runtime;
  } else if (s.system) {
    rr.segment = s.system->gpu.segment;
  }
  return rr;
}

void summarize_rows(ValidationReport& r) {
  std::map<std::string, std::vector<double>> by_cat[2];
  std::map<std::string, std::vector<double>> by_gpu;
  std::vector<double> all;
  std::vector<double> by_role[2];
  std::map<std::string, std::vector<double>> by_runtime;
  std::map<std::string, std::vector<double>> by_gpu_e2e;
  std::map<RowKind, std::vector<double>> by_kind;
  std::map<hardware::Segment, std::vector<double>> by_segment;
  std::map<std::string, std::vector<BandCheck>> bands_by_cat;
  std::vector<BandCheck> bands;
  std::map<std::string, std::vector<BandCheck>> check_bands_by_cat;
  std::vector<BandCheck> check_bands;
  for (const RowResult& rr : r.rows) {
    const Measurement& m = *rr.measurement;
    const auto e = rr.error();
    if (!e || !rr.not_held_out.empty()) {
      continue;
    }
    // Held-out rows: the check rows, or every row once each was predicted without its publication.
    const bool evidence = r.cross_validated || r.all_roles || m.role == Role::kCheck;
    if (rr.prediction.band) {
      const BandCheck b{m.value, *rr.prediction.value, *rr.prediction.band};
      if (evidence) {
        bands_by_cat[category_of(m)].push_back(b);
        bands.push_back(b);
      }
      if (m.role == Role::kCheck) {
        check_bands_by_cat[category_of(m)].push_back(b);
        check_bands.push_back(b);
      }
    }
    if (evidence && !rr.runtime.empty()) {
      by_runtime[rr.runtime].push_back(*e);
      by_gpu_e2e[m.gpu].push_back(*e);
    }
    if (evidence) {
      by_kind[rr.kind].push_back(*e);
      if (rr.segment) {
        by_segment[*rr.segment].push_back(*e);
      }
    }
    const auto role = static_cast<std::size_t>(m.role);
    by_cat[role][category_of(m)].push_back(std::fabs(*e));
    by_gpu[m.gpu].push_back(std::fabs(*e));
    by_role[role].push_back(std::fabs(*e));
    all.push_back(std::fabs(*e));
  }
  for (std::size_t role = 0; role < 2; ++role) {
    r.by_category[role].clear();
    for (auto& [k, v] : by_cat[role]) {
      r.by_category[role].push_back(summarize(k, v));
    }
    r.by_role[role] = summarize(to_string(static_cast<Role>(role)), by_role[role]);
  }
  r.by_gpu.clear();
  for (auto& [k, v] : by_gpu) {
    r.by_gpu.push_back(summarize(k, v));
  }
  r.by_runtime.clear();
  for (auto& [k, v] : by_runtime) {
    r.by_runtime.push_back(summarize_signed(k, v));
  }
  r.by_gpu_end_to_end.clear();
  for (auto& [k, v] : by_gpu_e2e) {
    r.by_gpu_end_to_end.push_back(summarize_signed(k, v));
  }
  r.by_kind.clear();
  for (auto& [k, v] : by_kind) {
    r.by_kind.push_back(summarize_signed(to_string(k), v));
  }
  r.by_segment.clear();
  for (auto& [k, v] : by_segment) {
    r.by_segment.push_back(summarize_signed(base::name_in(hardware::kSegmentNames, k), v));
  }
  r.all = summarize("all", all);
  r.coverage_by_category.clear();
  for (const auto& [k, v] : bands_by_cat) {
    r.coverage_by_category.push_back(summarize_coverage(k, v));
  }
  r.coverage = summarize_coverage("all", bands);
  r.check_coverage_by_category.clear();
  for (const auto& [k, v] : check_bands_by_cat) {
    r.check_coverage_by_category.push_back(summarize_coverage(k, v));
  }
  r.check_coverage = summarize_coverage("all", check_bands);
}

ValidationReport validate(const std::vector<Subject>& subjects, bool bands_too) {
  ValidationReport r;
  std::vector<Prediction> predictions = predict_all(subjects, bands_too);
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    r.rows.push_back(row_result(subjects[i], std::move(predictions[i])));
    // Bands with model-error quantiles from the shipped file: taken from these rows' own errors.
    const auto& sc = subjects[i].scenario;
    if (r.rows.back().prediction.band && sc && sc->model_error && !sc->model_error->groups.empty()) {
      r.band_basis = BandBasis::kInSample;
    }
  }
  summarize_rows(r);
  return r;
}

}  // namespace gpusim::validation
