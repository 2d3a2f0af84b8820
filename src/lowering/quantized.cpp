// Matmuls over weights stored below their compute width (int8/int4 and ggml block formats), as
// the runtime runs them (workload::QuantizedMatmul):
//   fused       the weight is unpacked inside a 16-bit GEMM (W4A16 kernels): its weight stream runs
//               at the runtime's measured share of the bandwidth (efficiency.quantized).
//   mmq         llama.cpp's CUDA backend since June 2024 [llama-cpp-pr-8075]: before each such matmul
//               a kernel of its own quantizes the fp32 activations to q8_1 (read 4 B, write 36 B per
//               32 values) [ggml-quant-formats]; then up to 8 tokens a GEMV on the packed weights
//               (mul_mat_vec_q: MMVQ_MAX_BATCH_SIZE 8 [llama-cpp-mmq]) whose stream is bounded like any
//               batch-1 GEMV (physics/kernel.cpp: Little's law); above, MMQ tiles on int8 tensor cores
//               through mma.sync at the runtime's share of that rate (efficiency.mmq).
//   dequantize  llama.cpp before that change: the same up to MMQ_MAX_BATCH_SIZE = 32 tokens; above,
//               the weight is dequantized to an fp16 copy (read w, write 2 bytes per weight) that an
//               fp16 cuBLAS GEMM then reads [llama-cpp-pr-8075].
#include <string>
#include <vector>

#include "gpusim/lowering.hpp"

namespace gpusim::lowering {
namespace {

// Largest batch llama.cpp multiplies with its GEMV kernel mul_mat_vec_q (MMVQ_MAX_BATCH_SIZE)
// [llama-cpp-mmq].
constexpr double kMmvqMaxBatch = 8;
// Largest batch that took the MMQ kernels when FP16 tensor cores were available, before MMQ became
// the default (MMQ_MAX_BATCH_SIZE) [llama-cpp-pr-8075].
constexpr double kDequantizeAbove = 32;
// A q8_1 block: 32 int8 values, an fp16 scale and an fp16 sum, 36 bytes [ggml-quant-formats].
constexpr double kQ8_1BytesPerValue = 36.0 / 32.0;
// ggml keeps activations in fp32 between kernels.
constexpr double kActivationBytes = 4.0;
constexpr double kFp16Bytes = 2.0;

Op memory_pass(const Op& gemm, const std::string& suffix, double bytes, double written) {
  Op op;
  op.name = gemm.name + suffix;
  op.kind = OpKind::kMemoryBound;
  op.phase = gemm.phase;
  op.scope = gemm.scope;
  op.count = gemm.count;
  op.bytes = Bytes(bytes);
  op.write_share = written / bytes;
  return op;
}

bool reads_packed_weight(const Op& op, double weight_bytes) {
  return op.kind == OpKind::kGemm && op.eb == weight_bytes && op.role != OpRole::kAttention;
}

}  // namespace

void quantized_matmuls(std::vector<Op>& ops, const workload::Runtime& rt, double weight_bytes) {
  std::vector<Op> out;
  out.reserve(ops.size() * 2);
  for (Op& op : ops) {
    if (!reads_packed_weight(op, weight_bytes)) {
      out.push_back(std::move(op));
      continue;
    }
    if (rt.quantized_matmul == workload::QuantizedMatmul::kFused) {
      op.stream = rt.quantized;
      out.push_back(std::move(op));
      continue;
    }
    const double tokens = op.m * op.batch;
    if (rt.quantized_matmul == workload::QuantizedMatmul::kDequantize && tokens > kDequantizeAbove) {
      const double weights = op.k * op.n;
      out.push_back(memory_pass(op, ".dequantize", weights * (weight_bytes + kFp16Bytes), weights * kFp16Bytes));
      op.bytes = gemm_op(op.name, op.phase, op.dtype, op.m, op.n, op.k, op.ea, kFp16Bytes, op.ec).bytes;
      op.eb = kFp16Bytes;
      out.push_back(std::move(op));
      continue;
    }
    const double values = tokens * op.k;
    out.push_back(
        memory_pass(op, ".quantize", values * (kActivationBytes + kQ8_1BytesPerValue), values * kQ8_1BytesPerValue));
    if (tokens > kMmvqMaxBatch) {
      op.int8_mma = rt.mmq;
    }
    out.push_back(std::move(op));
  }
  ops = std::move(out);
}

}  // namespace gpusim::lowering
