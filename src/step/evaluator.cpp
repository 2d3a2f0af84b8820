// The evaluator (equations in include/gpusim/step.hpp): one step of a (hardware, job, layout,
// runtime) tuple, training or inference.
#include <algorithm>
#include <cmath>

#include "step/internal.hpp"

namespace gpusim::step {

using hardware::System;
using workload::Layout;

Evaluator::Evaluator(System system, workload::Job job, workload::Runtime runtime)
    : system_(std::move(system)), job_(std::move(job)), runtime_(runtime) {
  if (job_.training) {
    counts_ = workload::model_counts(job_.model, *job_.training);
  }
}

Evaluator::KernelsAtClocks& Evaluator::kernels_of(const Layout& layout) {
  // Everything of the layout the lowering reads: ZeRO-3 shards the parameters, which changes what
  // autocast casts (physics::parameter_bytes); expert parallelism sets the grouped GEMMs' experts
  // and, with the imbalance, their rows; context parallelism a rank's share of each sequence.
  const KernelKey key(layout.tensor, layout.sequence, layout.micro_batch, static_cast<int>(layout.recompute),
                      layout.zero >= 3, layout.expert, layout.expert_imbalance, layout.context);
  if (last_lowered_ == nullptr || !(key == last_key_)) {
    last_lowered_ = &kernels_[key];  // a map's elements stay where they are
    last_key_ = key;
  }
  return *last_lowered_;
}

const Evaluator::Kernels& Evaluator::kernels(KernelsAtClocks& lowered, const Layout& layout, double clock) {
  auto& v = lowered.by_clock;
  auto it = std::lower_bound(v.begin(), v.end(), clock, [](const auto& e, double c) { return e.first < c; });
  if (it == v.end() || it->first != clock) {
    auto ops = lowering::lower_training(job_.model, *job_.training, layout, runtime_);
    it = v.emplace(it, clock, time_pass(std::move(ops), system_.gpu, clock));
  }
  return *it->second;
}

const std::pair<System, physics::Fabric>& Evaluator::system_for(int gpus) {
  const int n = gpus > 0 ? gpus : system_.gpus;
  auto it = systems_.find(n);
  if (it == systems_.end()) {
    System s = scenario::with_gpus(system_, n);
    physics::Fabric f = physics::make_fabric(s);
    it = systems_.emplace(n, std::make_pair(std::move(s), std::move(f))).first;
  }
  return it->second;
}

physics::ParallelComm Evaluator::communication(const Layout& layout, const System& sys, const physics::Fabric& fabric) {
  const workload::ModelShape& m = job_.model;
  const workload::Training& t = *job_.training;
  Layout without_zero = layout;
  without_zero.zero = 0;
  if (!micro_comm_ || micro_comm_->gpus != sys.gpus || !(micro_comm_->layout == without_zero)) {
    micro_comm_.emplace(
        MicroComm{sys.gpus, without_zero, physics::micro_batch_comm(fabric, sys.gpus_per_node, m, t, layout)});
  }
  const DataKey key(sys.gpus, layout.tensor, layout.pipeline, layout.data, layout.context, layout.micro_batch);
  if (!data_key_ || !(*data_key_ == key)) {
    data_key_ = key;
    data_comm_.clear();
  }
  auto it = std::find_if(data_comm_.begin(), data_comm_.end(), [&](const auto& d) {
    return std::get<0>(d) == layout.zero && std::get<1>(d) == layout.expert;
  });
  if (it == data_comm_.end()) {
    physics::ParallelComm data;
    physics::add_data_comm(fabric, sys.gpus_per_node, t, counts_, layout, runtime_, data);
    it = data_comm_.insert(data_comm_.end(), {layout.zero, layout.expert, data});
  }
  physics::ParallelComm c = micro_comm_->comm;
  const physics::ParallelComm& d = std::get<2>(*it);
  c.data_total = d.data_total;
  c.data_overlappable = d.data_overlappable;
  c.data_hides_behind_all = d.data_hides_behind_all;
  c.overlap_cap = d.overlap_cap;
  return c;
}

physics::MemoryBreakdown Evaluator::training_memory(const Layout& layout) const {
  if (!last_memory_ || !(last_memory_->first == layout)) {
    last_memory_.emplace(layout,
                         physics::training_memory(job_.model, *job_.training, counts_, layout, runtime_, system_.gpu));
  }
  return last_memory_->second;
}

physics::MemoryBreakdown Evaluator::memory(const Layout& layout) const {
  if (job_.training) {
    physics::MemoryBreakdown mb = training_memory(layout);
    mb.host_capacity = system_.host.memory / static_cast<double>(std::max(1, system_.gpus_per_node));
    return mb;
  }
  return inference_memory(layout);
}

Evaluation Evaluator::evaluate(const Layout& layout, int gpus, const Options& options) {
  const auto& [sys, fabric] = system_for(gpus);
  return job_.training ? evaluate_training(layout, sys, fabric, options)
                       : evaluate_inference(layout, sys, fabric, options);
}

Evaluation Evaluator::evaluate_training(const Layout& layout, const System& sys, const physics::Fabric& fabric,
                                        const Options& options) {
  const workload::Training& t = *job_.training;
  const workload::ModelShape& m = job_.model;
  const hardware::GpuSpec& g = sys.gpu;
  const double stage_layers = std::ceil(static_cast<double>(m.layers) / layout.pipeline);
  const bool first_stage_is_last = layout.pipeline == 1;  // the slowest stage also holds the embedding
  const lowering::Op opt = lowering::optimizer_op(m, t, counts_, layout, runtime_);
  const double micro = static_cast<double>(t.global_batch) / (static_cast<double>(layout.micro_batch) * layout.data);
  const physics::ParallelComm comm = communication(layout, sys, fabric);
  const physics::OffloadCost offload = physics::offload_cost(sys, m, t, counts_, layout, runtime_);
  KernelsAtClocks& lowered = kernels_of(layout);
  // The step at a clock: kernel sums, optimizer, combination. The clock search most often ends on
  // the clock it timed last (the top clock, within the limit): that step is kept.
  double last_clock = -1;
  StepKernels last_sk;
  StepBreakdown last_step;
  auto step_at = [&](double clock, StepKernels& sk) {
    if (clock == last_clock) {
      sk = last_sk;
      return last_step;
    }
    sk = stage_kernels(kernels(lowered, layout, clock), stage_layers, first_stage_is_last);
    const physics::KernelTime ot = physics::kernel_time(opt, g, clock);
    sk.optimizer = ot.time * opt.count;
    sk.optimizer_kernels = opt.count;
    sk.optimizer_dram = ot.dram * opt.count;
    last_clock = clock;
    last_sk = sk;
    last_step = combine_training_step(sk, micro, comm, layout, g, runtime_, offload);
    return last_step;
  };
  // The clock settles over the busy period, the step without its pipeline bubble: fill and drain
  // idle a stage for whole passes (seconds in a large job), longer than the board's power averaging
  // (about a second [gpusim-h100-2026-11b]), so the busy phases meet the limit on their own.
  // The runtime's remainder is time the kernels take beyond the model: busy time at the kernels'
  // mix, not idle time (which would let the clock rise).
  auto mix_of = [&](const StepBreakdown& s, const StepKernels& sk) {
    const double busy = 1.0 + runtime_.remainder;
    return power_mix(sk.arithmetic * (micro * busy), (s.gemm + s.memory_bound) * busy,
                     sk.dram * micro + sk.optimizer_dram, s.time - s.bubble, t.precision);
  };
  const double clock = settle_clock(g, sys.power_limit, [&](double c) {
    StepKernels sk;
    const StepBreakdown s = step_at(c, sk);
    return mix_of(s, sk);
  });
  const Kernels& k = kernels(lowered, layout, clock);
  StepKernels sk;

  Evaluation e;
  e.training = true;
  e.gpus = sys.gpus;
  e.clock = clock;
  StepBreakdown& s = e.step;
  s = step_at(clock, sk);
  Watts busy_power = std::min(sys.power_limit, physics::board_power(g, mix_of(s, sk), clock));
  if (busy_power < sys.power_limit && clock + kClockStep <= physics::max_clock_ratio(g)) {
    // The limit falls between this clock step and the next: the board alternates between them.
    StepKernels upper_kernels;
    const StepBreakdown upper = step_at(clock + kClockStep, upper_kernels);
    const Watts upper_power = physics::board_power(g, mix_of(upper, upper_kernels), clock + kClockStep);
    const Seconds t_lo = s.time - s.bubble;
    const Seconds t_hi = upper.time - upper.bubble;
    const double phi = dither_share(sys.power_limit, t_lo, busy_power, t_hi, upper_power);
    if (phi > 0) {
      const Dithered d = dithered(clock, t_lo, busy_power, t_hi, upper_power, phi);
      e.clock = d.clock;
      busy_power = d.power;
      s = blend(s, upper, phi);
    }
  }
  const Seconds busy_period = s.time - s.bubble;
  if (job_.input) {
    const physics::InputRate rate = physics::input_rate(sys, *job_.input);
    const Seconds input_time(static_cast<double>(t.global_batch) / sys.nodes() / rate.samples_per_s);
    s.input_stave = base::value_in(kStaveNames, rate.stave).value_or(Stave::kNone);
    s.input_stall = input_time > s.time ? input_time - s.time : Seconds(0);
    s.time += s.input_stall;
  }
  e.memory = training_memory(layout);  // sys.gpu is system_.gpu: only the count differs
  e.memory.host_capacity = sys.host.memory / static_cast<double>(std::max(1, sys.gpus_per_node));
  e.dtype = t.precision;
  e.peak = g.peak_for(t.precision);
  e.tokens_per_step = t.tokens_per_step();
  e.tokens_per_s = e.tokens_per_step / s.time.value();
  e.tokens_per_s_per_gpu = e.tokens_per_s / sys.gpus;
  e.samples_per_s = static_cast<double>(t.global_batch) / s.time.value();
  const Flop model_flops = workload::job_flops_per_token(m, t) * (e.tokens_per_step / sys.gpus);
  e.model_flops_per_gpu = model_flops / s.time;
  e.hardware_flops_per_gpu = (model_flops + sk.recompute_flops * micro) / s.time;
  e.mfu = e.model_flops_per_gpu / e.peak;
  e.hfu = e.hardware_flops_per_gpu / e.peak;
  e.tokens = t.tokens;
  e.job_time = Seconds(t.tokens / e.tokens_per_s);
  e.gpu_time = e.job_time * static_cast<double>(sys.gpus);
  // Over the step: the busy period at its power, the bubble and any input stall with the SMs idle.
  const Watts idle_power = physics::board_power(g, physics::PowerMix{}, clock);
  e.gpu_avg_power = (busy_power * busy_period.value() + idle_power * (s.time - busy_period).value()) / s.time.value();
  if (options.op_shares) {
    add_shares(k, stage_layers, first_stage_is_last, micro, e.ops);
    Kernels optimizer;
    optimizer.ops.push_back(opt);
    optimizer.times.push_back(physics::kernel_time(optimizer.ops.back(), g, clock));
    add_shares(optimizer, 1.0, true, 1.0, e.ops);
    sort_shares(e.ops);
  }
  return e;
}

Evaluation evaluate(const System& system, const workload::Job& job, const Layout& layout,
                    const workload::Runtime& runtime, const Options& options) {
  Evaluator ev(system, job, runtime);
  return ev.evaluate(layout, 0, options);
}

}  // namespace gpusim::step
