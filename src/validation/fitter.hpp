// Private to src/validation/: the least-squares pieces calibration (calibrate.cpp) and its
// collective fit (collective_fit.cpp) share: one equation of a fit, the solver, and the Fitter that
// records each fitted value of one scope (a GPU or an architecture) or says why it kept the prior.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "validation/internal.hpp"

namespace gpusim::validation {

// One equation of a fit: coefficients times unknowns = rhs.
struct Equation {
  std::vector<double> a;
  double rhs = 0;
  const Measurement* row = nullptr;
};

// Least squares A x = b by column-pivoted QR; nullopt when A is rank deficient. With `relative`,
// each equation is divided by its right-hand side, so a 34 ms GEMM and an 18 us one weigh alike
// (errors are judged relative to the measurement everywhere else too).
inline std::optional<Eigen::VectorXd> solve(const std::vector<Equation>& eqs, std::size_t unknowns,
                                            bool relative = false) {
  if (eqs.size() < unknowns) {
    return std::nullopt;
  }
  Eigen::MatrixXd a(static_cast<Eigen::Index>(eqs.size()), static_cast<Eigen::Index>(unknowns));
  Eigen::VectorXd b(static_cast<Eigen::Index>(eqs.size()));
  for (std::size_t i = 0; i < eqs.size(); ++i) {
    const double w = relative && eqs[i].rhs != 0 ? 1.0 / eqs[i].rhs : 1.0;
    for (std::size_t j = 0; j < unknowns; ++j) {
      a(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = eqs[i].a[j] * w;
    }
    b(static_cast<Eigen::Index>(i)) = eqs[i].rhs * w;
  }
  // Scale columns so a time column in microseconds and one in seconds are conditioned alike.
  Eigen::VectorXd scale = a.colwise().norm().transpose();
  for (Eigen::Index j = 0; j < scale.size(); ++j) {
    if (scale(j) == 0) {
      return std::nullopt;
    }
    a.col(j) /= scale(j);
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  qr.setThreshold(1e-10);
  if (qr.rank() < static_cast<Eigen::Index>(unknowns)) {
    return std::nullopt;
  }
  Eigen::VectorXd x = qr.solve(b);
  return Eigen::VectorXd(x.cwiseQuotient(scale));
}

struct Fitter {
  CalibrationResult& out;
  std::string scope;
  std::vector<FittedParam> carry;  // values of the previous round of an alternating fit

  // Records a fitted value, or keeps the prior and says why.
  void record(const std::string& table, const std::string& key, double prior, std::optional<double> v,
              const std::vector<Equation>& eqs, double lo, double hi, bool is_time, const std::string& why_missing) {
    if (eqs.empty()) {
      return;
    }
    if (!v || !std::isfinite(*v) || *v <= lo || *v > hi) {
      out.kept.push_back(base::strfmt("%s %s.%s: %s (kept %.4g)", scope.c_str(), table.c_str(), key.c_str(),
                                      v && std::isfinite(*v)
                                          ? base::strfmt("fit %.4g is outside (%g, %g]", *v, lo, hi).c_str()
                                          : why_missing.c_str(),
                                      prior));
      return;
    }
    FittedParam p{scope, table, key, prior, *v, is_time, {}, {}};
    std::set<std::string> files;
    for (const auto& e : eqs) {
      p.rows.push_back(e.row->id);
      files.insert(e.row->file);
    }
    p.files.assign(files.begin(), files.end());
    out.params.push_back(std::move(p));
  }

  void ratio(const std::string& key, const std::vector<Equation>& eqs, double prior, double hi) {
    const auto x = solve(eqs, 1);
    record("efficiency", key, prior, x ? std::optional<double>((*x)(0)) : std::nullopt, eqs, 0, hi, false, "no rows");
  }

  // t = sum_j c_j / eta_j + o (one efficiency per column, the offset last): all of them when the
  // rows determine them, else the efficiencies with the offset fixed at its prior. Columns no row
  // uses are dropped. `offset_base` is subtracted from the fitted offset before it is recorded.
  void inverse_fit(const std::vector<std::string>& keys, const std::vector<double>& priors,
                   const std::string& offset_key, std::vector<Equation> eqs, double prior_offset, double offset_base,
                   double hi) {
    if (eqs.empty()) {
      return;
    }
    std::vector<std::size_t> cols;  // efficiency columns in use
    for (std::size_t j = 0; j < keys.size(); ++j) {
      if (std::any_of(eqs.begin(), eqs.end(), [j](const Equation& e) { return e.a[j] != 0; })) {
        cols.push_back(j);
      }
    }
    auto project = [&](bool with_offset) {
      std::vector<Equation> projected;
      for (const auto& e : eqs) {
        Equation p{{}, e.rhs, e.row};
        for (const std::size_t j : cols) {
          p.a.push_back(e.a[j]);
        }
        if (with_offset) {
          p.a.push_back(1.0);
        } else {
          p.rhs -= prior_offset;
        }
        projected.push_back(p);
      }
      return projected;
    };
    const auto with = project(true);
    auto x = solve(with, cols.size() + 1, true);
    bool offset_fitted = x && (*x)(static_cast<Eigen::Index>(cols.size())) >= offset_base;
    if (!offset_fitted) {
      out.kept.push_back(
          base::strfmt("%s efficiency.%s: %zu row(s) cannot separate it from the efficiencies (kept %.4g)",
                       scope.c_str(), offset_key.c_str(), eqs.size(), prior_offset - offset_base));
      x = solve(project(false), cols.size(), true);
    }
    for (std::size_t i = 0; i < cols.size(); ++i) {
      std::vector<Equation> used;
      for (const auto& e : eqs) {
        if (e.a[cols[i]] != 0) {
          used.push_back(e);
        }
      }
      std::optional<double> v;
      if (x) {
        v = 1.0 / (*x)(static_cast<Eigen::Index>(i));
      }
      record("efficiency", keys[cols[i]], priors[cols[i]], v, used, 0, hi, false, "rank-deficient rows");
    }
    if (offset_fitted) {
      record("efficiency", offset_key, prior_offset - offset_base,
             (*x)(static_cast<Eigen::Index>(cols.size())) - offset_base, eqs, -1e-300, 1.0, true, "");
    }
  }

  void fit(const std::vector<const Subject*>& rows);
  [[nodiscard]] hardware::GpuSpec with_fits(hardware::GpuSpec g) const;
  void fit_power_and_kernels(const std::vector<const Subject*>& rows, const hardware::GpuSpec& first);
  void fit_collectives(const std::vector<const Subject*>& rows, const hardware::Efficiency& prior);
};

}  // namespace gpusim::validation
