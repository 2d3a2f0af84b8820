// Quantity and size strings (see format.hpp). Prefix tables follow gpusim's unit parser
// (src/units/parse.cpp): decimal k..P for rates and power, n/u/m for seconds, binary Ki..Pi for
// bytes.
#include "gpusim_bench/format.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

namespace gpusim::bench {
namespace {

struct Prefix {
  const char* symbol;
  int exponent;  // power of ten
};

constexpr std::array<Prefix, 6> kRatePrefixes{{{"", 0}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}}};
constexpr std::array<Prefix, 3> kPowerPrefixes{{{"m", -3}, {"", 0}, {"k", 3}}};
constexpr std::array<Prefix, 4> kTimePrefixes{{{"n", -9}, {"u", -6}, {"m", -3}, {"", 0}}};
constexpr std::array<Prefix, 1> kNoPrefix{{{"", 0}}};

void check_value(double v) {
  if (!std::isfinite(v)) {
    throw std::invalid_argument("cannot format a non-finite quantity");
  }
  if (v < 0.0) {
    throw std::invalid_argument("cannot format a negative quantity");
  }
}

// Rounds |v| > 0 to `sig` significant digits.
double round_sig(double v, int sig) {
  if (v == 0.0) {
    return 0.0;
  }
  const double digits = static_cast<double>(sig) - 1.0 - std::floor(std::log10(std::fabs(v)));
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

template <std::size_t N>
std::string with_prefix(double v, const std::array<Prefix, N>& prefixes, const char* base, int sig) {
  check_value(v);
  std::size_t chosen = 0;
  if (v > 0.0) {
    // Largest prefix whose rounded mantissa is >= 1; the smallest prefix when none is.
    for (std::size_t i = 0; i < N; ++i) {
      const double mantissa = round_sig(v / std::pow(10.0, prefixes[i].exponent), sig);
      if (mantissa >= 1.0) {
        chosen = i;
      }
    }
  } else {
    for (std::size_t i = 0; i < N; ++i) {
      if (prefixes[i].exponent == 0) {
        chosen = i;
      }
    }
  }
  const double mantissa = v / std::pow(10.0, prefixes[chosen].exponent);
  return format_number(mantissa, sig) + " " + prefixes[chosen].symbol + base;
}

}  // namespace

std::string format_number(double value, int sig) {
  if (!std::isfinite(value)) {
    throw std::invalid_argument("cannot format a non-finite number");
  }
  if (sig < 1 || sig > 15) {
    throw std::invalid_argument("significant digits must lie in [1, 15]");
  }
  const double rounded = round_sig(value, sig);
  int decimals = 0;
  if (rounded != 0.0) {
    decimals = std::max(0, sig - 1 - static_cast<int>(std::floor(std::log10(std::fabs(rounded)))));
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, rounded);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') {
      s.pop_back();
    }
    if (s.back() == '.') {
      s.pop_back();
    }
  }
  if (s == "-0") {
    s = "0";
  }
  return s;
}

std::string format_quantity(double si_value, Unit unit, int sig) {
  switch (unit) {
    case Unit::kBandwidth:
      return with_prefix(si_value, kRatePrefixes, "B/s", sig);
    case Unit::kFlopRate:
      return with_prefix(si_value, kRatePrefixes, "FLOP/s", sig);
    case Unit::kPower:
      return with_prefix(si_value, kPowerPrefixes, "W", sig);
    case Unit::kTime:
      return with_prefix(si_value, kTimePrefixes, "s", sig);
    case Unit::kCycles:
      return with_prefix(si_value, kNoPrefix, "cycles", sig);
  }
  throw std::invalid_argument("unknown unit");
}

std::string format_in(double si_value, double unit_si, std::string_view unit, int sig) {
  check_value(si_value);
  if (!(unit_si > 0.0) || !std::isfinite(unit_si)) {
    throw std::invalid_argument("unit size must be positive");
  }
  return format_number(si_value / unit_si, sig) + " " + std::string(unit);
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr std::array<const char*, 6> kSymbols{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  for (std::size_t i = kSymbols.size() - 1; i > 0; --i) {
    const std::uint64_t unit = std::uint64_t{1} << (10 * i);
    if (bytes < unit) {
      continue;
    }
    // At most two decimals: bytes * 100 must be a multiple of the unit (whole and remainder
    // checked separately so the product cannot overflow).
    const std::uint64_t whole = bytes / unit;
    const std::uint64_t rest = bytes % unit;
    if ((rest * 100) % unit != 0) {
      continue;
    }
    const std::uint64_t hundredths = rest * 100 / unit;
    std::string s = std::to_string(whole);
    if (hundredths != 0) {
      char frac[8];
      std::snprintf(frac, sizeof frac, ".%02u", static_cast<unsigned>(hundredths));
      std::string f = frac;
      if (f.back() == '0') {
        f.pop_back();
      }
      s += f;
    }
    return s + " " + kSymbols[i];
  }
  return std::to_string(bytes) + " B";
}

std::string bytes_tag(std::uint64_t bytes) {
  std::string s = format_bytes(bytes);
  s.erase(s.find(' '), 1);
  return s;
}

std::uint64_t parse_size(std::string_view text) {
  const std::string original(text);
  auto bad = [&original](const char* why) {
    return std::invalid_argument("bad size '" + original + "': " + why + " (expected e.g. 4GiB, 512M, 1.5GB, 4096)");
  };
  std::size_t pos = 0;
  while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.')) {
    ++pos;
  }
  const std::string number(text.substr(0, pos));
  if (number.empty() || number == "." || number.find('.') != number.rfind('.')) {
    throw bad("no number");
  }
  std::string_view suffix = text.substr(pos);
  if (!suffix.empty() && suffix.front() == ' ') {
    suffix.remove_prefix(1);
  }
  std::string lower;
  for (char c : suffix) {
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  double multiplier = 0.0;
  if (lower.empty() || lower == "b") {
    multiplier = 1.0;
  } else {
    static constexpr std::array<char, 4> kLetters{'k', 'm', 'g', 't'};
    for (std::size_t i = 0; i < kLetters.size(); ++i) {
      const std::string l(1, kLetters[i]);
      const double binary = std::ldexp(1.0, 10 * static_cast<int>(i + 1));
      const double decimal = std::pow(1000.0, static_cast<double>(i + 1));
      if (lower == l || lower == l + "i" || lower == l + "ib") {
        multiplier = binary;
      } else if (lower == l + "b") {
        multiplier = decimal;
      }
    }
  }
  if (multiplier == 0.0) {
    throw bad("unknown suffix");
  }
  const double value = std::stod(number) * multiplier;
  if (value >= std::ldexp(1.0, 64)) {
    throw bad("too large");
  }
  const double rounded = std::round(value);
  if (std::fabs(value - rounded) > 1e-6 * std::max(1.0, value)) {
    throw bad("not a whole number of bytes");
  }
  return static_cast<std::uint64_t>(rounded);
}

std::string toml_float(double value) {
  if (!std::isfinite(value)) {
    throw std::invalid_argument("cannot write a non-finite TOML float");
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) {
    s += ".0";
  }
  return s;
}

}  // namespace gpusim::bench
