// nccl-tests bus bandwidth (PERFORMANCE.md).
#include <catch2/catch.hpp>

#include <stdexcept>

#include "gpusim_bench/collectives.hpp"

using namespace gpusim::bench;

TEST_CASE("collective benchmark names", "[collectives]") {
  CHECK(collective_name(Collective::kAllReduce) == "allreduce");
  CHECK(collective_name(Collective::kReduceScatter) == "reduce_scatter");
  CHECK(collective_name(Collective::kAllGather) == "all_gather");
}

TEST_CASE("all-reduce bus bandwidth is algbw * 2(n-1)/n", "[collectives]") {
  const double bytes = 1073741824.0;  // 1 GiB
  const double seconds = 5.0e-3;
  const double alg = bytes / seconds;  // algbw = S / t
  for (const int n : {2, 4, 8}) {
    const double expected = alg * 2.0 * (n - 1) / n;  // busbw = algbw * 2(n-1)/n
    CHECK(busbw(Collective::kAllReduce, bytes, seconds, n) == Approx(expected));
  }
  CHECK(bus_factor(Collective::kAllReduce, 8) == Approx(1.75));
  CHECK(bus_factor(Collective::kAllReduce, 2) == Approx(1.0));
}

TEST_CASE("reduce-scatter and all-gather bus bandwidth is algbw * (n-1)/n", "[collectives]") {
  const double bytes = 268435456.0;  // 256 MiB
  const double seconds = 2.0e-3;
  const int n = 8;
  const double expected = bytes / seconds * (n - 1) / n;  // busbw = algbw * (n-1)/n
  CHECK(busbw(Collective::kReduceScatter, bytes, seconds, n) == Approx(expected));
  CHECK(busbw(Collective::kAllGather, bytes, seconds, n) == Approx(expected));
  CHECK(bus_factor(Collective::kAllGather, 1) == 0.0);  // one rank moves nothing over links
}

TEST_CASE("algbw and busbw reject bad inputs", "[collectives]") {
  CHECK(algbw(1e9, 0.5) == Approx(2e9));
  CHECK_THROWS_AS(algbw(1e9, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(algbw(-1.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(bus_factor(Collective::kAllReduce, 0), std::invalid_argument);
}

TEST_CASE("NCCL counts follow nccl-tests sizes", "[collectives]") {
  const std::uint64_t float_bytes = 4;
  const std::uint64_t size = 1 << 20;  // 1 MiB message
  const int n = 4;
  // all-reduce: count = S / e; reduce-scatter recvcount, all-gather sendcount = S / (e n)
  CHECK(collective_count(Collective::kAllReduce, size, n, float_bytes) == size / float_bytes);
  CHECK(collective_count(Collective::kReduceScatter, size, n, float_bytes) == size / (float_bytes * n));
  CHECK(collective_count(Collective::kAllGather, size, n, float_bytes) == size / (float_bytes * n));
  CHECK(collective_bytes(Collective::kAllGather, size / (float_bytes * n), n, float_bytes) == size);
  // 8 B cannot be split over 3 ranks of 4-byte floats
  CHECK(collective_count(Collective::kAllGather, 8, 3, float_bytes) == 0);
  // a size that does not divide is rounded down to what the call actually moves
  const std::uint64_t odd = 1000;
  const auto count = collective_count(Collective::kReduceScatter, odd, 3, float_bytes);
  CHECK(count == 83);
  CHECK(collective_bytes(Collective::kReduceScatter, count, 3, float_bytes) == 996);
  CHECK_THROWS_AS(collective_count(Collective::kAllReduce, size, n, 0), std::invalid_argument);
}
