// Medians and percentiles of timed repetitions.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "gpusim_bench/stats.hpp"

using gpusim::bench::median;
using gpusim::bench::percentile;

TEST_CASE("median of an odd sample is its middle element", "[stats]") {
  const std::vector<double> times{5.0, 1.0, 3.0};  // sorted 1 3 5
  CHECK(median(times) == 3.0);
}

TEST_CASE("median of an even sample is the mean of the two middle elements", "[stats]") {
  const double lower_middle = 2.0;
  const double upper_middle = 4.0;
  const std::vector<double> times{10.0, upper_middle, 1.0, lower_middle};
  CHECK(median(times) == Approx((lower_middle + upper_middle) / 2.0));
  CHECK(median({7.0, 7.0}) == 7.0);
  CHECK(median({42.0}) == 42.0);
}

TEST_CASE("median ignores one slow outlier", "[stats]") {
  const double typical = 1.0e-3;
  std::vector<double> times(19, typical);
  times.push_back(1.0);  // a context switch
  CHECK(median(times) == typical);
}

TEST_CASE("percentile interpolates linearly between ranks", "[stats]") {
  const std::vector<double> s{40.0, 10.0, 30.0, 20.0};  // sorted 10 20 30 40, n = 4
  CHECK(percentile(s, 0.0) == 10.0);
  CHECK(percentile(s, 100.0) == 40.0);
  // rank = p/100 * (n-1): p = 50 -> 1.5, halfway between 20 and 30
  CHECK(percentile(s, 50.0) == Approx(25.0));
  CHECK(percentile(s, 50.0) == Approx(median(s)));
  // p = 90 -> rank 2.7 -> 30 + 0.7 * (40 - 30)
  CHECK(percentile(s, 90.0) == Approx(30.0 + 0.7 * 10.0));
}

TEST_CASE("statistics reject an empty sample, NaN and a bad percentile", "[stats]") {
  CHECK_THROWS_AS(median({}), std::invalid_argument);
  CHECK_THROWS_AS(percentile({}, 50.0), std::invalid_argument);
  CHECK_THROWS_AS(median({1.0, std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
  CHECK_THROWS_AS(percentile({1.0}, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(percentile({1.0}, 100.5), std::invalid_argument);
}
