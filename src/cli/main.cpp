// gpusim: analytical GPU performance and cost simulator. Maps errors to exit codes: 0 success,
// 1 internal error or a failed write (a full disk, a closed stdout), 2 bad input or usage (message on stderr, nothing
// on stdout), 3 a threshold exceeded (`validate --fail-above`).
#include <algorithm>
#include <boost/program_options/errors.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli.hpp"

namespace gpusim::cli {

Catalog load_catalog_with_env(const std::vector<std::string>& spec_dirs) {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("GPUSIM_SPECS"); env != nullptr && *env != '\0') {
    const std::string all(env);
    std::size_t start = 0;
    while (start <= all.size()) {
      const std::size_t end = all.find(':', start);
      const std::string dir = all.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!dir.empty()) {
        dirs.push_back(dir);
      }
      if (end == std::string::npos) {
        break;
      }
      start = end + 1;
    }
  }
  dirs.insert(dirs.end(), spec_dirs.begin(), spec_dirs.end());
  return load_catalog(dirs);
}

}  // namespace gpusim::cli

namespace {

constexpr const char* kUsage =
    "gpusim — analytical GPU performance and cost simulator\n"
    "\n"
    "usage:\n"
    "  gpusim init     training|serving [-o FILE]\n"
    "  gpusim estimate SCENARIO [--gpu ID] [--set KEY=VALUE]... [--format text|json|csv|html] [-o FILE]\n"
    "  gpusim compare  SCENARIO --gpus ID,ID,... [--format text|json|csv] [-o FILE] [--svg FILE]\n"
    "  gpusim compare  SCENARIO --systems [NODESx]GPUSxID,... [--objective time|cost] [--format text|json|csv]\n"
    "  gpusim sweep    SCENARIO --vary KEY=V1,V2,... [--format csv|json] [--shard I/N] [--svg FILE]\n"
    "  gpusim plan     SCENARIO [--top N] [--objective time|cost] [--max-gpus N] [--svg FILE]\n"
    "  gpusim breakeven SCENARIO [--svg FILE] [--format text|json]\n"
    "  gpusim roofline --gpu ID [SCENARIO] | --gpus ID,ID,... [--dtype D] [--svg FILE] [--format text|json]\n"
    "  gpusim validate MEASUREMENTS... [--role check|fit|all] [--format text|json|csv] [--fail-above PCT]\n"
    "  gpusim calibrate MEASUREMENTS... -o DIR\n"
    "  gpusim specs    list | show ID | check [FILES...]\n"
    "  gpusim model    import CONFIG.json [-o FILE]\n"
    "\n"
    "Every subcommand takes --specs DIR (also GPUSIM_SPECS=DIR[:DIR]) to add or override spec files,\n"
    "and --help for its own options. Formats: docs/scenarios.md (scenarios), docs/report.md (reports),\n"
    "docs/measurements.md (measurements), specs/README.md (spec files).\n"
    "Outputs (-o, --svg) follow symbolic links to the file they name, write devices and pipes in place,\n"
    "and never replace an input or another output; a file is written whole (renamed into place) or not\n"
    "at all (docs/report.md#output-files).\n"
    "Exit codes: 0 success, 1 internal error or a failed write, 2 bad input, 3 a threshold exceeded,\n"
    "4 a sweep with points that could not run (each row says why).\n";

// Runs one command; returns its exit code.
int run_command(const std::string& cmd, const std::vector<std::string>& args) {
  using gpusim::cli::kBadInput;
  using gpusim::cli::kInternalError;
  try {
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      gpusim::cli::write_stdout(kUsage);
      return 0;
    }
    if (cmd == "--version") {
      gpusim::cli::write_stdout("gpusim 0.2.0\n");
      return 0;
    }
    using Command = int (*)(const std::vector<std::string>&);
    static const std::pair<const char*, Command> kCommands[] = {
        {"estimate", gpusim::cli::run_estimate}, {"compare", gpusim::cli::run_compare},
        {"sweep", gpusim::cli::run_sweep},       {"plan", gpusim::cli::run_plan},
        {"roofline", gpusim::cli::run_roofline}, {"breakeven", gpusim::cli::run_breakeven},
        {"validate", gpusim::cli::run_validate}, {"calibrate", gpusim::cli::run_calibrate},
        {"specs", gpusim::cli::run_specs},       {"init", gpusim::cli::run_init},
        {"model", gpusim::cli::run_model},
    };
    for (const auto& [name, command] : kCommands) {
      if (cmd == name) {
        return command(args);
      }
    }
    std::vector<std::string> names;
    for (const auto& [name, command] : kCommands) {
      names.emplace_back(name);
    }
    const std::string hint = gpusim::base::did_you_mean(cmd, names);
    std::cerr << "gpusim: unknown command \"" << cmd << "\"" << (hint.empty() ? "" : " (" + hint + ")") << "\n\n"
              << kUsage;
    return kBadInput;
  } catch (const gpusim::InputError& e) {
    for (const auto& d : e.diagnostics()) {
      std::cerr << d.format() << '\n';
    }
    return kBadInput;
  } catch (const gpusim::cli::IoError& e) {
    std::cerr << "gpusim " << cmd << ": " << e.what() << '\n';
    return kInternalError;
  } catch (const gpusim::cli::UsageError& e) {
    std::cerr << "gpusim " << cmd << ": " << e.what() << '\n';
    return kBadInput;
  } catch (const gpusim::app::RequestError& e) {
    // The request's field as the command line spells its option.
    std::string field = e.option() == "sets" ? std::string("set") : e.option();
    std::replace(field.begin(), field.end(), '_', '-');
    // A positional argument's field is named as it is, with no option to name.
    const bool positional = field == "inputs" || field == "kind" || field == "scenario" || field == "config";
    const std::string option = field.empty() ? "" : (positional ? "" : "--") + field + " ";
    std::cerr << "gpusim " << cmd << ": " << option << e.problem() << " (see gpusim " << cmd << " --help)\n";
    return kBadInput;
  } catch (const boost::program_options::error& e) {
    std::cerr << "gpusim " << cmd << ": " << e.what() << '\n';
    return kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "gpusim " << cmd << ": internal error: " << e.what() << '\n';
    return kInternalError;
  }
}

}  // namespace

int main(int argc, char** argv) {
  gpusim::cli::hold_standard_descriptors();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;  // a usage error: on stderr, like every other
    return gpusim::cli::kBadInput;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  const int code = run_command(cmd, args);
  // Every write was checked as it was made; closing shows an error the system delayed.
  if (!gpusim::cli::close_stdout()) {
    std::cerr << "gpusim " << cmd << ": <stdout>: cannot write to standard output: " << std::strerror(errno) << '\n';
    return code == gpusim::cli::kOk ? gpusim::cli::kInternalError : code;
  }
  return code;
}
