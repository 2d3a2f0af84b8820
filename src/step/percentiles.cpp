// The mean and the nearest-rank percentiles of a run's latencies (the p-quantile is the value at
// rank ceil(p·n) in ascending order, as vLLM's and SGLang's benchmarks take numpy's percentiles
// near enough for n in the thousands).
//
// A percentile is an order statistic: the k-th smallest value, which is one value of the multiset
// whatever the method that finds it. Small runs take it by selection (std::nth_element). Large
// ones, where selection's comparisons mispredict about once per element, count the values into
// buckets of their order-preserving bit patterns (key(a) < key(b) exactly when a < b), find the
// bucket holding each rank from the counts, and select within that bucket alone: the same value,
// in passes over the values that branch only on the few of them in those buckets.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "gpusim/step.hpp"

namespace gpusim::step {

namespace {

constexpr std::size_t kBucketFrom = 4096;  // below this many values, selection is as fast
constexpr int kBucketBits = 12;            // 4,096 counters: 16 KiB, in the first-level cache

std::size_t rank_of(std::size_t n, double q) {
  return static_cast<std::size_t>(
      std::min<double>(static_cast<double>(n) - 1.0, std::ceil(q * static_cast<double>(n)) - 1.0));
}

// IEEE 754 doubles ordered as unsigned integers: positives above negatives (sign bit set), the
// negatives' magnitudes reversed. Latencies are never NaN.
std::uint64_t key_of(double x) {
  std::uint64_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return (u >> 63U) != 0 ? ~u : u | (std::uint64_t{1} << 63U);
}

// The values at ranks `k` (ascending) of v, by selection; reorders v.
std::array<double, 3> by_selection(std::vector<double>& v, const std::array<std::size_t, 3>& k) {
  std::array<double, 3> out{};
  std::size_t from = 0;  // each selection partitions v about its rank: the next searches above it
  for (std::size_t i = 0; i < k.size(); ++i) {
    if (k[i] >= from) {
      std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(k[i]),
                       v.end());
      from = k[i] + 1;
    }
    out[i] = v[k[i]];
  }
  return out;
}

std::array<double, 3> by_buckets(const std::vector<double>& v, const std::array<std::size_t, 3>& k) {
  std::uint64_t lo = ~std::uint64_t{0};
  std::uint64_t hi = 0;
  for (const double x : v) {
    const std::uint64_t key = key_of(x);
    lo = std::min(lo, key);
    hi = std::max(hi, key);
  }
  if (lo == hi) {
    return {v[0], v[0], v[0]};
  }
  int width = 0;  // bits of the keys' range
  for (std::uint64_t range = hi - lo; range != 0; range >>= 1U) {
    ++width;
  }
  const int shift = width > kBucketBits ? width - kBucketBits : 0;
  std::array<std::uint32_t, std::size_t{1} << kBucketBits> count{};
  std::vector<std::uint16_t> bucket_of(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto b = static_cast<std::uint16_t>((key_of(v[i]) - lo) >> shift);
    bucket_of[i] = b;
    count[b] += 1;
  }
  // Each rank's bucket and its rank within it; ranks in one bucket share its values.
  std::array<std::size_t, 3> group{};
  std::array<std::size_t, 3> within{};
  std::array<std::uint8_t, std::size_t{1} << kBucketBits> group_of{};  // 1 + the group of a bucket, 0 for none
  std::array<std::vector<double>, 3> members;
  std::size_t groups = 0;
  std::size_t below = 0;
  std::size_t r = 0;
  for (std::size_t b = 0; b < count.size() && r < k.size(); ++b) {
    while (r < k.size() && k[r] < below + count[b]) {
      if (group_of[b] == 0) {
        members[groups].reserve(count[b]);
        group_of[b] = static_cast<std::uint8_t>(++groups);
      }
      group[r] = group_of[b] - 1U;
      within[r] = k[r] - below;
      ++r;
    }
    below += count[b];
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (const std::uint8_t g = group_of[bucket_of[i]]; g != 0) {
      members[g - 1U].push_back(v[i]);
    }
  }
  // nth_element places one rank's value and leaves the same values around it: another rank of the
  // same bucket is selected from them as well.
  std::array<double, 3> out{};
  for (std::size_t i = 0; i < k.size(); ++i) {
    std::vector<double>& m = members[group[i]];
    std::nth_element(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(within[i]), m.end());
    out[i] = m[within[i]];
  }
  return out;
}

}  // namespace

Percentiles percentiles(std::vector<double>& v) {
  Percentiles p;
  if (v.empty()) {
    return p;
  }
  double sum = 0;
  for (const double x : v) {
    sum += x;
  }
  p.mean = Seconds(sum / static_cast<double>(v.size()));
  const std::array<std::size_t, 3> k = {rank_of(v.size(), 0.5), rank_of(v.size(), 0.9), rank_of(v.size(), 0.99)};
  const std::array<double, 3> at = v.size() < kBucketFrom ? by_selection(v, k) : by_buckets(v, k);
  p.p50 = Seconds(at[0]);
  p.p90 = Seconds(at[1]);
  p.p99 = Seconds(at[2]);
  return p;
}

}  // namespace gpusim::step
