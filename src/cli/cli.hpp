// Subcommands of the gpusim CLI. Each returns the process exit code; library errors propagate as
// exceptions and are mapped to exit codes by main (InputError and UsageError -> 2).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "gpusim/spec/catalog.hpp"

namespace gpusim::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The catalog with --specs directories and GPUSIM_SPECS applied.
Catalog load_catalog(const std::vector<std::string>& spec_dirs);
// Writes to -o FILE or stdout; called only once everything was computed (no partial output).
void emit(const std::string& text, const std::string& out_file);

int run_estimate(const std::vector<std::string>& args);
int run_compare(const std::vector<std::string>& args);
int run_specs(const std::vector<std::string>& args);
int run_validate(const std::vector<std::string>& args);
int run_calibrate(const std::vector<std::string>& args);
int run_roofline(const std::vector<std::string>& args);
int run_plan(const std::vector<std::string>& args);
int run_sweep(const std::vector<std::string>& args);
int run_breakeven(const std::vector<std::string>& args);

}  // namespace gpusim::cli
