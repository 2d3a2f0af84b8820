// Strong SI quantity types. Every quantity inside gpusim is one of these, in SI base units
// (bytes, seconds, FLOP, watts, joules, USD); conversion happens once, at the parsing boundary
// (units/parse.hpp) and at the report boundary (named to_* functions below).
//
// Only physically meaningful operations exist: adding two times, dividing bytes by a bandwidth
// into a time, multiplying power by time into energy. Anything else does not compile.
#pragma once

#include <compare>

namespace gpusim {

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double si_value) : v_(si_value) {}
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

// Named constructors and report conversions. "k M G T P" are powers of ten; "Ki Mi Gi Ti" powers
// of two. A conversion that is not written here is not done anywhere else.
namespace units {
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
constexpr double to_usd_per_hour(UsdPerSecond r) { return r.value() * kSecondsPerHour; }
constexpr double to_usd_per_kwh(UsdPerJoule p) { return p.value() * kJoulesPerKwh; }
constexpr double to_kg_per_kwh(KgPerJoule c) { return c.value() * kJoulesPerKwh; }
}  // namespace units

}  // namespace gpusim
