// The command line: parsing options, calling the library through its public face, writing what it
// returns. Each subcommand returns its exit code; errors propagate as exceptions that main maps
// to exit codes.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli/output.hpp"
#include "gpusim/gpusim.hpp"

namespace gpusim::cli {

// Exit codes: 0 success, 1 internal error, 2 bad input (or usage), 3 a threshold exceeded.
// 4: a sweep wrote every row, but some points could not run (each row says why).
enum ExitCode : int { kOk = 0, kInternalError = 1, kBadInput = 2, kThresholdExceeded = 3, kSomePointsFailed = 4 };

// The device failed the write (no space, an I/O error): exit 1, unlike a bad path (exit 2).
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The catalog with GPUSIM_SPECS directories (colon-separated) and then --specs directories.
Catalog load_catalog_with_env(const std::vector<std::string>& spec_dirs);

// write_outputs, write_stdout: cli/output.hpp.

int run_estimate(const std::vector<std::string>& args);
int run_compare(const std::vector<std::string>& args);
int run_specs(const std::vector<std::string>& args);
int run_validate(const std::vector<std::string>& args);
int run_calibrate(const std::vector<std::string>& args);
int run_roofline(const std::vector<std::string>& args);
int run_plan(const std::vector<std::string>& args);
int run_sweep(const std::vector<std::string>& args);
int run_breakeven(const std::vector<std::string>& args);
int run_init(const std::vector<std::string>& args);
int run_model(const std::vector<std::string>& args);

}  // namespace gpusim::cli
