// Sweep planning, GEMM shapes and the host-side random data.
#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>
#include <vector>

#include "gpusim_bench/sweep.hpp"

using namespace gpusim::bench;

namespace {
constexpr std::uint64_t kMiB = 1024 * 1024;
constexpr std::uint64_t kGiB = 1024 * kMiB;
}  // namespace

TEST_CASE("geometric sizes step by the factor up to the maximum", "[sweep]") {
  const std::uint64_t lo = kMiB, hi = 4 * kGiB, factor = 2;
  const auto sizes = geometric_sizes(lo, hi, factor, false);
  // 1 MiB .. 4 GiB in x2 steps: log2(4096) + 1 = 13 sizes
  REQUIRE(sizes.size() == 13);
  CHECK(sizes.front() == lo);
  CHECK(sizes.back() == hi);
  for (std::size_t i = 1; i < sizes.size(); ++i) {
    CHECK(sizes[i] == sizes[i - 1] * factor);
  }
}

TEST_CASE("geometric sizes append an off-ladder maximum only when asked", "[sweep]") {
  const std::uint64_t lo = 8, hi = kGiB + 1, factor = 4;
  const auto without = geometric_sizes(lo, hi, factor, false);
  const auto with = geometric_sizes(lo, hi, factor, true);
  CHECK(without.back() == 512 * kMiB);  // 8 * 4^13 = 2^29
  CHECK(with.size() == without.size() + 1);
  CHECK(with.back() == hi);
  CHECK(geometric_sizes(8, 8, 2, true) == std::vector<std::uint64_t>{8});
}

TEST_CASE("geometric sizes reject bad bounds", "[sweep]") {
  CHECK_THROWS_AS(geometric_sizes(0, 8, 2, false), std::invalid_argument);
  CHECK_THROWS_AS(geometric_sizes(16, 8, 2, false), std::invalid_argument);
  CHECK_THROWS_AS(geometric_sizes(1, 8, 1, false), std::invalid_argument);
}

TEST_CASE("stream arrays cover working sets from min to max", "[sweep]") {
  const std::uint64_t min_ws = kMiB, max_ws = 4 * kGiB;
  SECTION("copy touches two arrays") {
    const int arrays = 2;
    const auto s = stream_array_sizes(min_ws, max_ws, arrays, 2);
    CHECK(s.front() * arrays == min_ws);  // 2 x 512 KiB
    CHECK(s.back() * arrays == max_ws);   // 2 x 2 GiB
  }
  SECTION("triad touches three arrays") {
    const int arrays = 3;
    const auto s = stream_array_sizes(min_ws, max_ws, arrays, 2);
    CHECK(s.front() == 512 * 1024);  // smallest power of two with 3 x size >= 1 MiB
    CHECK(s.back() == kGiB);         // 3 x 1 GiB <= 4 GiB < 3 x 2 GiB
    for (auto a : s) {
      CHECK(a % 16 == 0);
      CHECK(a * arrays >= min_ws);
      CHECK(a * arrays <= max_ws);
    }
  }
  CHECK_THROWS_AS(stream_array_sizes(4 * kMiB, 5 * kMiB, 3, 2), std::invalid_argument);  // 3 x 2 MiB > 5 MiB
  CHECK_THROWS_AS(stream_array_sizes(kMiB, kGiB, 0, 2), std::invalid_argument);
}

TEST_CASE("square GEMM sizes are the powers of two 256 to 16384", "[sweep]") {
  CHECK(square_gemm_sizes(256, 16384, 2) == std::vector<std::int64_t>{256, 512, 1024, 2048, 4096, 8192, 16384});
  CHECK(square_gemm_sizes(256, 16384, 4) == std::vector<std::int64_t>{256, 1024, 4096, 16384});
  CHECK_THROWS_AS(square_gemm_sizes(0, 16, 2), std::invalid_argument);
}

TEST_CASE("transformer GEMM shapes from hidden, ffn and tokens", "[sweep]") {
  const std::int64_t H = 4096, F = 11008, T = 2048;  // Llama-2-7B, 2048 tokens
  const auto shapes = transformer_gemm_shapes(H, F, T);
  REQUIRE(shapes.size() == 4);
  CHECK(shapes[0].name == "qkv");
  CHECK((shapes[0].m == T && shapes[0].n == 3 * H && shapes[0].k == H));
  CHECK(shapes[1].name == "out_proj");
  CHECK((shapes[1].m == T && shapes[1].n == H && shapes[1].k == H));
  CHECK(shapes[2].name == "ffn_up");
  CHECK((shapes[2].m == T && shapes[2].n == F && shapes[2].k == H));
  CHECK(shapes[3].name == "ffn_down");
  CHECK((shapes[3].m == T && shapes[3].n == H && shapes[3].k == F));
  CHECK_THROWS_AS(transformer_gemm_shapes(0, F, T), std::invalid_argument);
  CHECK_THROWS_AS(transformer_gemm_shapes(H, F, -1), std::invalid_argument);
}

