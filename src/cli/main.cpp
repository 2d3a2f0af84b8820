// gpusim: analytical GPU performance and cost simulator. Maps errors to exit codes: 0 success,
// 1 internal error or a failed write (a full disk), 2 bad input or usage (message on stderr, nothing on stdout), 3 a
// threshold exceeded (`validate --fail-above`).
#include <boost/program_options/errors.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <utility>

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

namespace {
// The system's reason for a failed write ("No space left on device"), when it left one in errno.
std::string reason(int error) { return error == 0 ? std::string() : std::string(": ") + std::strerror(error); }

// A failed write is the device's fault (exit 1) or the path's (exit 2, bad input).
[[noreturn]] void fail_write(const std::string& where, const std::string& what, int error) {
  if (error == ENOSPC || error == EIO || error == EDQUOT || error == EFBIG) {
    throw IoError(where + ": " + what + reason(error));
  }
  throw InputError({Diagnostic{SourcePos{where}, "", what + reason(error)}});
}
}  // namespace

void write_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  namespace fs = std::filesystem;
  std::vector<std::pair<fs::path, fs::path>> staged;  // temporary, final
  auto discard = [&staged] {
    for (const auto& [tmp, final_path] : staged) {
      std::error_code ec;
      fs::remove(tmp, ec);
    }
  };
  const std::string* to_stdout = nullptr;
  std::vector<const std::pair<std::string, std::string>*> special;  // devices and pipes: written in place
  for (const auto& output : outputs) {
    const auto& [path, text] = output;
    if (path.empty() || path == "-") {
      to_stdout = &text;
      continue;
    }
    const fs::path final_path(path);
    std::error_code ec;
    if (fs::exists(final_path, ec) && !fs::is_regular_file(final_path, ec)) {
      special.push_back(&output);
      continue;
    }
    fs::path tmp = final_path;
    tmp += ".gpusim-partial";
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    out.close();
    const bool ok = !out.fail();
    const int error = errno;
    staged.emplace_back(tmp, final_path);
    if (!ok) {
      discard();
      fail_write(path, "cannot write the output file", error);
    }
  }
  for (const auto* output : special) {
    errno = 0;
    std::ofstream out(output->first, std::ios::binary);
    out << output->second;
    out.flush();
    out.close();
    if (out.fail()) {
      const int error = errno;
      discard();
      fail_write(output->first, "cannot write the output file", error);
    }
  }
  for (const auto& [tmp, final_path] : staged) {
    std::error_code ec;
    fs::rename(tmp, final_path, ec);
    if (ec) {
      discard();
      throw InputError(
          {Diagnostic{SourcePos{final_path.string()}, "", "cannot write the output file: " + ec.message()}});
    }
  }
  if (to_stdout != nullptr) {
    errno = 0;
    std::cout << *to_stdout << std::flush;
    if (!std::cout) {
      fail_write("<stdout>", "cannot write to standard output", errno);
    }
  }
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
    "Exit codes: 0 success, 1 internal error or a failed write, 2 bad input, 3 a threshold exceeded,\n"
    "4 a sweep with points that could not run (each row says why).\n";

}  // namespace

int main(int argc, char** argv) {
  using gpusim::cli::kBadInput;
  using gpusim::cli::kInternalError;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? kBadInput : 0;
  }
  if (args[0] == "--version") {
    std::cout << "gpusim 0.2.0\n";
    return 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  try {
    using Command = int (*)(const std::vector<std::string>&);
    static const std::pair<const char*, Command> kCommands[] = {
        {"estimate", gpusim::cli::run_estimate}, {"compare", gpusim::cli::run_compare},
        {"sweep", gpusim::cli::run_sweep},       {"plan", gpusim::cli::run_plan},
        {"roofline", gpusim::cli::run_roofline}, {"breakeven", gpusim::cli::run_breakeven},
        {"validate", gpusim::cli::run_validate}, {"calibrate", gpusim::cli::run_calibrate},
        {"specs", gpusim::cli::run_specs},       {"init", gpusim::cli::run_init},
        {"model", gpusim::cli::run_model},
    };
    for (const auto& [name, run] : kCommands) {
      if (cmd == name) {
        return run(args);
      }
    }
    std::cerr << "gpusim: unknown command \"" << cmd << "\"\n\n" << kUsage;
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
  } catch (const boost::program_options::error& e) {
    std::cerr << "gpusim " << cmd << ": " << e.what() << '\n';
    return kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "gpusim " << cmd << ": internal error: " << e.what() << '\n';
    return kInternalError;
  }
}
