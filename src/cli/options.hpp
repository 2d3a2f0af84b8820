// Private to src/cli/: option parsing shared by the subcommands (boost::program_options).
#pragma once

#include <boost/program_options.hpp>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"

namespace gpusim::cli {

namespace po = boost::program_options;

struct Common {
  std::vector<std::string> specs;
  std::string format = "text";
  std::string out;
};

inline void add_common(po::options_description& d, Common& c, bool with_format) {
  d.add_options()("help,h", "show this help")(
      "specs", po::value<std::vector<std::string>>(&c.specs)->composing(),
      "directory of spec files that add to or override the built-in catalog (gpus/, links/, models/, arch/, "
      "runtimes/, comm/)");
  if (with_format) {
    d.add_options()("format,f", po::value<std::string>(&c.format)->default_value("text"),
                    "output format: the usage line above lists those of this command")(
        "output,o", po::value<std::string>(&c.out), "write the report to FILE instead of stdout");
  }
}

// The files and folders a command reads, as its options name them: the scenario, measurement
// files, `model import`'s config, and the spec folders of a command that loads the catalog.
inline std::vector<std::string> inputs_of(const po::options_description& d, const po::variables_map& vm) {
  std::vector<std::string> inputs;
  for (const char* key : {"scenario", "inputs", "args"}) {
    if (vm.count(key) == 0U) {
      continue;
    }
    if (const auto* one = boost::any_cast<std::string>(&vm[key].value())) {
      inputs.push_back(*one);
    } else if (const auto* many = boost::any_cast<std::vector<std::string>>(&vm[key].value())) {
      inputs.insert(inputs.end(), many->begin(), many->end());
    }
  }
  const bool loads_specs = d.find_nothrow("scenario", false) != nullptr || d.find_nothrow("inputs", false) != nullptr;
  if (loads_specs && vm.count("specs") != 0U) {
    const auto& dirs = vm["specs"].as<std::vector<std::string>>();
    inputs.insert(inputs.end(), dirs.begin(), dirs.end());
  }
  if (const char* env = std::getenv("GPUSIM_SPECS"); loads_specs && env != nullptr) {
    std::stringstream all(env);
    for (std::string dir; std::getline(all, dir, ':');) {
      inputs.push_back(dir);
    }
  }
  return inputs;
}

// Parses; returns false when --help was printed.
enum class OutputIs { kFile, kDirectory };

inline bool parse(const std::vector<std::string>& args, const po::options_description& d,
                  const po::positional_options_description& pos, po::variables_map& vm, const char* usage,
                  OutputIs output = OutputIs::kFile) {
  po::store(po::command_line_parser(args).options(d).positional(pos).run(), vm);
  if (vm.count("help") != 0U) {
    std::ostringstream help;
    help << usage << "\n" << d;
    write_stdout(help.str());
    return false;
  }
  po::notify(vm);
  // Output paths are checked before any work, so that a long plan or sweep does not end in a bad
  // path (cli/output.hpp: an existing directory to write in, no output over an input or another
  // output). calibrate's -o is a directory it creates; standard output is the report's by default.
  std::vector<Destination> destinations;
  for (const char* key : {"output", "svg"}) {
    if (vm.count(key) != 0U && !(std::string(key) == "output" && output == OutputIs::kDirectory)) {
      destinations.push_back({std::string("--") + key, vm[key].as<std::string>()});
    }
  }
  if (d.find_nothrow("output", false) == nullptr || output == OutputIs::kDirectory || vm.count("output") == 0U) {
    // the report's default
    destinations.push_back({"standard output", ""});
  }
  check_destinations(destinations, inputs_of(d, vm));
  return true;
}

// --gpu, when given, names a GPU: an empty id is refused, never taken as "not given".
inline void check_gpu_option(const po::variables_map& vm) {
  if (vm.count("gpu") != 0U && vm["gpu"].as<std::string>().empty()) {
    throw UsageError("--gpu needs a GPU id, got an empty string (gpusim specs list shows the ids)");
  }
}

// The ids of a comma-separated --gpus list, each one non-empty ("a,,b" and "a," are refused).
inline std::vector<std::string> gpu_list(const std::string& list) {
  std::vector<std::string> ids;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string id = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (id.empty()) {
      throw UsageError("--gpus \"" + list + "\": GPU id " + std::to_string(ids.size() + 1) +
                       " is empty (expected ID,ID,... without empty entries)");
    }
    ids.push_back(id);
    if (comma == std::string::npos) {
      return ids;
    }
    start = comma + 1;
  }
}

// `f` must be one of `allowed`.
inline void check_format(const std::string& f, std::initializer_list<const char*> allowed = {"text", "json", "csv"}) {
  std::string list;
  for (const char* a : allowed) {
    if (f == a) {
      return;
    }
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  throw UsageError("--format must be one of " + list + ", got \"" + f + "\"");
}

}  // namespace gpusim::cli
