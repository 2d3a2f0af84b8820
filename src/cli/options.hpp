// Private to src/cli/: option parsing shared by the subcommands (boost::program_options).
#pragma once

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdlib>
#include <optional>
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
  try {
    po::store(po::command_line_parser(args).options(d).positional(pos).run(), vm);
  } catch (const po::unknown_option& e) {
    // The command's options closest to the one given ("--gpuu" -> "--gpu").
    std::vector<std::string> names;
    for (const auto& o : d.options()) {
      names.push_back("--" + o->long_name());
    }
    const std::string hint = base::did_you_mean(e.get_option_name(), names);
    throw UsageError(std::string(e.what()) + (hint.empty() ? "" : " (" + hint + ")"));
  }
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

// --gpu-variant memory_bandwidth=1.5,clock=0.9,pcie_gen=5: a GPU what-if (app::GpuVariant, whose
// check gives the ranges); a key twice, an unknown key or a value that is not a number is refused.
inline constexpr const char* kGpuVariantHelp =
    "a what-if of the GPU: KEY=VALUE,... with memory_bandwidth and clock (factors of the spec's DRAM bandwidth and SM "
    "clock) and pcie_gen (3 to 6)";
// A comma-separated KEY=NUMBER list ("training=13,serving=22"), in order; nullopt when an item has
// no "=" or its value is not a number (`bad_item` is that item).
inline std::optional<std::vector<std::pair<std::string, double>>> key_numbers(const std::string& list,
                                                                              std::string& bad_item) {
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t end = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, end - at);
    const std::size_t eq = item.find('=');
    std::size_t used = 0;
    double number = 0;
    try {
      number = eq == std::string::npos ? 0 : std::stod(item.substr(eq + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (eq == std::string::npos || used == 0 || used != item.size() - eq - 1) {
      bad_item = item;
      return std::nullopt;
    }
    out.emplace_back(item.substr(0, eq), number);
    at = end + 1;
  }
  return out;
}

inline app::GpuVariant gpu_variant_option(const std::string& list) {
  std::string bad;
  const auto items = key_numbers(list, bad);
  auto refuse = [](const std::string& item) {
    return UsageError(
        "--gpu-variant takes memory_bandwidth=FACTOR, clock=FACTOR and pcie_gen=3..6, each once, separated by "
        "commas; got \"" +
        item + "\"");
  };
  if (!items) {
    throw refuse(bad);
  }
  app::GpuVariant v;
  std::vector<std::string> seen;
  for (const auto& [key, number] : *items) {
    const bool known = key == "memory_bandwidth" || key == "clock" || key == "pcie_gen";
    const bool twice = std::find(seen.begin(), seen.end(), key) != seen.end();
    if (!known || twice || (key == "pcie_gen" && !(std::fabs(number) < 1000 && number == std::trunc(number)))) {
      throw refuse(key + "=" + base::strfmt("%g", number));
    }
    seen.push_back(key);
    if (key == "memory_bandwidth") {
      v.memory_bandwidth = number;
    } else if (key == "clock") {
      v.clock = number;
    } else {
      v.pcie_gen = static_cast<int>(number);
    }
  }
  return v;
}

// The ids of a comma-separated --gpus list, each one non-empty ("a,,b" and "a," are refused).
inline std::vector<std::string> gpu_list(const std::string& list, const char* option = "--gpus",
                                         const char* entry = "GPU id") {
  std::vector<std::string> ids;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string id = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (id.empty()) {
      throw UsageError(std::string(option) + " \"" + list + "\": " + entry + " " + std::to_string(ids.size() + 1) +
                       " is empty (expected a comma-separated list without empty entries)");
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
