// Step combination (equations in estimate.hpp and parallel.hpp).
#include "gpusim/model/training_step.hpp"

#include <algorithm>

#include "gpusim/model/kernel.hpp"

namespace gpusim {

StepKernels& StepKernels::operator+=(const StepKernels& o) {
  micro += o.micro;
  compute_bound += o.compute_bound;
  memory_bound += o.memory_bound;
  backward += o.backward;
  kernels += o.kernels;
  optimizer += o.optimizer;
  optimizer_kernels += o.optimizer_kernels;
  return *this;
}

StepKernels StepKernels::scaled(double k) const {
  StepKernels s = *this;
  s.micro = micro * k;
  s.compute_bound = compute_bound * k;
  s.memory_bound = memory_bound * k;
  s.backward = backward * k;
  s.kernels = kernels * k;
  return s;
}

ScopedKernels scoped_kernels(const StepPlan& plan, const GpuSpec& gpu, double clock_scale, double layers) {
  ScopedKernels s;
  for (const Op& op : plan.ops) {
    const KernelTime kt = kernel_time(op, gpu, clock_scale);
    const Seconds t = kt.time * op.count;
    StepKernels* into = op.scope == Scope::kLayer       ? &s.layer
                        : op.scope == Scope::kEmbedding ? &s.embedding
                        : op.scope == Scope::kHead      ? &s.head
                                                        : &s.optimizer;
    if (op.scope == Scope::kOptimizer) {
      into->optimizer += t;
      into->optimizer_kernels += op.count;
      continue;
    }
    into->micro += t;
    into->kernels += op.count;
    (kt.compute_bound() ? into->compute_bound : into->memory_bound) += t;
    if (op.phase == Phase::kBackward || op.phase == Phase::kRecompute) {
      into->backward += t;
    }
  }
  s.layer = s.layer.scaled(1.0 / layers);
  return s;
}

// The host launches kernels while the GPU runs earlier ones; when launching takes longer than the
// GPU needs for them, the GPU waits: stall = max(0, kernels × launch cost − GPU time).
StepBreakdown combine_step(const StepKernels& k, double micro, const ParallelComm& comm, const ParallelConfig& par,
                           const GpuSpec& g, bool cuda_graphs) {
  StepBreakdown s;
  const Seconds gaps = g.efficiency.kernel_overhead * k.kernels + k.micro * g.efficiency.training_overhead;
  const Seconds stage = k.micro + gaps + comm.tensor_per_microbatch + comm.pipeline_per_microbatch;
  const double fill = static_cast<double>(par.pipeline - 1) / par.virtual_stages;
  s.compute = k.micro * micro + k.optimizer;
  s.gemm = k.compute_bound * micro;
  s.memory_bound = k.memory_bound * micro + k.optimizer;
  s.kernels = k.kernels * micro + k.optimizer_kernels;
  s.bubble = stage * fill;
  const Seconds window = comm.data_hides_behind_all ? k.micro * micro : k.backward;
  const Seconds hidden = std::min(comm.data_overlappable, window * g.efficiency.comm_overlap);
  const Seconds per_micro = comm.tensor_per_microbatch + comm.pipeline_per_microbatch;
  s.communication_total = comm.data_total + per_micro * micro;
  s.communication = comm.data_total - hidden + per_micro * micro;
  s.overhead =
      gaps * micro + g.efficiency.kernel_overhead * k.optimizer_kernels + k.optimizer * g.efficiency.training_overhead;
  s.host_launch = (cuda_graphs ? g.efficiency.launch_graph : g.efficiency.launch_eager) * s.kernels;
  const Seconds gpu_time = s.compute + s.overhead;
  s.launch_stall = s.host_launch > gpu_time ? s.host_launch - gpu_time : Seconds(0);
  s.overhead += s.launch_stall;
  s.time = s.compute + s.overhead + s.communication + s.bubble;
  return s;
}

}  // namespace gpusim
