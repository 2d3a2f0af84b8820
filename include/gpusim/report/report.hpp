// Reporters: format an Estimate, never compute physics (DESIGN §1). JSON keys follow the
// DESIGN §5 contract; text is the same content as an aligned table; CSV is one row per estimate.
#pragma once

#include <string>
#include <vector>

#include "gpusim/model/estimate.hpp"

namespace gpusim {

std::string report_json(const Estimate& e);
std::string report_text(const Estimate& e);
std::string report_csv(const std::vector<Estimate>& rows);

}  // namespace gpusim
