// Parsing of unit-bearing strings ("3.35 TB/s", "50 MiB", "700 W", "478 ns", "0.12 USD/kWh").
// Contract: the result is in SI base units; decimal prefixes (k M G T P) are powers of ten and
// binary prefixes (Ki Mi Gi Ti Pi) powers of two; a string without a unit, with an unknown or
// ambiguous unit ("KB", "TFLOPS"), with a unit of another dimension, or whose number is not
// finite throws UnitError whose message says what was expected and what was found.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "gpusim/units/units.hpp"

namespace gpusim {

enum class Dim {
  kBytes,
  kBandwidth,
  kFlopRate,
  kTime,
  kCycles,
  kFrequency,
  kPower,
  kEnergy,
  kMoney,
  kMoneyPerTime,
  kMoneyPerEnergy,
  kMass,
  kMassPerEnergy,
};

class UnitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ParsedQuantity {
  double si = 0.0;
  Dim dim = Dim::kBytes;
};

// Any known unit; throws UnitError for a missing or unknown unit.
ParsedQuantity parse_quantity(std::string_view text);
// The quantity must have dimension `want`; otherwise UnitError ("expected a bandwidth like ...").
double parse_si(std::string_view text, Dim want);

// "a bandwidth like \"3.35 TB/s\"": used in every message about a quantity of that dimension.
std::string describe(Dim d);

inline Bytes parse_bytes(std::string_view s) { return Bytes(parse_si(s, Dim::kBytes)); }
inline BytesPerSecond parse_bandwidth(std::string_view s) { return BytesPerSecond(parse_si(s, Dim::kBandwidth)); }
inline FlopPerSecond parse_flop_rate(std::string_view s) { return FlopPerSecond(parse_si(s, Dim::kFlopRate)); }
inline Seconds parse_time(std::string_view s) { return Seconds(parse_si(s, Dim::kTime)); }
inline Cycles parse_cycles(std::string_view s) { return Cycles(parse_si(s, Dim::kCycles)); }
inline Hertz parse_frequency(std::string_view s) { return Hertz(parse_si(s, Dim::kFrequency)); }
inline Watts parse_power(std::string_view s) { return Watts(parse_si(s, Dim::kPower)); }
inline Joules parse_energy(std::string_view s) { return Joules(parse_si(s, Dim::kEnergy)); }
inline Usd parse_money(std::string_view s) { return Usd(parse_si(s, Dim::kMoney)); }
inline UsdPerSecond parse_money_rate(std::string_view s) { return UsdPerSecond(parse_si(s, Dim::kMoneyPerTime)); }
inline UsdPerJoule parse_energy_price(std::string_view s) { return UsdPerJoule(parse_si(s, Dim::kMoneyPerEnergy)); }
inline Kilograms parse_mass(std::string_view s) { return Kilograms(parse_si(s, Dim::kMass)); }
inline KgPerJoule parse_carbon_intensity(std::string_view s) { return KgPerJoule(parse_si(s, Dim::kMassPerEnergy)); }

}  // namespace gpusim
