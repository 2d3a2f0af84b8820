// Unit table and parser for quantity strings (contract in include/gpusim/units.hpp). The table is
// built once from prefixes x base symbols so every prefix is applied the same way to every unit.
#include "gpusim/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpusim::units {
namespace {

struct UnitDef {
  Dim dim;
  double factor;  // SI value of 1 of this unit
};

struct Prefix {
  const char* symbol;
  double factor;
};

constexpr Prefix kDecimal[] = {{"", 1.0}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}};
constexpr Prefix kBinary[] = {{"Ki", 0x1p10}, {"Mi", 0x1p20}, {"Gi", 0x1p30}, {"Ti", 0x1p40}, {"Pi", 0x1p50}};

const std::unordered_map<std::string, UnitDef>& unit_table() {
  static const std::unordered_map<std::string, UnitDef> table = [] {
    std::unordered_map<std::string, UnitDef> t;
    auto add_prefixed = [&t](const std::string& base, Dim dim, double base_factor, bool binary) {
      for (const auto& p : kDecimal) {
        t.emplace(p.symbol + base, UnitDef{dim, p.factor * base_factor});
      }
      if (binary) {
        for (const auto& p : kBinary) {
          t.emplace(p.symbol + base, UnitDef{dim, p.factor * base_factor});
        }
      }
    };
    add_prefixed("B", Dim::kBytes, 1.0, true);
    add_prefixed("B/s", Dim::kBandwidth, 1.0, true);
    add_prefixed("b/s", Dim::kBandwidth, 1.0 / 8.0, false);  // network links are quoted in bits
    add_prefixed("bit/s", Dim::kBandwidth, 1.0 / 8.0, false);
    add_prefixed("FLOP/s", Dim::kFlopRate, 1.0, false);
    add_prefixed("OP/s", Dim::kFlopRate, 1.0, false);  // integer tensor ops (TOP/s)
    add_prefixed("Hz", Dim::kFrequency, 1.0, false);
    // Request rates of a serving load.
    t.emplace("req/s", UnitDef{Dim::kFrequency, 1.0});
    t.emplace("req/min", UnitDef{Dim::kFrequency, 1.0 / 60.0});
    add_prefixed("W", Dim::kPower, 1.0, false);
    add_prefixed("J", Dim::kEnergy, 1.0, false);
    add_prefixed("Wh", Dim::kEnergy, 3600.0, false);
    t.emplace("mW", UnitDef{Dim::kPower, 1e-3});
    // Energy per bit of memory traffic is quoted in picojoules.
    for (const auto& [sym, f] :
         {std::pair<const char*, double>{"mJ", 1e-3}, {"uJ", 1e-6}, {"nJ", 1e-9}, {"pJ", 1e-12}}) {
      t.emplace(sym, UnitDef{Dim::kEnergy, f});
    }
    for (const auto& [sym, f] : std::vector<std::pair<std::string, double>>{{"s", 1.0},
                                                                            {"ms", 1e-3},
                                                                            {"us", 1e-6},
                                                                            {"\xC2\xB5s", 1e-6},
                                                                            {"ns", 1e-9},
                                                                            {"min", 60.0},
                                                                            {"h", 3600.0},
                                                                            {"day", kSecondsPerDay},
                                                                            {"days", kSecondsPerDay},
                                                                            {"year", kSecondsPerYear},
                                                                            {"years", kSecondsPerYear}}) {
      t.emplace(sym, UnitDef{Dim::kTime, f});
    }
    t.emplace("cycle", UnitDef{Dim::kCycles, 1.0});
    t.emplace("cycles", UnitDef{Dim::kCycles, 1.0});
    t.emplace("USD", UnitDef{Dim::kMoney, 1.0});
    t.emplace("USD/s", UnitDef{Dim::kMoneyPerTime, 1.0});
    t.emplace("USD/h", UnitDef{Dim::kMoneyPerTime, 1.0 / 3600.0});
    t.emplace("USD/day", UnitDef{Dim::kMoneyPerTime, 1.0 / kSecondsPerDay});
    t.emplace("USD/year", UnitDef{Dim::kMoneyPerTime, 1.0 / kSecondsPerYear});
    t.emplace("USD/kWh", UnitDef{Dim::kMoneyPerEnergy, 1.0 / kJoulesPerKwh});
    t.emplace("USD/MWh", UnitDef{Dim::kMoneyPerEnergy, 1.0 / (1e3 * kJoulesPerKwh)});
    t.emplace("g", UnitDef{Dim::kMass, 1e-3});
    t.emplace("kg", UnitDef{Dim::kMass, 1.0});
    t.emplace("t", UnitDef{Dim::kMass, 1e3});
    t.emplace("kg/kWh", UnitDef{Dim::kMassPerEnergy, 1.0 / kJoulesPerKwh});
    t.emplace("g/kWh", UnitDef{Dim::kMassPerEnergy, 1e-3 / kJoulesPerKwh});
    return t;
  }();
  return table;
}

