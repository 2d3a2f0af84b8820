// Units: strong SI quantity types, the one place where units are converted, the parser of
// unit-bearing strings, and the numeric formats (dtypes) GPUs execute.
//
// Every quantity inside gpusim is one of the Quantity types below, in SI base units (bytes,
// seconds, FLOP, watts, joules, USD, kg); conversion happens once at the parsing boundary
// (parse_si and friends) and once at the report boundary (the named to_* functions). Only
// physically meaningful operations exist: adding two times, dividing bytes by a bandwidth into a
// time, multiplying power by time into energy. Anything else does not compile.
// "k M G T P" are powers of ten, "Ki Mi Gi Ti Pi" powers of two, always.
#pragma once

#include <compare>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "gpusim/base.hpp"

namespace gpusim::units {
template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double si) : v_(si) {}
  [[nodiscard]] constexpr double value() const { return v_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity& operator+=(Quantity o) {
    v_ += o.v_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    v_ -= o.v_;
    return *this;
  }
  constexpr Quantity operator*(double k) const { return Quantity(v_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(v_ / k); }
  constexpr double operator/(Quantity o) const { return v_ / o.v_; }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double v_ = 0.0;
};

template <class Tag>
constexpr Quantity<Tag> operator*(double k, Quantity<Tag> q) {
  return q * k;
}

// clang-format off
struct BytesTag {};            using Bytes = Quantity<BytesTag>;                     // B
struct SecondsTag {};          using Seconds = Quantity<SecondsTag>;                 // s
struct FlopTag {};             using Flop = Quantity<FlopTag>;                       // FLOP (count of operations)
struct FlopPerSecondTag {};    using FlopPerSecond = Quantity<FlopPerSecondTag>;     // FLOP/s
struct BytesPerSecondTag {};   using BytesPerSecond = Quantity<BytesPerSecondTag>;   // B/s
struct HertzTag {};            using Hertz = Quantity<HertzTag>;                     // 1/s
struct CyclesTag {};           using Cycles = Quantity<CyclesTag>;                   // clock cycles
struct WattsTag {};            using Watts = Quantity<WattsTag>;                     // W = J/s
struct JoulesTag {};           using Joules = Quantity<JoulesTag>;                   // J
struct UsdTag {};              using Usd = Quantity<UsdTag>;                         // USD
struct UsdPerSecondTag {};     using UsdPerSecond = Quantity<UsdPerSecondTag>;       // USD/s (cloud rates)
struct UsdPerJouleTag {};      using UsdPerJoule = Quantity<UsdPerJouleTag>;         // USD/J (electricity)
struct KilogramsTag {};        using Kilograms = Quantity<KilogramsTag>;             // kg
struct KgPerJouleTag {};       using KgPerJoule = Quantity<KgPerJouleTag>;           // kg/J (carbon intensity)
// clang-format on

// Cross-dimension arithmetic: the only ways to change dimension.
constexpr Seconds operator/(Bytes b, BytesPerSecond r) { return Seconds(b.value() / r.value()); }
constexpr Seconds operator/(Flop f, FlopPerSecond r) { return Seconds(f.value() / r.value()); }
constexpr Bytes operator*(BytesPerSecond r, Seconds t) { return Bytes(r.value() * t.value()); }
constexpr Flop operator*(FlopPerSecond r, Seconds t) { return Flop(r.value() * t.value()); }
constexpr BytesPerSecond operator/(Bytes b, Seconds t) { return BytesPerSecond(b.value() / t.value()); }
constexpr FlopPerSecond operator/(Flop f, Seconds t) { return FlopPerSecond(f.value() / t.value()); }
constexpr Seconds operator/(Cycles c, Hertz f) { return Seconds(c.value() / f.value()); }
constexpr Joules operator*(Watts p, Seconds t) { return Joules(p.value() * t.value()); }
constexpr Watts operator/(Joules e, Seconds t) { return Watts(e.value() / t.value()); }
constexpr Usd operator*(UsdPerSecond r, Seconds t) { return Usd(r.value() * t.value()); }
constexpr Usd operator*(UsdPerJoule p, Joules e) { return Usd(p.value() * e.value()); }
constexpr Kilograms operator*(KgPerJoule c, Joules e) { return Kilograms(c.value() * e.value()); }

// Named constructors and report conversions. A conversion that is not written here is not done
// anywhere else.
inline constexpr double kKilo = 1e3;
inline constexpr double kMega = 1e6;
inline constexpr double kGiga = 1e9;
inline constexpr double kTera = 1e12;
inline constexpr double kKibi = 1024.0;
inline constexpr double kMebi = 1024.0 * 1024.0;
inline constexpr double kGibi = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kSecondsPerHour = 3600.0;
inline constexpr double kSecondsPerDay = 86400.0;
inline constexpr double kSecondsPerYear = 365.25 * 86400.0;  // Julian year
inline constexpr double kJoulesPerKwh = 3.6e6;

constexpr Bytes gigabytes(double x) { return Bytes(x * kGiga); }
constexpr Bytes gibibytes(double x) { return Bytes(x * kGibi); }
constexpr Seconds microseconds(double x) { return Seconds(x * 1e-6); }
constexpr Seconds hours(double x) { return Seconds(x * kSecondsPerHour); }
constexpr BytesPerSecond gigabytes_per_second(double x) { return BytesPerSecond(x * kGiga); }
constexpr FlopPerSecond teraflops(double x) { return FlopPerSecond(x * kTera); }
constexpr UsdPerSecond usd_per_hour(double x) { return UsdPerSecond(x / kSecondsPerHour); }
constexpr UsdPerJoule usd_per_kwh(double x) { return UsdPerJoule(x / kJoulesPerKwh); }
constexpr KgPerJoule kg_per_kwh(double x) { return KgPerJoule(x / kJoulesPerKwh); }

constexpr double to_gigabytes(Bytes b) { return b.value() / kGiga; }
constexpr double to_gibibytes(Bytes b) { return b.value() / kGibi; }
constexpr double to_hours(Seconds t) { return t.value() / kSecondsPerHour; }
constexpr double to_days(Seconds t) { return t.value() / kSecondsPerDay; }
constexpr double to_ms(Seconds t) { return t.value() * 1e3; }
constexpr double to_us(Seconds t) { return t.value() * 1e6; }
constexpr double to_kwh(Joules e) { return e.value() / kJoulesPerKwh; }
constexpr double to_teraflops(FlopPerSecond r) { return r.value() / kTera; }
constexpr double to_gigabytes_per_second(BytesPerSecond r) { return r.value() / kGiga; }
constexpr double to_terabytes_per_second(BytesPerSecond r) { return r.value() / kTera; }
constexpr double to_megabytes(Bytes b) { return b.value() / kMega; }
constexpr double to_gigaflop(Flop f) { return f.value() / kGiga; }
constexpr double to_ns(Seconds t) { return t.value() * 1e9; }
constexpr double to_megahertz(Hertz f) { return f.value() / kMega; }
constexpr double to_usd_per_hour(UsdPerSecond r) { return r.value() * kSecondsPerHour; }
constexpr double to_usd_per_kwh(UsdPerJoule p) { return p.value() * kJoulesPerKwh; }
constexpr double to_kg_per_kwh(KgPerJoule c) { return c.value() * kJoulesPerKwh; }
constexpr double to_years(Seconds t) { return t.value() / kSecondsPerYear; }
constexpr double to_kilograms(Kilograms m) { return m.value(); }
constexpr double to_usd(Usd u) { return u.value(); }
constexpr double to_watts(Watts p) { return p.value(); }
constexpr double to_seconds(Seconds t) { return t.value(); }
constexpr double to_bytes(Bytes b) { return b.value(); }

// --- Parsing unit-bearing strings ("3.35 TB/s", "50 MiB", "700 W", "478 ns", "0.12 USD/kWh") ---
// Contract: the result is in SI base units; a string without a unit, with an unknown or
// ambiguous unit ("KB", "TFLOPS"), with a unit of another dimension, or whose number is not
// finite throws UnitError whose message says what was expected and what was found.

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
// The magnitudes a quantity of each dimension may take, in SI units and as written in messages and
// in docs/scenarios.md#ranges: orders of magnitude beyond any GPU, cluster, price or lifetime, so
// that a typo ("1e300 PB/s", "1e-30 W") is refused where it is read instead of becoming an
// infinite or vanishing time inside the model. Zero is not a magnitude: each key says whether it
// takes zero (parse::Range).
struct Magnitudes {
  double lo;
  double hi;
  const char* lo_text;
  const char* hi_text;
};
Magnitudes accepted_magnitudes(Dim d);

inline Bytes parse_bytes(std::string_view s) { return Bytes(parse_si(s, Dim::kBytes)); }
inline BytesPerSecond parse_bandwidth(std::string_view s) { return BytesPerSecond(parse_si(s, Dim::kBandwidth)); }
inline FlopPerSecond parse_flop_rate(std::string_view s) { return FlopPerSecond(parse_si(s, Dim::kFlopRate)); }
inline Seconds parse_time(std::string_view s) { return Seconds(parse_si(s, Dim::kTime)); }
inline Watts parse_power(std::string_view s) { return Watts(parse_si(s, Dim::kPower)); }
inline Usd parse_money(std::string_view s) { return Usd(parse_si(s, Dim::kMoney)); }
inline UsdPerSecond parse_money_rate(std::string_view s) { return UsdPerSecond(parse_si(s, Dim::kMoneyPerTime)); }
inline UsdPerJoule parse_energy_price(std::string_view s) { return UsdPerJoule(parse_si(s, Dim::kMoneyPerEnergy)); }

// --- Numeric formats ---
// Formats a GPU may execute; peaks are dense (no 2:4 sparsity), tensor peaks with FP32 accumulate.
// fp4 is the 4-bit float (E2M1) of Blackwell's block-scaled tensor cores, NVFP4 and MXFP4 alike
// [ocp-mx-spec, nvidia-nvfp4]; its block scales are counted by the weight format, not here.
enum class DType { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8, kInt8, kInt4, kFp4 };
inline constexpr std::size_t kDTypeCount = 9;
inline constexpr base::Named<DType> kDTypeNames[] = {
    {DType::kFp64, "fp64"}, {DType::kFp32, "fp32"}, {DType::kTf32, "tf32"},
    {DType::kFp16, "fp16"}, {DType::kBf16, "bf16"}, {DType::kFp8, "fp8"},
    {DType::kInt8, "int8"}, {DType::kInt4, "int4"}, {DType::kFp4, "fp4"}};
constexpr const char* to_string(DType d) { return base::name_in(kDTypeNames, d); }
// Bytes per element as stored in memory (tf32 is stored as fp32).
constexpr double bytes_per_element(DType d) {
  switch (d) {
    case DType::kFp64:
      return 8;
    case DType::kFp32:
    case DType::kTf32:
      return 4;
    case DType::kFp16:
    case DType::kBf16:
      return 2;
    case DType::kFp8:
    case DType::kInt8:
      return 1;
    case DType::kInt4:
    case DType::kFp4:
      return 0.5;
  }
  return 2;
}
// fp32 and tf32 keep 4-byte activations and weights; the 16-bit and 8-bit formats train in 16-bit.
constexpr bool is_wide(DType d) { return d == DType::kFp32 || d == DType::kTf32; }

}  // namespace gpusim::units

namespace gpusim {
using units::Bytes;
using units::BytesPerSecond;
using units::Cycles;
using units::DType;
using units::Flop;
using units::FlopPerSecond;
using units::Hertz;
using units::Joules;
using units::KgPerJoule;
using units::Kilograms;
using units::Seconds;
using units::Usd;
using units::UsdPerJoule;
using units::UsdPerSecond;
using units::Watts;
}  // namespace gpusim
