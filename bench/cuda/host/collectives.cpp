// nccl-tests bus bandwidth (see collectives.hpp).
#include "gpusim_bench/collectives.hpp"

#include <stdexcept>

namespace gpusim::bench {
namespace {

void check_ranks(int nranks) {
  if (nranks < 1) {
    throw std::invalid_argument("a collective needs at least one rank");
  }
}

}  // namespace

std::string collective_name(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "allreduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllGather:
      return "all_gather";
  }
  throw std::invalid_argument("unknown collective");
}

double bus_factor(Collective c, int nranks) {
  check_ranks(nranks);
  const double n = nranks;
  switch (c) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1.0) / n;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      return (n - 1.0) / n;
  }
  throw std::invalid_argument("unknown collective");
}

double algbw(double bytes, double seconds) {
  if (!(seconds > 0.0) || bytes < 0.0) {
    throw std::invalid_argument("bandwidth needs a positive time and non-negative bytes");
  }
  return bytes / seconds;
}

double busbw(Collective c, double bytes, double seconds, int nranks) {
  return algbw(bytes, seconds) * bus_factor(c, nranks);
}

std::uint64_t collective_count(Collective c, std::uint64_t bytes, int nranks, std::uint64_t elem_bytes) {
  check_ranks(nranks);
  if (elem_bytes == 0) {
    throw std::invalid_argument("element size must be positive");
  }
  if (c == Collective::kAllReduce) {
    return bytes / elem_bytes;
  }
  return bytes / (elem_bytes * static_cast<std::uint64_t>(nranks));
}

std::uint64_t collective_bytes(Collective c, std::uint64_t count, int nranks, std::uint64_t elem_bytes) {
  check_ranks(nranks);
  if (c == Collective::kAllReduce) {
    return count * elem_bytes;
  }
  return count * elem_bytes * static_cast<std::uint64_t>(nranks);
}

}  // namespace gpusim::bench
