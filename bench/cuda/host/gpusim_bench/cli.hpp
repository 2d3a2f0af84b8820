// Command line of gpusim-bench:
//   gpusim-bench [-o FILE] [--gpu-id ID] [--only stream,l2,latency,gemm,launch,copy,p2p,nccl,power]
//                [--quick] [--hidden H --ffn F --tokens T] [--max-bytes SIZE] [-h|--help]
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpusim::bench {

class CliError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The benchmark groups --only selects from, in the order they run.
const std::vector<std::string>& benchmark_groups();

struct Options {
  std::optional<std::string> output;   // -o FILE; stdout when absent
  std::optional<std::string> gpu_id;   // --gpu-id: overrides the id derived from the device name
  std::vector<std::string> only;       // selected groups, in run order; all when --only is absent
  bool quick = false;                  // fewer sizes and repetitions
  std::optional<std::int64_t> hidden;  // transformer GEMM shapes (--hidden; --ffn defaults to 4H,
  std::optional<std::int64_t> ffn;     // --tokens to 4096)
  std::optional<std::int64_t> tokens;
  std::optional<std::uint64_t> max_bytes;  // --max-bytes: largest working set / message
  bool help = false;

  bool selected(std::string_view group) const;
};

// Parses the arguments after the program name. Accepts "--flag value" and "--flag=value".
// Throws CliError on an unknown flag, a missing or malformed value, an unknown --only group, a
// positional argument, --ffn/--tokens without --hidden, or a --max-bytes below 1 MiB.
Options parse_args(const std::vector<std::string>& args);

std::string usage();

}  // namespace gpusim::bench
