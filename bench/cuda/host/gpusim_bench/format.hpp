// Quantity strings of the measurement TOML ("2.9 TB/s", "271.2 TFLOP/s", "39 cycles", "5.1 us",
// "1 GiB") and the size strings of the command line ("4GiB", "512M"). Every string written here
// is one that gpusim's unit parser (src/units/parse.cpp) reads back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpusim::bench {

enum class Unit {
  kBandwidth,  // B/s, decimal prefixes k..P
  kFlopRate,   // FLOP/s, decimal prefixes k..P
  kPower,      // W, prefixes m, k
  kTime,       // s, prefixes n, u, m
  kCycles,     // cycles, no prefix
};

// `value` rounded to `sig` significant digits, written without exponent, trailing zeros trimmed:
// (2.91349, 4) -> "2.913", (39.0, 4) -> "39", (0.012345, 3) -> "0.0123".
// Throws std::invalid_argument for a non-finite value or sig outside [1, 15].
std::string format_number(double value, int sig = 4);

// SI value (B/s, FLOP/s, W, s, cycles) with the decimal prefix that puts the mantissa in
// [1, 1000): 2.9e12 B/s -> "2.9 TB/s", 5.1e-6 s -> "5.1 us". Throws std::invalid_argument for a
// negative or non-finite value.
std::string format_quantity(double si_value, Unit unit, int sig = 4);

// SI value expressed in a fixed unit `unit` worth `unit_si` SI units each:
// format_in(25.3e9, 1e9, "GB/s") -> "25.3 GB/s". Same errors as format_quantity.
std::string format_in(double si_value, double unit_si, std::string_view unit, int sig = 4);

// Exact byte count with the largest binary prefix that leaves at most two decimals:
// 1073741824 -> "1 GiB", 1572864 -> "1.5 MiB", 8 -> "8 B", 1000 -> "1000 B".
std::string format_bytes(std::uint64_t bytes);

// format_bytes without the space, for measurement ids: "1GiB", "1.5MiB".
std::string bytes_tag(std::uint64_t bytes);

// Command-line size: a number (decimals allowed) and an optional suffix. K, M, G, T and
// KiB, MiB, GiB, TiB are binary (x1024, as dd does); kB/KB, MB, GB, TB are decimal; B or none
// is bytes. Case-insensitive; one space allowed before the suffix. "4GiB", "512M", "1.5 GB".
// Throws std::invalid_argument on anything else, a negative value, a fraction of a byte or a
// value that does not fit in 64 bits.
std::uint64_t parse_size(std::string_view text);

// A TOML float literal: up to 6 significant digits, always with a '.' or an exponent so TOML
// reads a float ("23.4", "0.0", "1e+06"). Throws std::invalid_argument for a non-finite value.
std::string toml_float(double value);

}  // namespace gpusim::bench
