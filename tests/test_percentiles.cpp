// The nearest-rank percentiles of a run's latencies (step/percentiles.cpp): the p-quantile of n
// values is the value of rank ceil(p·n) (1-based) in ascending order. A sorted copy is the
// reference; the counting path (4,096 values and more) and the selection path must both give it
// exactly, for spreads, ties, a value repeated throughout, negative values and zeros.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "helpers.hpp"

using namespace gpusim;

namespace {

double nearest_rank(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));  // 1-based
  return v[std::max<std::size_t>(rank, 1) - 1];
}

void check_against_sorted(const std::vector<double>& values) {
  INFO(values.size() << " values");
  std::vector<double> v = values;
  const step::Percentiles p = step::percentiles(v);
  CHECK(p.p50.value() == nearest_rank(values, 0.50));
  CHECK(p.p90.value() == nearest_rank(values, 0.90));
  CHECK(p.p99.value() == nearest_rank(values, 0.99));
  double sum = 0;
  for (const double x : values) {
    sum += x;
  }
  CHECK(p.mean.value() == sum / static_cast<double>(values.size()));
  std::sort(v.begin(), v.end());
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  CHECK(v == sorted);  // reordered at most: the same values
}

}  // namespace

TEST_CASE("percentiles are the nearest-rank values of a sorted copy, by selection and by counting alike",
          "[serving][percentiles]") {
  std::mt19937 rng(17);
  for (const std::size_t n : {1UL, 2UL, 7UL, 100UL, 4095UL, 4096UL, 10001UL, 100000UL}) {
    std::lognormal_distribution<double> latency(-3.0, 1.0);  // seconds: tens of ms, a long tail
    std::vector<double> spread(n);
    for (double& x : spread) {
      x = latency(rng);
    }
    check_against_sorted(spread);
    // Ties: few distinct values, most of them one value (requests that never queue).
    std::vector<double> ties(n);
    std::uniform_int_distribution<int> pick(0, 9);
    for (double& x : ties) {
      const int k = pick(rng);
      x = k < 7 ? 0.0 : 0.001 * k;
    }
    check_against_sorted(ties);
    // Signed values over many binades, and one value throughout.
    std::vector<double> signed_values(n);
    std::uniform_real_distribution<double> exponent(-30.0, 30.0);
    for (std::size_t i = 0; i < n; ++i) {
      signed_values[i] = (i % 3 == 0 ? -1.0 : 1.0) * std::exp2(exponent(rng));
    }
    check_against_sorted(signed_values);
    check_against_sorted(std::vector<double>(n, 0.25));
  }
}

TEST_CASE("percentiles of nothing are zero", "[serving][percentiles]") {
  std::vector<double> none;
  const step::Percentiles p = step::percentiles(none);
  CHECK(p.mean.value() == 0);
  CHECK(p.p50.value() == 0);
  CHECK(p.p99.value() == 0);
}