TEST_CASE("GEMM flops and intensity", "[sweep]") {
  const std::int64_t m = 8192, n = 8192, k = 8192;
  const double bf16 = 2.0;
  // 2mnk / ((mk + kn) * 2 B + mn * 2 B) = 2 * 8192 / 6
  CHECK(gemm_flops(m, n, k) == Approx(2.0 * 8192.0 * 8192.0 * 8192.0));
  CHECK(gemm_intensity(m, n, k, bf16, bf16) == Approx(2.0 * 8192.0 / 6.0));
  const double fp8 = 1.0;  // fp8 inputs, bf16 output
  CHECK(gemm_intensity(m, n, k, fp8, bf16) == Approx(2.0 * 8192.0 / 4.0));
  CHECK_THROWS_AS(gemm_intensity(0, 0, 0, bf16, bf16), std::invalid_argument);
}

TEST_CASE("inner iterations make a sample last about the target", "[sweep]") {
  const double target = 1e-3;
  CHECK(plan_inner_iterations(10e-6, target, 1000) == 100);  // 1 ms / 10 us
  CHECK(plan_inner_iterations(3e-3, target, 1000) == 1);     // slower than the target
  CHECK(plan_inner_iterations(1e-9, target, 1000) == 1000);  // clamped
  CHECK(plan_inner_iterations(0.0, target, 50) == 50);       // unmeasurably fast
  CHECK(plan_inner_iterations(0.3e-3, target, 1000) == 4);   // ceil(3.33)
  CHECK_THROWS_AS(plan_inner_iterations(1e-6, target, 0), std::invalid_argument);
  CHECK_THROWS_AS(plan_inner_iterations(1e-6, 0.0, 10), std::invalid_argument);
}

// (No brackets in test names: catch_discover_tests passes them through CMake lists.)
TEST_CASE("xorshift fill is uniform random data between 0 and 1, never zero", "[sweep]") {
  std::vector<float> data(100000);
  xorshift_fill(data, 42);
  std::set<float> distinct(data.begin(), data.end());
  std::size_t out_of_range = 0;
  double sum = 0.0;
  for (float x : data) {
    out_of_range += (x > 0.0f && x <= 1.0f) ? 0 : 1;  // (0, 1]
    sum += x;
  }
  CHECK(out_of_range == 0);
  CHECK(distinct.size() > data.size() * 9 / 10);
  CHECK(sum / static_cast<double>(data.size()) == Approx(0.5).margin(0.01));  // uniform mean
  std::vector<float> again(data.size());
  xorshift_fill(again, 42);
  CHECK(again == data);  // deterministic for a seed
  Xorshift64 zero_seed(0);
  CHECK(zero_seed.next() != 0);
}

TEST_CASE("the pointer-chase permutation is one cycle through every node", "[sweep]") {
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{64}, std::size_t{100003}}) {
    const auto next = single_cycle_permutation(n, 7);
    REQUIRE(next.size() == n);
    std::vector<bool> seen(n, false);
    std::size_t repeats = 0;
    std::uint32_t node = 0;
    for (std::size_t step = 0; step < n; ++step) {
      repeats += seen[node] ? 1 : 0;
      seen[node] = true;
      node = next[node];
    }
    CHECK(repeats == 0);  // n distinct nodes visited
    CHECK(node == 0);     // back at the start after exactly n steps
  }
  const auto a = single_cycle_permutation(1000, 1);
  const auto b = single_cycle_permutation(1000, 2);
  CHECK(a != b);
  std::size_t sequential = 0;  // a random order, not a stride: few i -> i+1 links
  for (std::size_t i = 0; i < a.size(); ++i) {
    sequential += a[i] == (i + 1) % a.size() ? 1 : 0;
  }
  CHECK(sequential < 10);
  CHECK_THROWS_AS(single_cycle_permutation(0, 1), std::invalid_argument);
}
