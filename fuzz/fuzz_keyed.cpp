// Structure-aware: each input is read as a list of edits to the values of keys the shipped
// scenarios use, so that every execution reaches the model rather than the TOML parser. Byte 0
// picks a shipped scenario; then each 4-byte group is one edit: two bytes pick a key among every
// key any shipped scenario sets (its value there is the starting point), one byte an operation and
// one byte its argument (scale a number by a power of two, nudge it, set a boundary value, take
// another scenario's value for the key, flip a flag). The edits go in as --set overrides.
#include <toml++/toml.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

#include "fuzz_common.hpp"

namespace {

using namespace gpusim;

std::string toml_text(const toml::node& n) {
  std::ostringstream os;
  if (n.is_string()) {
    os << toml::value<std::string>(*n.as_string());
  } else if (n.is_integer()) {
    os << n.as_integer()->get();
  } else if (n.is_floating_point()) {
    os << toml::value<double>(n.as_floating_point()->get());
  } else if (n.is_boolean()) {
    os << (n.as_boolean()->get() ? "true" : "false");
  } else {
    return {};
  }
  return os.str();
}

void collect(const toml::table& t, const std::string& prefix, std::map<std::string, std::vector<std::string>>& out) {
  for (const auto& [k, v] : t) {
    const std::string path = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const toml::table* sub = v.as_table()) {
      collect(*sub, path, out);
    } else if (std::string text = toml_text(v); !text.empty()) {
      out[path].push_back(text);
    }
  }
}

struct Corpus {
  std::vector<ParsedScenario> scenarios;
  std::vector<std::string> paths;
  std::vector<std::vector<std::string>> values;
};

const Corpus& corpus() {
  static const Corpus c = [] {
    Corpus c;
    std::map<std::string, std::vector<std::string>> seen;
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(GPUSIM_SOURCE_DIR "/scenarios")) {
      if (e.path().extension() == ".toml") {
        files.push_back(e.path().string());
      }
    }
    std::sort(files.begin(), files.end());  // a fixed order: an input replays
    for (const std::string& f : files) {
      try {
        c.scenarios.push_back(scenario::parse_scenario_file(f));
        collect(toml::parse_file(f), "", seen);
      } catch (const std::exception&) {
      }
    }
    for (auto& [path, v] : seen) {
      c.paths.push_back(path);
      c.values.push_back(v);
    }
    return c;
  }();
  return c;
}

// A number written so TOML reads it as a float.
std::string float_text(double x) {
  if (std::isnan(x)) {
    return "nan";
  }
  if (std::isinf(x)) {
    return x > 0 ? "inf" : "-inf";
  }
  std::ostringstream os;
  os.precision(17);
  os << x;
  std::string s = os.str();
  if (s.find_first_of(".eE") == std::string::npos) {
    s += ".0";
  }
  return s;
}

// The value an edit gives: `base` is the TOML text of a value the key takes in some scenario.
std::string edited(const std::string& base, const std::vector<std::string>& others, std::uint8_t op, std::uint8_t arg) {
  const int signed_arg = static_cast<int>(arg) - 128;
  switch (op % 6) {
    case 0:  // another value this key takes
      return others[arg % others.size()];
    case 1: {  // scale the leading number (of a number or of a quantity string) by 2^(arg/16)
      const bool quoted = !base.empty() && base.front() == '"';
      const std::string body = quoted ? base.substr(1, base.size() - 2) : base;
      std::size_t used = 0;
      double x = 0;
      try {
        x = std::stod(body, &used);
      } catch (const std::exception&) {
        return base;
      }
      const double y = x * std::exp2(signed_arg / 16.0);
      const bool integer = !quoted && body.find_first_of(".eE") == std::string::npos;
      const std::string number = integer ? std::to_string(static_cast<long long>(std::llround(y))) : float_text(y);
      return quoted ? "\"" + number + body.substr(used) + "\"" : number;
    }
    case 2:  // a small integer near zero
      return std::to_string(signed_arg % 9);
    case 3: {  // a boundary value
      static const char* const kEdges[] = {"0",       "-1",      "1",
                                           "0.0",     "1e308",   "1e-308",
                                           "nan",     "inf",     "9223372036854775807",
                                           "\"\"",    "\"0 B\"", "\"1e30 TB/s\"",
                                           "\"-5 W\""};
      return kEdges[arg % std::size(kEdges)];
    }
    case 4:  // a flag flipped, or the value as a string
      return base == "true" ? "false" : base == "false" ? "true" : "\"" + base + "\"";
    default:  // the same value: other edits alone
      return base;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Corpus& c = corpus();
  if (size == 0 || c.scenarios.empty() || c.paths.empty()) {
    return 0;
  }
  const ParsedScenario& base = c.scenarios[data[0] % c.scenarios.size()];
  std::vector<std::string> sets;
  for (std::size_t i = 1; i + 4 <= size && sets.size() < 6; i += 4) {
    const std::size_t key = (static_cast<std::size_t>(data[i]) << 8 | data[i + 1]) % c.paths.size();
    const std::vector<std::string>& values = c.values[key];
    sets.push_back(c.paths[key] + "=" + edited(values.front(), values, data[i + 2], data[i + 3]));
  }
  // GPUSIM_FUZZ_PRINT=1 shows what an input means (to replay a finding with gpusim estimate --set).
  if (std::getenv("GPUSIM_FUZZ_PRINT") != nullptr) {
    std::fprintf(stderr, "scenario %s\n", base.path().c_str());
    for (const std::string& s : sets) {
      std::fprintf(stderr, "  --set '%s'\n", s.c_str());
    }
  }
  try {
    const Scenario sc = scenario::resolve(fuzz::catalog(), base, scenario::parse_overrides(sets));
    fuzz::check_report(answer::estimate(sc, answer::Options{false}));
  } catch (const InputError&) {
  }
  return 0;
}
