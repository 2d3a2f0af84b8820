// Sweep planning: which working sets, matrix shapes and message sizes gpusim-bench measures, how
// many operations one timed sample holds, and the host-side random data (xorshift, Sattolo
// permutation) of the pointer chase and the pageable copies.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpusim::bench {

// lo, lo*factor, lo*factor^2, ... up to hi; with include_hi, hi is appended when the ladder does
// not land on it. Throws std::invalid_argument when lo == 0, lo > hi or factor < 2.
std::vector<std::uint64_t> geometric_sizes(std::uint64_t lo, std::uint64_t hi, std::uint64_t factor, bool include_hi);

// Per-array sizes of a STREAM kernel touching `arrays` arrays (copy 2, triad 3, read 1) whose
// working set arrays*size spans [min_ws, max_ws]: powers of two times the first size, which is the
// smallest power of two with arrays*size >= min_ws. Every size is a multiple of 16 bytes (one
// float4). Throws std::invalid_argument when no size fits or the inputs are invalid.
std::vector<std::uint64_t> stream_array_sizes(std::uint64_t min_ws, std::uint64_t max_ws, int arrays,
                                              std::uint64_t factor);

// Square GEMM edge lengths lo, lo*factor, ... <= hi (256 ... 16384 by default).
std::vector<std::int64_t> square_gemm_sizes(std::int64_t lo, std::int64_t hi, std::int64_t factor);

struct GemmShape {
  std::string name;  // "square", "qkv", "out_proj", "ffn_up", "ffn_down"
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
};

// The four weight GEMMs of one transformer layer's forward pass over T tokens (hidden H, FFN F):
// QKV T x 3H x H, attention output projection T x H x H, FFN up T x F x H, FFN down T x H x F
// (m x n x k). Throws std::invalid_argument unless all three are positive.
std::vector<GemmShape> transformer_gemm_shapes(std::int64_t hidden, std::int64_t ffn, std::int64_t tokens);

// FLOPs of one GEMM, 2*m*n*k (a multiply and an add per term).
double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k);

// Arithmetic intensity of a GEMM in FLOP per byte of compulsory DRAM traffic: 2mnk over reading
// A (m x k) and B (k x n) once and writing C (m x n) once (beta = 0, so C is not read).
double gemm_intensity(std::int64_t m, std::int64_t n, std::int64_t k, double ab_bytes_per_element,
                      double c_bytes_per_element);

// Operations per timed sample so that a sample lasts about target_s when one operation takes
// estimate_s: ceil(target_s / estimate_s) clamped to [1, max_ops]. CUDA events resolve about
// 0.5 us, so short kernels are timed in batches. Throws std::invalid_argument when max_ops < 1 or
// target_s is not positive.
int plan_inner_iterations(double estimate_s, double target_s, int max_ops);

// xorshift64 (Marsaglia 2003). A zero state is replaced by a fixed non-zero constant.
class Xorshift64 {
 public:
  explicit Xorshift64(std::uint64_t seed);
  std::uint64_t next();
  // Uniform in (0, 1]: never zero.
  float next_unit_float();

 private:
  std::uint64_t state_;
};

// Fills `out` with xorshift values uniform in (0, 1] (random data, never zeros).
void xorshift_fill(std::span<float> out, std::uint64_t seed);

// next[i] of a random permutation that is one single cycle through all n nodes (Sattolo's
// algorithm, 1986), so a pointer chase from any node visits every node before it repeats.
// Throws std::invalid_argument when n == 0 or n > 2^32.
std::vector<std::uint32_t> single_cycle_permutation(std::size_t n, std::uint64_t seed);

}  // namespace gpusim::bench
