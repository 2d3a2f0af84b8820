// Reporters: format an Estimate, never compute physics (DESIGN §1). JSON keys follow the
// DESIGN §5 contract; text is the same content as an aligned table; CSV is one row per estimate.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusim/model/estimate.hpp"
#include "gpusim/model/roofline.hpp"

namespace gpusim {

std::string report_json(const Estimate& e);
std::string report_text(const Estimate& e);
std::string report_csv(const std::vector<Estimate>& rows);

std::string roofline_text(const Roofline& r);
std::string roofline_json(const Roofline& r);
// A self-contained SVG (own writer: log-log axes, roofs, ridge point, ops sized by time share).
std::string roofline_svg(const Roofline& r);

// The numeric value of a JSON report key ("throughput.tokens_per_s_per_gpu"); nullopt when the
// key is absent, not numeric, or null for this estimate (inference keys of a training run).
std::optional<double> report_metric(const Estimate& e, std::string_view key);
// Whether `key` names a numeric key of the report (for validating measurement files).
bool is_report_metric(std::string_view key);

}  // namespace gpusim
