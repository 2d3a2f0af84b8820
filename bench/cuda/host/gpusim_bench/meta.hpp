// Pieces of the [meta] table that are pure text handling: the CUDA version number, the date and
// the driver version read from /proc/driver/nvidia/version when NVML is not available.
#pragma once

#include <ctime>
#include <string>
#include <string_view>

namespace gpusim::bench {

// cudaRuntimeGetVersion / cudaDriverGetVersion encoding 1000*major + 10*minor:
// 12060 -> "12.6", 13000 -> "13.0". Throws std::invalid_argument for a negative number.
std::string cuda_version_string(int version);

// "YYYY-MM" of a time in UTC: 0 -> "1970-01".
std::string year_month(std::time_t t);

// The driver version in the text of /proc/driver/nvidia/version, e.g. "NVRM version: NVIDIA UNIX
// x86_64 Kernel Module  560.35.03  Fri Aug 16 ..." -> "560.35.03"; "" when there is none.
std::string parse_proc_driver_version(std::string_view text);

}  // namespace gpusim::bench
