// Combination of one training step from its parts (shared by `estimate` and the planner, so a
// layout the planner ranks is timed exactly as `estimate` times it). Equations in estimate.hpp.
#pragma once

#include "gpusim/model/estimate.hpp"
#include "gpusim/model/parallel.hpp"
#include "gpusim/workload/ops.hpp"

namespace gpusim {

// Kernel time of one micro-batch through one pipeline stage (or of one inference pass), and the
// optimizer step.
struct StepKernels {
  Seconds micro;          // all kernels of one micro-batch
  Seconds compute_bound;  // of `micro`
  Seconds memory_bound;   // of `micro`
  Seconds backward;       // backward and recompute of one micro-batch
  double kernels = 0;     // per micro-batch
  Seconds optimizer;      // once per step
  double optimizer_kernels = 0;
  StepKernels& operator+=(const StepKernels& o);
  [[nodiscard]] StepKernels scaled(double k) const;  // micro-batch parts only
};

// Kernel sums per scope of a plan: one transformer layer (the plan's layer ops divided by
// `layers`), the embedding, the output head, and the optimizer.
struct ScopedKernels {
  StepKernels layer;
  StepKernels embedding;
  StepKernels head;
  StepKernels optimizer;
};
ScopedKernels scoped_kernels(const StepPlan& plan, const GpuSpec& gpu, double clock_scale, double layers);

// Everything of the step but the input pipeline: stage, bubble, exposed communication, overhead,
// launch stall (StepBreakdown fields; time = compute + overhead + communication + bubble).
StepBreakdown combine_step(const StepKernels& k, double micro_batches, const ParallelComm& comm,
                           const ParallelConfig& par, const GpuSpec& g, bool cuda_graphs);

}  // namespace gpusim
