// Quantity strings, byte sizes, size parsing and TOML float literals.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "gpusim_bench/format.hpp"

using namespace gpusim::bench;

TEST_CASE("format_number keeps significant digits and trims zeros", "[format]") {
  CHECK(format_number(2.91349, 4) == "2.913");
  CHECK(format_number(39.0, 4) == "39");
  CHECK(format_number(271.23, 4) == "271.2");
  CHECK(format_number(0.012345, 3) == "0.0123");
  CHECK(format_number(123456.0, 4) == "123500");
  CHECK(format_number(0.0, 4) == "0");
  CHECK_THROWS_AS(format_number(std::nan(""), 4), std::invalid_argument);
  CHECK_THROWS_AS(format_number(1.0, 0), std::invalid_argument);
}

TEST_CASE("bandwidth gets a decimal prefix", "[format]") {
  const double bytes = 2.0 * 1073741824.0;  // stream copy of two 1 GiB arrays
  const double seconds = 0.7405e-3;
  // 2 GiB / 0.7405 ms = 2.9e12 B/s
  CHECK(format_quantity(bytes / seconds, Unit::kBandwidth) == "2.9 TB/s");
  CHECK(format_quantity(25.3e9, Unit::kBandwidth) == "25.3 GB/s");
  CHECK(format_quantity(512.0, Unit::kBandwidth) == "512 B/s");
  CHECK(format_quantity(0.0, Unit::kBandwidth) == "0 B/s");
}

TEST_CASE("FLOP rate from 2mnk over time", "[format]") {
  const double m = 8192, n = 8192, k = 8192;
  const double seconds = 2.0 * m * n * k / 271.2e12;  // a GEMM running at 271.2 TFLOP/s
  CHECK(format_quantity(2.0 * m * n * k / seconds, Unit::kFlopRate) == "271.2 TFLOP/s");
}

TEST_CASE("time, power and cycles", "[format]") {
  const double total_s = 4.1e-3;  // 1000 launches in 4.1 ms
  const int launches = 1000;
  CHECK(format_quantity(total_s / launches, Unit::kTime) == "4.1 us");
  CHECK(format_quantity(5.1e-6, Unit::kTime) == "5.1 us");
  CHECK(format_quantity(23.4e-9, Unit::kTime) == "23.4 ns");
  CHECK(format_quantity(1.5, Unit::kTime) == "1.5 s");
  CHECK(format_quantity(227.0, Unit::kPower) == "227 W");
  CHECK(format_quantity(0.5, Unit::kPower) == "500 mW");
  CHECK(format_quantity(39.0, Unit::kCycles) == "39 cycles");
  CHECK(format_quantity(612.44, Unit::kCycles) == "612.4 cycles");
}

TEST_CASE("rounding up to 1000 moves to the next prefix", "[format]") {
  CHECK(format_quantity(999.96e9, Unit::kBandwidth) == "1 TB/s");
  CHECK(format_quantity(999.94e9, Unit::kBandwidth) == "999.9 GB/s");
}

TEST_CASE("negative and non-finite quantities are rejected", "[format]") {
  CHECK_THROWS_AS(format_quantity(-1.0, Unit::kPower), std::invalid_argument);
  CHECK_THROWS_AS(format_quantity(std::numeric_limits<double>::infinity(), Unit::kBandwidth), std::invalid_argument);
  CHECK_THROWS_AS(format_in(1.0, 0.0, "GB/s"), std::invalid_argument);
}

TEST_CASE("format_in writes a fixed unit", "[format]") {
  const double gb = 1e9;
  CHECK(format_in(25.3 * gb, gb, "GB/s") == "25.3 GB/s");
  CHECK(format_in(0.01234 * gb, gb, "GB/s") == "0.01234 GB/s");
}

TEST_CASE("format_bytes uses the largest exact binary prefix", "[format]") {
  const std::uint64_t kib = 1024, mib = kib * kib, gib = mib * kib;
  CHECK(format_bytes(gib) == "1 GiB");
  CHECK(format_bytes(3 * gib / 2) == "1.5 GiB");  // triad: 3 x 512 MiB
  CHECK(format_bytes(3 * mib / 2) == "1.5 MiB");
  CHECK(format_bytes(5 * mib / 4) == "1.25 MiB");
  CHECK(format_bytes(9 * mib / 8) == "1152 KiB");  // 1.125 MiB needs three decimals
  CHECK(format_bytes(8) == "8 B");
  CHECK(format_bytes(1000) == "1000 B");
  CHECK(format_bytes(0) == "0 B");
  CHECK(bytes_tag(gib) == "1GiB");
  CHECK(bytes_tag(3 * mib / 2) == "1.5MiB");
}

TEST_CASE("parse_size reads binary and decimal suffixes", "[format][cli]") {
  const std::uint64_t kib = 1024, mib = kib * kib, gib = mib * kib;
  CHECK(parse_size("4096") == 4096);
  CHECK(parse_size("8B") == 8);
  CHECK(parse_size("4GiB") == 4 * gib);
  CHECK(parse_size("4G") == 4 * gib);
  CHECK(parse_size("512M") == 512 * mib);
  CHECK(parse_size("512mib") == 512 * mib);
  CHECK(parse_size("1.5 GiB") == 3 * gib / 2);
  CHECK(parse_size("2GB") == 2'000'000'000ull);
  CHECK(parse_size("64kB") == 64'000ull);
  CHECK(parse_size("1TiB") == 1024 * gib);
}

TEST_CASE("parse_size rejects bad size strings", "[format][cli]") {
  for (const char* bad : {"", "abc", "-1", "1.5.5G", "1X", "GiB", "1 G iB", "0.5B", "1e3", "99999999999999999999"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_size(bad), std::invalid_argument);
  }
}

TEST_CASE("toml_float always reads back as a float", "[format][toml]") {
  CHECK(toml_float(23.4) == "23.4");
  CHECK(toml_float(0.0) == "0.0");
  CHECK(toml_float(12.25) == "12.25");
  CHECK(toml_float(8192.0 / 3.0) == "2730.67");  // bf16 GEMM 8192^3 intensity
  CHECK(toml_float(1e6) == "1e+06");
  CHECK_THROWS_AS(toml_float(std::nan("")), std::invalid_argument);
}
