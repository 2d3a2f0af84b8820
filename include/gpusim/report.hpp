// Reports: the answers in words, tables, JSON, CSV and SVG. Reporters format what the earlier
// stages computed and never compute physics; units are converted to what people read only here
// (through the units stage's named conversions). JSON keys follow docs/report.md; a number that is
// not finite is written as null, never as NaN.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusim/answer.hpp"
#include "gpusim/explain.hpp"
#include "gpusim/search.hpp"
#include "gpusim/validation.hpp"

namespace gpusim::report {

// ---------------------------------------------------------------- one estimate
std::string estimate_text(const answer::Estimate& e);
std::string estimate_json(const answer::Estimate& e);
// One header line and one row per estimate.
std::string estimate_csv(const std::vector<answer::Estimate>& rows);
// The bottleneck in a sentence, and each piece of advice in one.
std::string bottleneck_reason(const answer::Estimate& e);
std::string advice_text(const answer::Estimate& e, const explain::Advice& a);

// ---------------------------------------------------------------- roofline
std::string roofline_text(const explain::Roofline& r);
std::string roofline_json(const explain::Roofline& r);
// A self-contained SVG (log-log axes, roofs, ridge point, ops sized by time share).
std::string roofline_svg(const explain::Roofline& r);

// ---------------------------------------------------------------- break-even
// Owning against renting across utilization (the curve computed by cost::breakeven_curve).
struct Breakeven {
  std::string scenario;
  cost::CostInputs inputs;
  std::string cloud_gpu;
  double utilization = 0;  // the scenario's
  std::vector<cost::BreakevenPoint> curve;
  std::optional<double> crossover;
};
Breakeven breakeven_of(const answer::Estimate& e);
std::string breakeven_text(const Breakeven& b);
std::string breakeven_json(const Breakeven& b);
std::string breakeven_svg(const Breakeven& b);

// ---------------------------------------------------------------- search
std::string plan_text(const scenario::Scenario& sc, const search::PlanOptions& o, const search::PlanResult& r,
                      double peak_rss_mb);
std::string plan_json(const scenario::Scenario& sc, const search::PlanResult& r);
// The serving plan (serving_plan_report.cpp): best deployments meeting the SLO, the frontier of
// tokens/s per GPU against tokens/s per user, and its SVG.
std::string plan_serving_text(const scenario::Scenario& sc, const search::PlanOptions& o,
                              const search::ServingPlanResult& r);
std::string plan_serving_json(const scenario::Scenario& sc, const search::ServingPlanResult& r);
std::string plan_serving_svg(const scenario::Scenario& sc, const search::ServingPlanResult& r);
std::string compare_text(const std::string& title, const std::vector<search::CompareRow>& rows);
std::string compare_json(const std::vector<search::CompareRow>& rows);
std::string compare_csv(const std::vector<search::CompareRow>& rows);
std::string sweep_csv(const std::vector<search::Axis>& axes, const std::vector<search::SweepPoint>& points);
std::string sweep_json(const std::vector<search::Axis>& axes, const std::vector<search::SweepPoint>& points);

// ---------------------------------------------------------------- catalog
// GPUs with their key figures, then the link and model ids.
std::string catalog_text(const catalog::Catalog& c);

// ---------------------------------------------------------------- validation
std::string validation_text(const validation::ValidationReport& r);
std::string validation_json(const validation::ValidationReport& r);
std::string validation_csv(const validation::ValidationReport& r);
std::string calibration_text(const validation::CalibrationResult& fit, const validation::ValidationReport& before,
                             const validation::ValidationReport& after, const std::string& out_dir);

}  // namespace gpusim::report
