// Sweep planning and host-side random data (see sweep.hpp).
#include "gpusim_bench/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gpusim::bench {

std::vector<std::uint64_t> geometric_sizes(std::uint64_t lo, std::uint64_t hi, std::uint64_t factor, bool include_hi) {
  if (lo == 0 || lo > hi || factor < 2) {
    throw std::invalid_argument("geometric sweep needs 0 < lo <= hi and factor >= 2");
  }
  std::vector<std::uint64_t> sizes;
  std::uint64_t s = lo;
  while (true) {
    sizes.push_back(s);
    if (s > hi / factor) {
      break;
    }
    s *= factor;
  }
  if (include_hi && sizes.back() != hi) {
    sizes.push_back(hi);
  }
  return sizes;
}

std::vector<std::uint64_t> stream_array_sizes(std::uint64_t min_ws, std::uint64_t max_ws, int arrays,
                                              std::uint64_t factor) {
  if (arrays < 1 || min_ws == 0 || min_ws > max_ws) {
    throw std::invalid_argument("stream sweep needs arrays >= 1 and 0 < min <= max");
  }
  const auto k = static_cast<std::uint64_t>(arrays);
  std::uint64_t first = 16;  // one float4
  while (first * k < min_ws) {
    first *= 2;
  }
  if (first * k > max_ws) {
    throw std::invalid_argument("no stream working set fits between min and max");
  }
  return geometric_sizes(first, max_ws / k, factor, false);
}

std::vector<std::int64_t> square_gemm_sizes(std::int64_t lo, std::int64_t hi, std::int64_t factor) {
  if (lo < 1 || hi < lo || factor < 2) {
    throw std::invalid_argument("square GEMM sweep needs 1 <= lo <= hi and factor >= 2");
  }
  std::vector<std::int64_t> sizes;
  for (const auto s : geometric_sizes(static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi),
                                      static_cast<std::uint64_t>(factor), false)) {
    sizes.push_back(static_cast<std::int64_t>(s));
  }
  return sizes;
}

std::vector<GemmShape> transformer_gemm_shapes(std::int64_t hidden, std::int64_t ffn, std::int64_t tokens) {
  if (hidden < 1 || ffn < 1 || tokens < 1) {
    throw std::invalid_argument("transformer shapes need positive hidden, ffn and tokens");
  }
  return {
      {"qkv", tokens, 3 * hidden, hidden},
      {"out_proj", tokens, hidden, hidden},
      {"ffn_up", tokens, ffn, hidden},
      {"ffn_down", tokens, hidden, ffn},
  };
}

double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

double gemm_intensity(std::int64_t m, std::int64_t n, std::int64_t k, double ab_bytes_per_element,
                      double c_bytes_per_element) {
  const double md = static_cast<double>(m);
  const double nd = static_cast<double>(n);
  const double kd = static_cast<double>(k);
  const double bytes = (md * kd + kd * nd) * ab_bytes_per_element + md * nd * c_bytes_per_element;
  if (!(bytes > 0.0)) {
    throw std::invalid_argument("GEMM intensity needs a positive shape and element size");
  }
  return gemm_flops(m, n, k) / bytes;
}

int plan_inner_iterations(double estimate_s, double target_s, int max_ops) {
  if (max_ops < 1 || !(target_s > 0.0)) {
    throw std::invalid_argument("inner iteration plan needs max_ops >= 1 and a positive target");
  }
  if (!(estimate_s > 0.0) || !std::isfinite(estimate_s)) {
    return max_ops;  // too fast to measure with one event pair
  }
  const double ops = std::ceil(target_s / estimate_s);
  return static_cast<int>(std::clamp(ops, 1.0, static_cast<double>(max_ops)));
}

Xorshift64::Xorshift64(std::uint64_t seed) : state_(seed == 0 ? 0x9E3779B97F4A7C15ull : seed) {}

std::uint64_t Xorshift64::next() {
  state_ ^= state_ << 13;
  state_ ^= state_ >> 7;
  state_ ^= state_ << 17;
  return state_;
}

float Xorshift64::next_unit_float() {
  // 24 random bits -> (0, 1]: k/2^24 for k in 1..2^24, exact in a float.
  const auto bits = static_cast<std::uint32_t>(next() >> 40);
  return static_cast<float>(bits + 1u) * 0x1p-24f;
}

void xorshift_fill(std::span<float> out, std::uint64_t seed) {
  Xorshift64 rng(seed);
  for (float& x : out) {
    x = rng.next_unit_float();
  }
}

std::vector<std::uint32_t> single_cycle_permutation(std::size_t n, std::uint64_t seed) {
  if (n == 0 || n > (std::size_t{1} << 32)) {
    throw std::invalid_argument("single-cycle permutation needs 1 <= n <= 2^32");
  }
  // Sattolo: a Fisher-Yates shuffle that draws j from [0, i) instead of [0, i] yields a
  // uniformly random cyclic permutation; read as next[i] it is one cycle through all n nodes.
  std::vector<std::uint32_t> next(n);
  std::iota(next.begin(), next.end(), 0u);
  Xorshift64 rng(seed);
  for (std::size_t i = n - 1; i > 0; --i) {
    const std::size_t j = static_cast<std::size_t>(rng.next() % i);
    std::swap(next[i], next[j]);
  }
  return next;
}

}  // namespace gpusim::bench
