// Private to src/report/: the pieces of the validation report (validation_report.cpp) that the
// cross-validation and calibration reports (cross_validation_report.cpp) print as well.
#pragma once

#include <string>

#include "gpusim/report.hpp"
#include "report/json_writer.hpp"

namespace gpusim::report::validation_parts {

// A measured or predicted figure in the units people read it in.
std::string show(const validation::Measurement& m, double v);
// The summaries per GPU, category and role; the bands' coverage; the model's error quantiles.
std::string summaries_text(const validation::ValidationReport& r);
std::string coverage_text(const validation::ValidationReport& r);
std::string model_error_text(const workload::ModelError& me);
// The validation report's fields into an open JSON object.
void write_validation(JsonWriter& w, const validation::ValidationReport& r);
// The CSV header and one row of the validation CSV.
extern const char* const kCsvHeader;
std::string csv_row(const validation::RowResult& row);

}  // namespace gpusim::report::validation_parts
