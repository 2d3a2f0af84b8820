// Argument parsing (see cli.hpp).
#include "gpusim_bench/cli.hpp"

#include <algorithm>
#include <charconv>

#include "gpusim_bench/format.hpp"

namespace gpusim::bench {
namespace {

std::int64_t parse_positive(std::string_view flag, const std::string& value) {
  std::int64_t v = 0;
  const auto* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, v);
  if (ec != std::errc() || ptr != end || v < 1) {
    throw CliError(std::string(flag) + " needs a positive integer, got '" + value + "'");
  }
  return v;
}

std::vector<std::string> parse_groups(const std::string& value) {
  const auto& known = benchmark_groups();
  std::vector<bool> chosen(known.size(), false);
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t comma = std::min(value.find(',', start), value.size());
    const std::string name = value.substr(start, comma - start);
    const auto it = std::find(known.begin(), known.end(), name);
    if (it == known.end()) {
      throw CliError("--only: unknown benchmark '" + name +
                     "' (choose from stream, l2, latency, gemm, launch, copy, "
                     "p2p, nccl, power)");
    }
    chosen[static_cast<std::size_t>(it - known.begin())] = true;
    start = comma + 1;
  }
  std::vector<std::string> groups;
  for (std::size_t i = 0; i < known.size(); ++i) {
    if (chosen[i]) {
      groups.push_back(known[i]);
    }
  }
  return groups;
}

}  // namespace

const std::vector<std::string>& benchmark_groups() {
  static const std::vector<std::string> groups{"stream", "l2",  "latency", "gemm", "launch",
                                               "copy",   "p2p", "nccl",    "power"};
  return groups;
}

bool Options::selected(std::string_view group) const {
  return std::find(only.begin(), only.end(), group) != only.end();
}

Options parse_args(const std::vector<std::string>& args) {
  Options opts;
  opts.only = benchmark_groups();
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inline_value;
    if (flag.rfind("--", 0) == 0) {
      const std::size_t eq = flag.find('=');
      if (eq != std::string::npos) {
        inline_value = flag.substr(eq + 1);
        flag.resize(eq);
      }
    }
    auto value = [&]() -> std::string {
      if (inline_value) {
        return *inline_value;
      }
      if (i + 1 >= args.size()) {
        throw CliError(flag + " needs a value");
      }
      return args[++i];
    };
    auto no_value = [&]() {
      if (inline_value) {
        throw CliError(flag + " takes no value");
      }
    };
    if (flag == "-h" || flag == "--help") {
      no_value();
      opts.help = true;
    } else if (flag == "-o" || flag == "--output") {
      opts.output = value();
      if (opts.output->empty()) {
        throw CliError(flag + " needs a file name");
      }
    } else if (flag == "--gpu-id") {
      opts.gpu_id = value();
      if (opts.gpu_id->empty()) {
        throw CliError("--gpu-id needs a catalog id (see `gpusim specs list`)");
      }
    } else if (flag == "--only") {
      opts.only = parse_groups(value());
    } else if (flag == "--quick") {
      no_value();
      opts.quick = true;
    } else if (flag == "--hidden") {
      opts.hidden = parse_positive(flag, value());
    } else if (flag == "--ffn") {
      opts.ffn = parse_positive(flag, value());
    } else if (flag == "--tokens") {
      opts.tokens = parse_positive(flag, value());
    } else if (flag == "--max-bytes") {
      const std::string v = value();
      try {
        opts.max_bytes = parse_size(v);
      } catch (const std::invalid_argument& e) {
        throw CliError(std::string("--max-bytes: ") + e.what());
      }
      if (*opts.max_bytes < (std::uint64_t{1} << 20)) {
        throw CliError("--max-bytes must be at least 1 MiB, got '" + v + "'");
      }
    } else if (!flag.empty() && flag.front() == '-') {
      throw CliError("unknown option '" + flag + "' (see --help)");
    } else {
      throw CliError("unexpected argument '" + flag + "' (see --help)");
    }
  }
  if ((opts.ffn || opts.tokens) && !opts.hidden) {
    throw CliError("--ffn and --tokens need --hidden");
  }
  if (opts.hidden) {
    opts.ffn = opts.ffn.value_or(4 * *opts.hidden);
    opts.tokens = opts.tokens.value_or(4096);
  }
  return opts;
}

std::string usage() {
  return R"(usage: gpusim-bench [-o FILE] [--gpu-id ID] [--only LIST] [--quick]
                    [--hidden H [--ffn F] [--tokens T]] [--max-bytes SIZE]

Measures this machine's GPUs and writes gpusim's measurement TOML (stdout by default).
Never changes clocks, power limits or any other device setting.

  -o, --output FILE   write the TOML to FILE instead of stdout
  --gpu-id ID         catalog id to record (default: derived from the device name; required
                      when the name is not in the catalog; see `gpusim specs list`)
  --only LIST         comma-separated subset of:
                      stream,l2,latency,gemm,launch,copy,p2p,nccl,power (default: all)
  --quick             fewer sizes and repetitions (a shorter smoke run)
  --hidden H          add the transformer GEMM shapes of a model with hidden size H:
  --ffn F             QKV T x 3H x H, out-proj T x H x H, FFN up T x F x H, down T x H x F
  --tokens T          (F defaults to 4H, T to 4096)
  --max-bytes SIZE    largest stream working set and collective message (default 4GiB for
                      stream, 1GiB for collectives), e.g. 2GiB, 512M
  -h, --help          this text

Runs on CUDA device 0 (choose another with CUDA_VISIBLE_DEVICES); p2p and nccl use every
visible device.
)";
}

}  // namespace gpusim::bench
