#include <catch2/catch.hpp>
#include <cmath>

#include "gpusim/units.hpp"

using namespace gpusim;
using namespace gpusim::units;

TEST_CASE("decimal prefixes are powers of ten, binary prefixes powers of two", "[units]") {
  CHECK(parse_bytes("50 MB").value() == 50e6);
  CHECK(parse_bytes("50 MiB").value() == 50.0 * 1024 * 1024);
  CHECK(parse_bytes("80 GiB").value() == 80.0 * 1024 * 1024 * 1024);
  CHECK(parse_bytes("1 kB").value() == 1e3);
  CHECK(parse_bandwidth("3.35 TB/s").value() == Approx(3.35e12));
  CHECK(parse_bandwidth("1 GiB/s").value() == 1024.0 * 1024 * 1024);
}

TEST_CASE("network rates in bits are divided by eight", "[units]") {
  // 400 Gb/s InfiniBand NDR = 50 GB/s per direction (IEEE 802.3 / InfiniBand line rate in bits)
  CHECK(parse_bandwidth("400 Gb/s").value() == Approx(400e9 / 8));
  CHECK(parse_bandwidth("25 Gbit/s").value() == Approx(25e9 / 8));
}

TEST_CASE("every dimension parses to SI base units", "[units]") {
  CHECK(parse_flop_rate("989.4 TFLOP/s").value() == Approx(989.4e12));
  CHECK(parse_flop_rate("660.6 TOP/s").value() == Approx(660.6e12));
  CHECK(parse_time("478 ns").value() == Approx(478e-9));
  CHECK(parse_time("10 us").value() == Approx(10e-6));
  CHECK(parse_time("10 \xC2\xB5s").value() == Approx(10e-6));
  CHECK(parse_time("5 years").value() == Approx(5 * 365.25 * 86400));
  CHECK(parse_si("34 cycles", Dim::kCycles) == 34);
  CHECK(parse_si("1830 MHz", Dim::kFrequency) == Approx(1.83e9));
  CHECK(parse_power("700 W").value() == 700);
  CHECK(parse_si("2.1 kWh", Dim::kEnergy) == Approx(2.1 * 3.6e6));
  CHECK(parse_money("2200 USD").value() == 2200);
  CHECK(parse_money_rate("2.14 USD/h").value() == Approx(2.14 / 3600));
  CHECK(parse_energy_price("0.12 USD/kWh").value() == Approx(0.12 / 3.6e6));
  CHECK(parse_si("12 kg", Dim::kMass) == 12);
  CHECK(parse_si("0.4 kg/kWh", Dim::kMassPerEnergy) == Approx(0.4 / 3.6e6));
  CHECK(parse_si("400 g/kWh", Dim::kMassPerEnergy) == Approx(0.4 / 3.6e6));
}

TEST_CASE("a quantity without a unit is rejected with the expected form", "[units][errors]") {
  CHECK_THROWS_WITH(parse_bandwidth("3.35"), "expected a bandwidth like \"3.35 TB/s\", got \"3.35\": no unit");
}

TEST_CASE("ambiguous spellings are rejected with the fix", "[units][errors]") {
  CHECK_THROWS_WITH(parse_bytes("24 KB"), Catch::Contains("kB (10^3 bytes) or KiB (2^10 bytes)"));
  CHECK_THROWS_WITH(parse_flop_rate("989 TFLOPS"), Catch::Contains("write TFLOP/s"));
  CHECK_THROWS_WITH(parse_bandwidth("400 Gbps"), Catch::Contains("Gb/s (bits) or GB/s (bytes)"));
}

TEST_CASE("a unit of another dimension is rejected", "[units][errors]") {
  CHECK_THROWS_WITH(parse_bandwidth("80 GB"), Catch::Contains("expected a bandwidth") && Catch::Contains("a size"));
  CHECK_THROWS_WITH(parse_power("3 TB/s"), Catch::Contains("expected a power"));
}

TEST_CASE("malformed numbers are rejected", "[units][errors]") {
  CHECK_THROWS_AS(parse_bytes("GB"), UnitError);
  CHECK_THROWS_AS(parse_bytes(""), UnitError);
  CHECK_THROWS_WITH(parse_bytes("inf GB"), Catch::Contains("not finite"));
  CHECK_THROWS_WITH(parse_bytes("nan GB"), Catch::Contains("not finite"));
  CHECK_THROWS_WITH(parse_bytes("12 GB extra"), Catch::Contains("unknown unit"));
}

TEST_CASE("strong types only combine in physical ways", "[units]") {
  const Bytes b(1e9);
  const BytesPerSecond r(2e9);
  CHECK((b / r).value() == 0.5);  // bytes / bandwidth = seconds
  const Joules e = Watts(450) * Seconds(3600);
  CHECK(units::to_kwh(e) == Approx(0.45));
  CHECK((units::usd_per_kwh(0.12) * e).value() == Approx(0.054));
}

TEST_CASE("a finite number whose SI value overflows is refused, not taken as infinity (a fuzz finding)", "[units]") {
  // fuzz/regressions/units/overflow-to-inf: "481e300 GB" = 4.81e302 × 1e9 bytes = infinity.
  CHECK_THROWS_WITH(units::parse_quantity("481e300 GB"), Catch::Contains("out of range"));
  CHECK_THROWS_AS(units::parse_si("1e300 PB/s", units::Dim::kBandwidth), units::UnitError);
  CHECK(units::parse_si("1e300 B/s", units::Dim::kBandwidth) == Approx(1e300));  // finite: kept
}
