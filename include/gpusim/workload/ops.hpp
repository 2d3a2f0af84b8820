// Lowering of a scenario into the kernels one GPU runs per step (DESIGN §1 "Plan").
//
// Training FLOPs: each GEMM is 2·m·n·k; backward is dgrad + wgrad (2x forward); flash attention
// forward is 4·b·s²·h (x0.5 causal) and backward 2.5x forward (Dao 2023). Model FLOPs for MFU
// follow PaLM (Chowdhery et al. 2022, App. B): 6·N·D + 12·L·h·s·D with N the parameters that take
// part in matrix multiplies; recomputation counts towards HFU only.
// DRAM bytes of memory-bound kernels assume one read of each input and one write of each output
// per kernel, unfused (eager PyTorch), with a fused softmax-cross-entropy.
#pragma once

#include <string>
#include <vector>

#include "gpusim/spec/hardware.hpp"
#include "gpusim/units/units.hpp"
#include "gpusim/workload/scenario.hpp"

namespace gpusim {

enum class Phase { kForward, kBackward, kRecompute, kOptimizer };
enum class OpKind { kGemm, kAttention, kMemoryBound };
// Where an op sits in the model: a transformer layer (repeated per layer of the stage), the
// embedding (first pipeline stage), the output head (last stage), or the optimizer step.
enum class Scope { kLayer, kEmbedding, kHead, kOptimizer };
const char* to_string(Phase p);  // "fwd", "bwd", "recompute", "optimizer"

struct Op {
  std::string name;
  OpKind kind = OpKind::kMemoryBound;
  Phase phase = Phase::kForward;
  DType dtype = DType::kBf16;
  double m = 0, n = 0, k = 0;     // GEMM shape of one instance
  double ea = 0, eb = 0, ec = 0;  // GEMM bytes per element of A (m x k), B (k x n), C (m x n); 0 = use bytes
  double batch = 1;               // independent GEMMs in one kernel (batched attention scores)
  Flop flops;                     // per instance (all of `batch`)
  Bytes bytes;                    // DRAM traffic per instance
  double count = 1;               // instances per micro-batch (per step for the optimizer) on one GPU
  Scope scope = Scope::kLayer;
};

// Training: the ops of one micro-batch through the slowest pipeline stage of one tensor-parallel
// rank (forward, backward, recompute), plus the optimizer step, counted once per step.
struct StepPlan {
  std::vector<Op> ops;
  double tokens_per_gpu = 0;    // tokens one data-parallel rank processes per step
  double micro_batches = 1;     // micro-batches per optimizer step per data-parallel rank
  Flop model_flops_per_gpu;     // per step, for MFU (no recompute)
  Flop hardware_flops_per_gpu;  // per step, including recompute, for HFU
};

// A GEMM C[m,n] = A[m,k] · B[k,n] with ea/eb/ec bytes per element: 2·m·n·k FLOPs.
Op gemm_op(const std::string& name, Phase phase, DType dtype, double m, double n, double k, double ea, double eb,
           double ec);
// A standalone GEMM of `dtype` as a benchmark runs it (fp8 writes a 16-bit result).
Op benchmark_gemm(DType dtype, double m, double n, double k);

// One training step on one GPU (tensor, pipeline and data parallel as the scenario says).
StepPlan lower_training(const Scenario& sc);
// Inference: the prefill of `batch` prompts, and one decode step at context length `context`.
StepPlan lower_prefill(const Scenario& sc);
StepPlan lower_decode(const Scenario& sc, double context);

// DRAM bytes of one optimizer step on one rank (its N/(t·p) parameters, sharded by ZeRO >= 1).
Bytes optimizer_step_bytes(const ModelShape& m, const TrainingConfig& tc, const ParallelConfig& par);

// Model FLOPs per token of training (6·N + 12·L·h·s).
double training_flops_per_token(const ModelShape& m, double seq_len);

}  // namespace gpusim
