// Private to src/cli/: option parsing shared by the subcommands (boost::program_options).
#pragma once

#include <boost/program_options.hpp>
#include <iostream>
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

// Parses; returns false when --help was printed.
inline bool parse(const std::vector<std::string>& args, const po::options_description& d,
                  const po::positional_options_description& pos, po::variables_map& vm, const char* usage) {
  po::store(po::command_line_parser(args).options(d).positional(pos).run(), vm);
  if (vm.count("help") != 0U) {
    std::cout << usage << "\n" << d;
    return false;
  }
  po::notify(vm);
  return true;
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