// Common spellings that are ambiguous or wrong, with the fix to suggest.
std::string hint_for(const std::string& unit) {
  static const std::unordered_map<std::string, std::string> hints = {
      {"KB", "kB (10^3 bytes) or KiB (2^10 bytes)"},
      {"KiB/s", "KiB/s is fine; did you mean kB/s?"},
      {"KB/s", "kB/s or KiB/s"},
      {"TFLOPS", "TFLOP/s"},
      {"GFLOPS", "GFLOP/s"},
      {"PFLOPS", "PFLOP/s"},
      {"TOPS", "TOP/s"},
      {"Gbps", "Gb/s (bits) or GB/s (bytes)"},
      {"GBps", "GB/s"},
      {"sec", "s"},
      {"hr", "h"},
      {"$", "USD"},
      {"$/h", "USD/h"},
      {"$/kWh", "USD/kWh"},
      {"Mhz", "MHz"},
      {"mhz", "MHz"},
      {"w", "W"},
  };
  auto it = hints.find(unit);
  return it == hints.end() ? std::string() : it->second;
}

}  // namespace

std::string describe(Dim d) {
  switch (d) {
    case Dim::kBytes:
      return "a size like \"80 GiB\" or \"50 MB\"";
    case Dim::kBandwidth:
      return "a bandwidth like \"3.35 TB/s\"";
    case Dim::kFlopRate:
      return "a compute rate like \"989.4 TFLOP/s\"";
    case Dim::kTime:
      return "a time like \"478 ns\" or \"5 years\"";
    case Dim::kCycles:
      return "a cycle count like \"34 cycles\"";
    case Dim::kFrequency:
      return "a frequency like \"1830 MHz\"";
    case Dim::kPower:
      return "a power like \"700 W\"";
    case Dim::kEnergy:
      return "an energy like \"2.1 kWh\"";
    case Dim::kMoney:
      return "an amount like \"2200 USD\"";
    case Dim::kMoneyPerTime:
      return "a rate like \"2.14 USD/h\"";
    case Dim::kMoneyPerEnergy:
      return "an electricity price like \"0.12 USD/kWh\"";
    case Dim::kMass:
      return "a mass like \"12 kg\"";
    case Dim::kMassPerEnergy:
      return "a carbon intensity like \"0.4 kg/kWh\"";
  }
  return "a quantity";
}

Magnitudes accepted_magnitudes(Dim d) {
  switch (d) {
    case Dim::kBytes:
      return {1.0, 1e18, "1 B", "1000 PB"};
    case Dim::kBandwidth:
      return {1.0, 1e16, "1 B/s", "10 PB/s"};
    case Dim::kFlopRate:
      return {1e3, 1e19, "1 kFLOP/s", "10000 PFLOP/s"};
    case Dim::kTime:
      return {1e-12, 100 * kSecondsPerYear, "0.001 ns", "100 years"};
    case Dim::kCycles:
      return {1.0, 1e9, "1 cycles", "1e9 cycles"};
    case Dim::kFrequency:
      return {1e-6, 1e12, "1e-6 Hz", "1000 GHz"};
    case Dim::kPower:
      return {1e-3, 1e9, "1 mW", "1000 MW"};
    case Dim::kEnergy:
      return {1e-15, 1e18, "0.001 pJ", "1e18 J"};
    case Dim::kMoney:
      return {1e-6, 1e12, "0.000001 USD", "1e12 USD"};
    case Dim::kMoneyPerTime:
      return {1e-6 / 3600.0, 1e6 / 3600.0, "0.000001 USD/h", "1e6 USD/h"};
    case Dim::kMoneyPerEnergy:
      return {1e-6 / kJoulesPerKwh, 1000 / kJoulesPerKwh, "0.000001 USD/kWh", "1000 USD/kWh"};
    case Dim::kMass:
      return {1e-3, 1e12, "1 g", "1e9 t"};
    case Dim::kMassPerEnergy:
      return {1e-6 / kJoulesPerKwh, 10 / kJoulesPerKwh, "0.001 g/kWh", "10 kg/kWh"};
  }
  return {0.0, 0.0, "", ""};
}

namespace {
// Throws UnitError with the bare reason ("no unit", "unknown unit ..."); callers add context.
ParsedQuantity parse_or_reason(std::string_view text) {
  const std::string s(text);
  const char* begin = s.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  if (end == begin) {
    throw UnitError("not a number followed by a unit");
  }
  if (!std::isfinite(number)) {
    throw UnitError("the number is not finite");
  }
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') {
    unit.erase(unit.begin());
  }
  while (!unit.empty() && unit.back() == ' ') {
    unit.pop_back();
  }
  if (unit.empty()) {
    throw UnitError("no unit");
  }
  const auto& table = unit_table();
  auto it = table.find(unit);
  if (it == table.end()) {
    std::string msg = "unknown unit \"" + unit + "\"";
    if (const std::string hint = hint_for(unit); !hint.empty()) {
      msg += " (write " + hint + ")";
    }
    throw UnitError(msg);
  }
  const double si = number * it->second.factor;
  if (!std::isfinite(si)) {
    throw UnitError("the value is out of range in SI units");  // "1e300 PB/s": finite number, infinite bytes/s
  }
  return ParsedQuantity{si, it->second.dim};
}
}  // namespace

ParsedQuantity parse_quantity(std::string_view text) {
  try {
    return parse_or_reason(text);
  } catch (const UnitError& e) {
    throw UnitError("\"" + std::string(text) + "\": " + e.what());
  }
}

double parse_si(std::string_view text, Dim want) {
  ParsedQuantity q;
  try {
    q = parse_or_reason(text);
  } catch (const UnitError& e) {
    throw UnitError("expected " + describe(want) + ", got \"" + std::string(text) + "\": " + e.what());
  }
  if (q.dim != want) {
    throw UnitError("expected " + describe(want) + ", got \"" + std::string(text) + "\" (" + describe(q.dim) + ")");
  }
  return q.si;
}

}  // namespace gpusim::units
