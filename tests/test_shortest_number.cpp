// The reports' numbers (report::shortest_number: std::to_chars's shortest round-trip text) and the
// printf-and-strtod way to the same text that the WebAssembly build uses, over doubles of every
// magnitude, sign and length, powers of two (whose rounding intervals are lopsided), and the
// counts a report prints (bytes, parameters).
#include <cmath>
#include <cstdlib>
#include <random>

#include "helpers.hpp"

using namespace gpusim;

namespace {

void check_same(double v) {
  INFO(report::shortest_number(v));
  CHECK(report::shortest_number_by_printf(v) == report::shortest_number(v));
  CHECK(std::strtod(report::shortest_number(v).c_str(), nullptr) == v);
}

}  // namespace

TEST_CASE("a number is written by printf as std::to_chars writes it: the shortest text that reads back",
          "[report][numbers]") {
  for (const double v : {0.0, -0.0, 1.0, -1.0, 0.1, 0.3, 1e-5, 1e-4, 123456.0, 1e5, 1e21, 1.5e21, 5e-324,
                         1.7976931348623157e308, 48384189232.0, 6738415616.0, 0.6074135435564358, 3.9841865660035336}) {
    check_same(v);
  }
  std::mt19937_64 rng(23);
  std::uniform_int_distribution<int> exponent(-320, 300);
  std::uniform_real_distribution<double> mantissa(1.0, 10.0);
  std::uniform_int_distribution<int> digits(1, 17);
  for (int i = 0; i < 20000; ++i) {
    const double full = mantissa(rng) * std::pow(10.0, exponent(rng));
    check_same(i % 2 == 0 ? full : -full);
    // Few significant digits: the lengths where %f and %e tie or nearly tie.
    const double scale = std::pow(10.0, digits(rng) - 1);
    check_same(std::round(mantissa(rng) * scale) / scale * std::pow(10.0, exponent(rng) % 25));
  }
  for (int e = -1074; e <= 1023; ++e) {
    check_same(std::ldexp(1.0, e));
  }
}
