// Order statistics (see stats.hpp).
#include "gpusim_bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpusim::bench {
namespace {

void check_sample(const std::vector<double>& samples) {
  if (samples.empty()) {
    throw std::invalid_argument("statistics of an empty sample");
  }
  for (double s : samples) {
    if (std::isnan(s)) {
      throw std::invalid_argument("statistics of a sample containing NaN");
    }
  }
}

}  // namespace

double median(std::vector<double> samples) {
  check_sample(samples);
  const std::size_t n = samples.size();
  const std::size_t mid = n / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid), samples.end());
  const double upper = samples[mid];
  if (n % 2 == 1) {
    return upper;
  }
  // The lower middle is the largest element of the left part after nth_element.
  const double lower = *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + (upper - lower) / 2.0;
}

double percentile(std::vector<double> samples, double p) {
  check_sample(samples);
  if (!(p >= 0.0 && p <= 100.0)) {
    throw std::invalid_argument("percentile must lie in [0, 100]");
  }
  std::sort(samples.begin(), samples.end());
  const double rank = p / 100.0 * static_cast<double>(samples.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, samples.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return samples[lo] + (samples[hi] - samples[lo]) * frac;
}

}  // namespace gpusim::bench
