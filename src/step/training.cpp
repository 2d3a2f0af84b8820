// Kernel sums and the combination of a training step (equations in include/gpusim/step.hpp).
#include <algorithm>
#include <map>

#include "step/internal.hpp"

namespace gpusim::step {

using lowering::Op;
using lowering::Phase;
using lowering::Scope;

StepKernels& StepKernels::operator+=(const StepKernels& o) {
  micro += o.micro;
  compute_bound += o.compute_bound;
  compute_bound_flops += o.compute_bound_flops;
  memory_bound += o.memory_bound;
  arithmetic += o.arithmetic;
  backward += o.backward;
  attention += o.attention;
  recompute_flops += o.recompute_flops;
  kernels += o.kernels;
  backward_kernels += o.backward_kernels;
  dram += o.dram;
  optimizer += o.optimizer;
  optimizer_dram += o.optimizer_dram;
  optimizer_kernels += o.optimizer_kernels;
  return *this;
}

StepKernels StepKernels::scaled(double k) const {
  StepKernels s = *this;
  s.micro = micro * k;
  s.compute_bound = compute_bound * k;
  s.compute_bound_flops = compute_bound_flops * k;
  s.memory_bound = memory_bound * k;
  s.arithmetic = arithmetic * k;
  s.backward = backward * k;
  s.attention = attention * k;
  s.recompute_flops = recompute_flops * k;
  s.kernels = kernels * k;
  s.backward_kernels = backward_kernels * k;
  s.dram = dram * k;
  return s;
}

std::shared_ptr<const Evaluator::Kernels> time_pass(Ops ops, const hardware::GpuSpec& gpu, double clock) {
  auto k = std::make_shared<Evaluator::Kernels>();
  k->ops = std::move(ops);
  k->times.reserve(k->ops->size());
  for (const Op& op : *k->ops) {
    const physics::KernelTime kt = physics::kernel_time(op, gpu, clock);
    k->times.push_back(kt);
    StepKernels* into =
        op.scope == Scope::kLayer ? &k->layer : (op.scope == Scope::kEmbedding ? &k->embedding : &k->head);
    const Seconds t = kt.time * op.count;
    into->micro += t;
    into->kernels += op.count;
    into->dram += kt.dram * op.count;
    (kt.compute_bound() ? into->compute_bound : into->memory_bound) += t;
    into->arithmetic += kt.busy_arithmetic() * op.count;
    if (kt.compute_bound()) {
      into->compute_bound_flops += op.flops * op.count;
    }
    if (op.phase == Phase::kBackward || op.phase == Phase::kRecompute) {
      into->backward += t;
      into->backward_kernels += op.count;
    }
    if (op.kind == lowering::OpKind::kAttention) {
      into->attention += t;
    }
    if (op.phase == Phase::kRecompute) {
      into->recompute_flops += op.flops * op.count;
    }
  }
  return k;
}

StepKernels stage_kernels(const Evaluator::Kernels& k, double layers, bool with_embedding) {
  StepKernels s = k.layer.scaled(layers);
  s += k.head;
  if (with_embedding) {
    s += k.embedding;
  }
  return s;
}

void add_shares(const Evaluator::Kernels& k, double layers, bool with_embedding, double micro_batches,
                std::vector<OpShare>& out) {
  for (std::size_t i = 0; i < k.ops->size(); ++i) {
    const Op& op = (*k.ops)[i];
    if (op.scope == Scope::kEmbedding && !with_embedding) {
      continue;
    }
    const double repeat = op.count * (op.scope == Scope::kLayer ? layers : 1.0) * micro_batches;
    auto it = std::find_if(out.begin(), out.end(),
                           [&op](const OpShare& s) { return s.name == op.name && s.phase == op.phase; });
    if (it == out.end()) {
      out.push_back(OpShare{op.name, op.phase, op.kind, Flop(0), Bytes(0), Seconds(0), false});
      it = out.end() - 1;
    }
    it->flops += op.flops * repeat;
    it->bytes += op.bytes * repeat;
    it->time += k.times[i].time * repeat;
    it->compute_bound = k.times[i].compute_bound();
  }
}

physics::PowerMix power_mix(Seconds arithmetic, Seconds kernels, Bytes dram, Seconds period, DType dtype) {
  physics::PowerMix mix;
  if (period.value() <= 0) {
    return mix;
  }
  (physics::on_tensor_cores(dtype) ? mix.tensor : mix.simt) = std::min(1.0, arithmetic / period);
  mix.memory = std::min(1.0 - mix.tensor - mix.simt, (kernels - arithmetic) / period);
  mix.dram = dram / period;
  return mix;
}

double dither_share(Watts limit, Seconds t_lo, Watts p_lo, Seconds t_hi, Watts p_hi) {
  const double slack_lo = (limit * t_lo - p_lo * t_lo).value();   // J below the limit: ≥ 0
  const double excess_hi = (p_hi * t_hi - limit * t_hi).value();  // J above it: > 0
  if (slack_lo <= 0 || excess_hi <= 0) {
    return slack_lo <= 0 ? 0.0 : 1.0;
  }
  return slack_lo / (slack_lo + excess_hi);
}

Dithered dithered(double clock, Seconds t_lo, Watts p_lo, Seconds t_hi, Watts p_hi, double phi) {
  const Seconds at_lo = t_lo * (1.0 - phi);
  const Seconds at_hi = t_hi * phi;
  const Seconds total = at_lo + at_hi;
  return {(clock * at_lo + (clock + kClockStep) * at_hi) / total, (p_lo * at_lo + p_hi * at_hi) / total};
}

StepBreakdown blend(const StepBreakdown& lo, const StepBreakdown& hi, double phi) {
  StepBreakdown s = lo;
  for (Seconds StepBreakdown::*f :
       {&StepBreakdown::time, &StepBreakdown::compute, &StepBreakdown::gemm, &StepBreakdown::memory_bound,
        &StepBreakdown::communication, &StepBreakdown::communication_total, &StepBreakdown::bubble,
        &StepBreakdown::input_stall, &StepBreakdown::offload, &StepBreakdown::overhead, &StepBreakdown::launch_stall,
        &StepBreakdown::host_launch}) {
    s.*f = lo.*f + (hi.*f - lo.*f) * phi;
  }
  return s;
}

void sort_shares(std::vector<OpShare>& out) {
  // Ties keep the order of (name, phase), so reports are stable.
  std::stable_sort(out.begin(), out.end(), [](const OpShare& a, const OpShare& b) {
    if (a.time != b.time) {
      return a.time > b.time;
    }
    return std::tie(a.name, a.phase) < std::tie(b.name, b.phase);
  });
}

// Offload traffic the step waits for (physics/offload.cpp): a micro-batch's gradient copy hides
// behind its backward, the parameter prefetch behind the whole pass, and the activation copies out
// and back behind the forward and the backward; the CPU optimizer step and the parameters' return
// sit between steps, exposed (ZeRO-Offload without the delayed parameter update
// [ren-zero-offload-2021]), and so do a paged optimizer's migrations of its evicted states.
namespace {
Seconds exposed_offload(const StepKernels& k, double micro, const physics::OffloadCost& o) {
  auto beyond = [](Seconds copy, Seconds window) { return copy > window ? copy - window : Seconds(0); };
  const Seconds forward = k.micro - k.backward;
  const Seconds per_micro = beyond(o.gradients_out, k.backward) + beyond(o.parameter_fetch, k.micro) +
                            beyond(o.activations_each_way, forward) + beyond(o.activations_each_way, k.backward);
  return per_micro * micro + o.optimizer + o.parameters_in + o.optimizer_paging;
}
}  // namespace

StepBreakdown combine_training_step(const StepKernels& k, double micro, const physics::ParallelComm& comm,
                                    const workload::Layout& par, const hardware::GpuSpec& g,
                                    const workload::Runtime& rt, const physics::OffloadCost& offload) {
  StepBreakdown s;
  const Seconds gaps = g.efficiency.kernel_overhead * k.kernels + k.micro * rt.remainder;
  // Tensor- and pipeline-parallel traffic sits on the critical path of each micro-batch, but for
  // the share the runtime overlaps with its GEMMs (async TP, userbuffers) or compute (async p2p).
  // The MoE all-to-all likewise, for the share the runtime overlaps with compute (DualPipe's
  // paired forward and backward chunks [deepseek-v3-2024]).
  const Seconds exposed_micro =
      comm.tensor_per_microbatch * (1.0 - rt.overlap.tensor_parallel) +
      comm.pipeline_per_microbatch * (1.0 - rt.overlap.pipeline) +
      comm.expert_per_microbatch * (1.0 - rt.overlap.expert_parallel) +
      // Ring attention sends the next K/V chunk while it attends over the
      // current one [megatron-context-parallel]: only what outlasts the
      // attention kernels waits.
      (comm.context_per_microbatch > k.attention ? comm.context_per_microbatch - k.attention : Seconds(0));
  const Seconds stage = k.micro + gaps + exposed_micro;
  const double fill = static_cast<double>(par.pipeline - 1) / par.virtual_stages;
  s.compute = k.micro * micro + k.optimizer;
  s.gemm = k.compute_bound * micro;
  s.gemm_flops = k.compute_bound_flops * micro;
  s.memory_bound = k.memory_bound * micro + k.optimizer;
  s.kernels = k.kernels * micro + k.optimizer_kernels;
  s.bubble = stage * fill;
  s.overhead = gaps * micro + g.efficiency.kernel_overhead * k.optimizer_kernels + k.optimizer * rt.remainder;
  const Seconds launch = physics::launch_cost(g, rt);
  s.host_launch = launch * s.kernels;
  // Data-parallel traffic hides behind the backward of the last micro-batch (gradient buckets)
  // or, for ZeRO-3's parameter gathers, behind all compute, as far as the runtime overlaps it.
  // A kernel starts once the GPU is free and the host has launched it (the host runs ahead of the
  // GPU, never behind), so over three phases, A (all before the last backward), B (the last
  // backward) and C (the optimizer), each of GPU time g and host launch time h:
  //   A ends at max(h_A, g_A); B at max(end_A + g_B, h_A + h_B); C at max(end_B + g_C, h_A + h_B + h_C)
  // and the window is B's span, end_B − end_A (the collectives run on their own stream). When
  // the GPU waits on no launch this is the plain sum; when the host paces every phase, the
  // launches' time. The optimizer waits for the gradients: what the window does not hide delays
  // C on the GPU, C = max(end_B + exposed + g_C, h_A + h_B + h_C), so a host still launching the
  // optimizer hides it too. A faster GPU then never lengthens the step.
  const Seconds busy = s.compute + s.overhead;
  const Seconds g_b = k.backward * (1.0 + rt.remainder) + g.efficiency.kernel_overhead * k.backward_kernels;
  const Seconds g_c = k.optimizer * (1.0 + rt.remainder) + g.efficiency.kernel_overhead * k.optimizer_kernels;
  const Seconds h_b = launch * k.backward_kernels;
  const Seconds h_c = launch * k.optimizer_kernels;
  const Seconds g_a = busy > g_b + g_c ? busy - g_b - g_c : Seconds(0);
  const Seconds h_a = s.host_launch > h_b + h_c ? s.host_launch - h_b - h_c : Seconds(0);
  const Seconds end_a = std::max(h_a, g_a);
  const Seconds end_b = std::max(end_a + g_b, h_a + h_b);
  const Seconds end = std::max(end_b + g_c, s.host_launch);
  s.launch_stall = end > busy ? end - busy : Seconds(0);
  const Seconds window = comm.data_hides_behind_all ? end_b : end_b - end_a;
  const double overlap =
      std::min(comm.overlap_cap, comm.data_hides_behind_all ? rt.overlap.parameter_gather : rt.overlap.data_parallel);
  const Seconds hidden = std::min(comm.data_overlappable, window * overlap);
  s.communication_total = comm.data_total + (comm.tensor_per_microbatch + comm.pipeline_per_microbatch +
                                             comm.expert_per_microbatch + comm.context_per_microbatch) *
                                                micro;
  const Seconds delayed = std::max(end_b + (comm.data_total - hidden) + g_c, s.host_launch);
  s.communication = (delayed - end) + exposed_micro * micro;
  s.overhead += s.launch_stall;
  s.offload = exposed_offload(k, micro, offload);
  s.time = s.compute + s.overhead + s.communication + s.bubble + s.offload;
  return s;
}

Seconds pass_time(const StepKernels& k, const hardware::GpuSpec& g, const workload::Runtime& rt) {
  const Seconds gpu = k.micro * (1.0 + rt.remainder) + g.efficiency.kernel_overhead * k.kernels;
  return gpu + physics::launch_stall(physics::launch_cost(g, rt) * k.kernels, gpu);
}

}  // namespace gpusim::step
