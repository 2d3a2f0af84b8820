// Collective bandwidths as nccl-tests defines them (NVIDIA/nccl-tests, doc/PERFORMANCE.md):
//   algbw = S / t, with S the "size" nccl-tests prints: the full buffer of all-reduce, the full
//           (input) buffer of reduce-scatter, the full (output) buffer of all-gather;
//   busbw = algbw * factor, factor = 2(n-1)/n for all-reduce and (n-1)/n for reduce-scatter and
//           all-gather: the bandwidth each link carries in a ring, comparable to the hardware peak
//           whatever n is.
#pragma once

#include <cstdint>
#include <string>

namespace gpusim::bench {

enum class Collective { kAllReduce, kReduceScatter, kAllGather };

// Benchmark name in the measurement TOML: "allreduce", "reduce_scatter", "all_gather".
std::string collective_name(Collective c);

// busbw / algbw for n ranks. Throws std::invalid_argument when n < 1.
double bus_factor(Collective c, int nranks);

// bytes / seconds. Throws std::invalid_argument when seconds <= 0 or bytes < 0.
double algbw(double bytes, double seconds);

// algbw(bytes, seconds) * bus_factor(c, nranks).
double busbw(Collective c, double bytes, double seconds, int nranks);

// The count argument of the NCCL call for a message of `bytes` (the size above) with elements of
// elem_bytes: all-reduce count = S/e; reduce-scatter recvcount and all-gather sendcount = S/(e n).
// Rounds down; 0 means the message is too small for n ranks.
std::uint64_t collective_count(Collective c, std::uint64_t bytes, int nranks, std::uint64_t elem_bytes);

// Inverse of collective_count: the size S actually moved by a call with that count.
std::uint64_t collective_bytes(Collective c, std::uint64_t count, int nranks, std::uint64_t elem_bytes);

}  // namespace gpusim::bench
