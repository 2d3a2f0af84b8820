// gpusim: analytical GPU performance and cost simulator. Maps errors to exit codes:
// 0 success, 2 bad input or usage (message on stderr, nothing on stdout), 1 internal error.
#include <boost/program_options/errors.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <utility>

#include "cli/cli.hpp"
#include "gpusim/spec/diagnostics.hpp"

namespace gpusim::cli {

Catalog load_catalog(const std::vector<std::string>& spec_dirs) {
  Catalog c = Catalog::builtin();
  if (const char* env = std::getenv("GPUSIM_SPECS"); env != nullptr && *env != '\0') {
    std::string all(env);
    std::size_t start = 0;
    while (start <= all.size()) {
      const std::size_t end = all.find(':', start);
      const std::string dir = all.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!dir.empty()) {
        c.add_directory(dir);
      }
      if (end == std::string::npos) {
        break;
      }
      start = end + 1;
    }
  }
  for (const auto& d : spec_dirs) {
    c.add_directory(d);
  }
  return c;
}

void emit(const std::string& text, const std::string& out_file) {
  if (out_file.empty() || out_file == "-") {
    std::cout << text;
    return;
  }
  std::ofstream out(out_file, std::ios::binary);
  if (!out) {
    throw InputError({Diagnostic{SourcePos{out_file}, "-o", "cannot open for writing"}});
  }
  out << text;
}

}  // namespace gpusim::cli

namespace {

constexpr const char* kUsage =
    "gpusim — analytical GPU performance and cost simulator\n"
    "\n"
    "usage:\n"
    "  gpusim estimate SCENARIO [--gpu ID] [--set KEY=VALUE]... [--format text|json|csv] [-o FILE]\n"
    "  gpusim compare  SCENARIO --gpus ID,ID,... [--format text|json|csv] [-o FILE]\n"
    "  gpusim sweep    SCENARIO --vary KEY=V1,V2,... [--format csv|json] [--shard I/N]\n"
    "  gpusim plan     SCENARIO [--top N] [--objective time|cost] [--max-gpus N]\n"
    "  gpusim breakeven SCENARIO [--svg FILE] [--format text|json]\n"
    "  gpusim roofline --gpu ID [SCENARIO] [--dtype D] [--svg FILE] [--format text|json]\n"
    "  gpusim validate MEASUREMENTS... [--format text|json|csv] [--fail-above PCT]\n"
    "  gpusim calibrate MEASUREMENTS... -o DIR\n"
    "  gpusim specs    list | show ID | check [FILES...]\n"
    "\n"
    "Every subcommand takes --specs DIR (also GPUSIM_SPECS=DIR[:DIR]) to add or override spec files,\n"
    "and --help for its own options. Exit codes: 0 success, 2 bad input, 1 internal error.\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "gpusim 0.1.0\n";
    return 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  try {
    // The closed set of subcommands (DESIGN §7).
    using Command = int (*)(const std::vector<std::string>&);
    static const std::pair<const char*, Command> kCommands[] = {
        {"estimate", gpusim::cli::run_estimate}, {"compare", gpusim::cli::run_compare},
        {"sweep", gpusim::cli::run_sweep},       {"plan", gpusim::cli::run_plan},
        {"roofline", gpusim::cli::run_roofline}, {"breakeven", gpusim::cli::run_breakeven},
        {"validate", gpusim::cli::run_validate}, {"calibrate", gpusim::cli::run_calibrate},
        {"specs", gpusim::cli::run_specs},
    };
    for (const auto& [name, run] : kCommands) {
      if (cmd == name) {
        return run(args);
      }
    }
    std::cerr << "gpusim: unknown command \"" << cmd << "\"\n\n" << kUsage;
    return 2;
  } catch (const gpusim::InputError& e) {
    for (const auto& d : e.diagnostics()) {
      std::cerr << d.format() << '\n';
    }
    return 2;
  } catch (const gpusim::cli::UsageError& e) {
    std::cerr << "gpusim " << cmd << ": " << e.what() << '\n';
    return 2;
  } catch (const boost::program_options::error& e) {
    std::cerr << "gpusim " << cmd << ": " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gpusim " << cmd << ": internal error: " << e.what() << '\n';
    return 1;
  }
}
