// Private to src/step/: kernel sums of a pass and the combination of a training step from its
// parts (equations in include/gpusim/step.hpp).
#pragma once

#include <vector>

#include "gpusim/step.hpp"

namespace gpusim::step {

// Kernel time of one micro-batch through one pipeline stage (or of one inference pass), and the
// optimizer step.
struct StepKernels {
  Seconds micro;          // all kernels of one micro-batch
  Seconds compute_bound;  // of `micro`
  Flop compute_bound_flops;
  Seconds memory_bound;  // of `micro`
  Seconds backward;      // backward and recompute of one micro-batch
  Flop recompute_flops;  // of one micro-batch
  double kernels = 0;    // per micro-batch
  Bytes dram;            // DRAM traffic of one micro-batch
  Seconds optimizer;     // once per step
  Bytes optimizer_dram;
  double optimizer_kernels = 0;
  StepKernels& operator+=(const StepKernels& o);
  [[nodiscard]] StepKernels scaled(double k) const;  // micro-batch parts only
};

struct Evaluator::Kernels {
  std::vector<lowering::Op> ops;
  std::vector<physics::KernelTime> times;  // of each op, one instance
  StepKernels layer;                       // one transformer layer
  StepKernels embedding;
  StepKernels head;
};

// Times every op once and sums them per scope.
std::shared_ptr<const Evaluator::Kernels> time_pass(std::vector<lowering::Op> ops, const hardware::GpuSpec& gpu,
                                                    double clock);
// The power mix of a training step or an inference pass: shares of compute-bound (tensor-core or
// CUDA-core by `dtype`) and bandwidth-bound kernel time, and the DRAM traffic rate.
physics::PowerMix power_mix(Seconds compute_bound, Seconds memory_bound, Bytes dram, Seconds period, DType dtype);
// The kernels of one micro-batch through a stage of `layers` layers that holds the head and, when
// `with_embedding`, the embedding.
StepKernels stage_kernels(const Evaluator::Kernels& k, double layers, bool with_embedding);
// Per-op shares of a step: each op's time × its repeats (layers for layer ops, then micro-batches),
// aggregated by name and phase, largest first.
void add_shares(const Evaluator::Kernels& k, double layers, bool with_embedding, double micro_batches,
                std::vector<OpShare>& out);
void sort_shares(std::vector<OpShare>& out);

// Everything of the step but the input pipeline: stage, bubble, exposed communication, overhead,
// launch stall (time = compute + overhead + communication + bubble).
StepBreakdown combine_training_step(const StepKernels& k, double micro_batches, const physics::ParallelComm& comm,
                                    const workload::Layout& layout, const hardware::GpuSpec& g,
                                    const workload::Runtime& rt);
// One inference pass: kernels + kernel gaps + launch stall.
Seconds pass_time(const StepKernels& k, const hardware::GpuSpec& g, const workload::Runtime& rt);

}  // namespace gpusim::step
