// [meta] text helpers.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "gpusim_bench/meta.hpp"

using namespace gpusim::bench;

TEST_CASE("CUDA version numbers print as major.minor", "[meta]") {
  const int major = 12, minor = 6;
  CHECK(cuda_version_string(1000 * major + 10 * minor) == "12.6");
  CHECK(cuda_version_string(13000) == "13.0");
  CHECK(cuda_version_string(11080) == "11.8");
  CHECK_THROWS_AS(cuda_version_string(-1), std::invalid_argument);
}

TEST_CASE("the date is year and month in UTC", "[meta]") {
  CHECK(year_month(0) == "1970-01");
  const std::time_t nov_2026 = 1793491200;  // 2026-11-01T00:00:00Z
  CHECK(year_month(nov_2026) == "2026-11");
  CHECK(year_month(nov_2026 - 1) == "2026-10");
}

TEST_CASE("the driver version is read from /proc/driver/nvidia/version", "[meta]") {
  CHECK(parse_proc_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  560.35.03  Fri Aug 16 21:39:15 "
                                  "UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n") == "560.35.03");
  CHECK(parse_proc_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build  "
                                  "(dvs-builder@U16-I3-B03-4-3)\n") == "575.57.08");
  CHECK(parse_proc_driver_version("").empty());
  CHECK(
      parse_proc_driver_version("NVRM version: NVIDIA UNIX Kernel Module\nGCC version: gcc version 12.2.0\n").empty());
}
