// Order statistics of timed repetitions. gpusim-bench reports medians (robust to the odd slow
// repetition: a clock ramp, a context switch) and percentiles for spread.
#pragma once

#include <vector>

namespace gpusim::bench {

// Median of the samples; for an even count the mean of the two middle values.
// Throws std::invalid_argument on an empty sample or a NaN.
double median(std::vector<double> samples);

// Percentile p in [0, 100] with linear interpolation between closest ranks (the "R-7" /
// NumPy default definition): rank = p/100 * (n - 1). percentile(s, 50) == median(s).
// Throws std::invalid_argument on an empty sample, a NaN or p outside [0, 100].
double percentile(std::vector<double> samples, double p);

}  // namespace gpusim::bench
