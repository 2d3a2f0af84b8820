// Predicted against measured (DESIGN §8, `gpusim validate`): each measurement is predicted by
// the same models `estimate` uses, under the measurement's conditions, and summarized per
// category and per GPU (median, 90th percentile and worst |error|).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusim/spec/catalog.hpp"
#include "gpusim/validate/measurement.hpp"

namespace gpusim {

struct Prediction {
  std::optional<double> value;  // in the measurement's units (SI, or cycles)
  std::string reason;           // why there is no prediction
};

// Predicts one measurement. Never throws for a row the model cannot predict: it says why.
Prediction predict(const Measurement& m, const Catalog& catalog);

struct RowResult {
  const Measurement* measurement = nullptr;
  Prediction prediction;
  [[nodiscard]] std::optional<double> error() const;  // (predicted - measured) / measured
};

struct Summary {
  std::string group;
  int count = 0;
  double median = 0;  // of |error|
  double p90 = 0;
  double worst = 0;
};

struct ValidationReport {
  std::vector<RowResult> rows;
  std::vector<Summary> by_category;
  std::vector<Summary> by_gpu;
  Summary all;
};

// The report points into `rows`: keep them alive while it is used.
ValidationReport validate(const std::vector<Measurement>& rows, const Catalog& catalog);
// Median, 90th percentile (nearest rank) and maximum of |errors|; zeros for an empty list.
Summary summarize(const std::string& group, std::vector<double> abs_errors);

std::string validation_text(const ValidationReport& r);
std::string validation_json(const ValidationReport& r);
std::string validation_csv(const ValidationReport& r);

}  // namespace gpusim
