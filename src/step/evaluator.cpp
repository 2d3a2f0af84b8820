// The evaluator (equations in include/gpusim/step.hpp): one step of a (hardware, job, layout,
// runtime) tuple, training or inference.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>

#include "step/internal.hpp"

namespace gpusim::step {

using hardware::System;
using workload::Layout;

// The step of a training layout: what evaluate_training reports, before the figures it derives.
struct Evaluator::TrainingStep {
  StepBreakdown s;
  StepKernels sk;  // at the settled clock
  const Kernels* k = nullptr;
  const lowering::Op* opt = nullptr;  // the optimizer step, one of `optimizers`
  double stage_layers = 1;
  bool first_stage_is_last = true;
  double micro = 1;        // micro-batches per step
  double clock = 1;        // the settled grid clock (the idle power's)
  double shown_clock = 1;  // the dithered clock where the board alternates
  Watts busy_power;
  Seconds busy_period;
  // The clock search's scratch: kept here, as zeroing two structs per layout costs a search more
  // than it saves.
  StepKernels probe_kernels;
  StepBreakdown probe;
  // The optimizer steps of the last (tensor, pipeline, data, context) by (ZeRO, expert): all that
  // optimizer_op reads of a layout. A search's layouts cycle through them in its inner loops.
  std::tuple<int, int, int, int> optimizer_key{0, 0, 0, 0};
  std::vector<std::tuple<int, int, lowering::Op>> optimizers;
  // The tensor-parallel collective of the last (GPU count, tensor) by (sequence, micro-batch,
  // context): all that physics::tensor_collective reads of a layout, on that count's fabric.
  std::pair<int, int> collective_key{0, 0};
  std::vector<std::tuple<bool, std::int64_t, int, Seconds>> collectives;
};

// A training job's kernel sums kept in a TableCache (Evaluator::kernels_): keyed by everything
// the lowering and the kernel model read: the GPU but its kernel gap, launch costs and ranges, the
// model, the training, and the runtime but its remainder (the step's combination reads those).
struct TableCache::TrainingKernels {
  hardware::GpuSpec gpu;
  workload::ModelShape model;
  workload::Training training;
  workload::Runtime runtime;
  std::map<Evaluator::KernelKey, Evaluator::KernelsAtClocks> kernels;

  [[nodiscard]] bool serves(const hardware::GpuSpec& g, const workload::ModelShape& m, const workload::Training& t,
                            const workload::Runtime& rt) const {
    return model == m && training == t && same_read(runtime, rt) && same_read(gpu, g);
  }
  // Equal but for the remainder (compared without a copy where the remainders are equal).
  static bool same_read(const workload::Runtime& a, const workload::Runtime& b) {
    if (a.remainder == b.remainder) {
      return a == b;
    }
    workload::Runtime other = b;
    other.remainder = a.remainder;
    return a == other;
  }
  // Equal but for the kernel gap, the launch costs and the declared ranges: the kernel model reads
  // none of them (the step's overhead adds the first three).
  static bool same_read(const hardware::GpuSpec& a, const hardware::GpuSpec& b) {
    const hardware::Efficiency& x = a.efficiency;
    const hardware::Efficiency& y = b.efficiency;
    if (x.kernel_overhead == y.kernel_overhead && x.launch_eager == y.launch_eager &&
        x.launch_graph == y.launch_graph && a.ranges == b.ranges) {
      return a == b;
    }
    hardware::GpuSpec other = b;
    other.efficiency.kernel_overhead = x.kernel_overhead;
    other.efficiency.launch_eager = x.launch_eager;
    other.efficiency.launch_graph = x.launch_graph;
    other.ranges = a.ranges;
    return a == other;
  }
};

struct Evaluator::Inputs {
  System system;
  workload::Job job;
  workload::Runtime runtime;
};

Evaluator::Evaluator(System system, workload::Job job, workload::Runtime runtime)
    : owned_(std::make_shared<const Inputs>(Inputs{std::move(system), std::move(job), std::move(runtime)})),
      system_(&owned_->system),
      job_(&owned_->job),
      runtime_(&owned_->runtime),
      kernels_(std::make_shared<std::map<KernelKey, KernelsAtClocks>>()) {
  start();
}

Evaluator::Evaluator(const System& system, const workload::Job& job, const workload::Runtime& runtime, Borrow)
    : system_(&system),
      job_(&job),
      runtime_(&runtime),
      kernels_(std::make_shared<std::map<KernelKey, KernelsAtClocks>>()) {
  start();
}

void Evaluator::start() {
  if (job_->training) {
    counts_ = workload::model_counts(job_->model, *job_->training);
    step_ = std::make_unique<TrainingStep>();
  }
}

Evaluator::~Evaluator() = default;
Evaluator::Evaluator(Evaluator&&) noexcept = default;
Evaluator& Evaluator::operator=(Evaluator&&) noexcept = default;

Evaluator::KernelsAtClocks& Evaluator::kernels_of(const Layout& layout) {
  // Everything of the layout the lowering reads: ZeRO-3 shards the parameters, which changes what
  // autocast casts (physics::parameter_bytes); expert parallelism sets the grouped GEMMs' experts
  // and, with the imbalance, their rows; context parallelism a rank's share of each sequence.
  const KernelKey key(layout.tensor, layout.sequence, layout.micro_batch, static_cast<int>(layout.recompute),
                      layout.zero >= 3, layout.expert, layout.expert_imbalance, layout.context);
  if (last_lowered_ == nullptr || !(key == last_key_)) {
    last_lowered_ = &(*kernels_)[key];  // a map's elements stay where they are
    last_key_ = key;
  }
  return *last_lowered_;
}

const Evaluator::Kernels& Evaluator::kernels(KernelsAtClocks& lowered, const Layout& layout, double clock) {
  auto& v = lowered.by_clock;
  auto it = std::lower_bound(v.begin(), v.end(), clock, [](const auto& e, double c) { return e.first < c; });
  if (it == v.end() || it->first != clock) {
    // The lowering does not depend on the clock: one set of ops for every clock it is timed at.
    Ops ops = v.empty() ? shared_ops(lowering::lower_training(job_->model, *job_->training, layout, *runtime_))
                        : v.front().second->ops;
    it = v.emplace(it, clock, time_pass(std::move(ops), system_->gpu, clock));
  }
  return *it->second;
}

std::pair<const System&, const physics::Fabric&> Evaluator::system_for(int gpus) {
  const int n = gpus > 0 ? gpus : system_->gpus;
  if (n == system_->gpus && system_->gpus_per_node <= n) {  // hardware::with_gpus would copy it unchanged
    if (!own_fabric_) {
      own_fabric_ = physics::make_fabric(*system_);
    }
    return {*system_, *own_fabric_};
  }
  auto it = systems_.find(n);
  if (it == systems_.end()) {
    System s = hardware::with_gpus(*system_, n);
    physics::Fabric f = physics::make_fabric(s);
    it = systems_.emplace(n, std::make_pair(std::move(s), std::move(f))).first;
  }
  return {it->second.first, it->second.second};
}

physics::ParallelComm Evaluator::communication(const Layout& layout, const System& sys, const physics::Fabric& fabric) {
  const workload::ModelShape& m = job_->model;
  const workload::Training& t = *job_->training;
  Layout without_zero = layout;
  without_zero.zero = 0;
  if (!micro_comm_ || micro_comm_->gpus != sys.gpus || !(micro_comm_->layout == without_zero)) {
    TrainingStep& kept = *step_;
    if (kept.collective_key != std::make_pair(sys.gpus, layout.tensor)) {
      kept.collective_key = {sys.gpus, layout.tensor};
      kept.collectives.clear();
    }
    auto one = std::find_if(kept.collectives.begin(), kept.collectives.end(), [&](const auto& c) {
      return std::get<0>(c) == layout.sequence && std::get<1>(c) == layout.micro_batch &&
             std::get<2>(c) == layout.context;
    });
    if (one == kept.collectives.end()) {
      one = kept.collectives.insert(kept.collectives.end(), {layout.sequence, layout.micro_batch, layout.context,
                                                             physics::tensor_collective(fabric, m, t, layout)});
    }
    micro_comm_.emplace(MicroComm{
        sys.gpus, without_zero, physics::micro_batch_comm(fabric, sys.gpus_per_node, m, t, layout, std::get<3>(*one))});
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
    physics::add_data_comm(fabric, sys.gpus_per_node, t, counts_, layout, *runtime_, data);
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
    last_memory_.emplace(
        layout, physics::training_memory(job_->model, *job_->training, counts_, layout, *runtime_, system_->gpu));
  }
  return last_memory_->second;
}

physics::MemoryBreakdown Evaluator::memory(const Layout& layout) const {
  if (job_->training) {
    physics::MemoryBreakdown mb = training_memory(layout);
    mb.host_capacity = system_->host.memory / static_cast<double>(std::max(1, system_->gpus_per_node));
    return mb;
  }
  return inference_memory(layout);
}

void Evaluator::share_kernels(TableCache& cache) {
  if (&cache == kernels_from_ || !job_->training) {
    return;
  }
  std::shared_ptr<TableCache::TrainingKernels> entry;
  for (const auto& kept : cache.training_) {
    if (kept->serves(system_->gpu, job_->model, *job_->training, *runtime_)) {
      entry = kept;
      break;
    }
  }
  if (entry == nullptr) {
    entry = std::make_shared<TableCache::TrainingKernels>(
        TableCache::TrainingKernels{system_->gpu, job_->model, *job_->training, *runtime_, {}});
    cache.training_.push_back(entry);
  }
  kernels_ = std::shared_ptr<std::map<KernelKey, KernelsAtClocks>>(entry, &entry->kernels);
  kernels_from_ = &cache;
  last_lowered_ = nullptr;
}

Evaluation Evaluator::evaluate(const Layout& layout, int gpus, const Options& options) {
  if (options.tables != nullptr) {
    share_kernels(*options.tables);
  }
  const auto& [sys, fabric] = system_for(gpus);
  return job_->training ? evaluate_training(layout, sys, fabric, options)
                        : evaluate_inference(layout, sys, fabric, options);
}

void Evaluator::training_step(const Layout& layout, const System& sys, const physics::Fabric& fabric,
                              TrainingStep& out) {
  const workload::Training& t = *job_->training;
  const workload::ModelShape& m = job_->model;
  const hardware::GpuSpec& g = sys.gpu;
  out.stage_layers = std::ceil(static_cast<double>(m.layers) / layout.pipeline);
  out.first_stage_is_last = layout.pipeline == 1;  // the slowest stage also holds the embedding
  const std::tuple<int, int, int, int> optimizer_key(layout.tensor, layout.pipeline, layout.data, layout.context);
  if (optimizer_key != out.optimizer_key) {
    out.optimizer_key = optimizer_key;
    out.optimizers.clear();
  }
  auto found = std::find_if(out.optimizers.begin(), out.optimizers.end(), [&](const auto& o) {
    return std::get<0>(o) == layout.zero && std::get<1>(o) == layout.expert;
  });
  if (found == out.optimizers.end()) {
    found = out.optimizers.insert(
        out.optimizers.end(), {layout.zero, layout.expert, lowering::optimizer_op(m, t, counts_, layout, *runtime_)});
  }
  out.opt = &std::get<2>(*found);
  const lowering::Op& opt = *out.opt;
  const double stage_layers = out.stage_layers;
  const bool first_stage_is_last = out.first_stage_is_last;
  const double micro = static_cast<double>(t.global_batch) / (static_cast<double>(layout.micro_batch) * layout.data);
  out.micro = micro;
  const physics::ParallelComm comm = communication(layout, sys, fabric);
  const physics::OffloadCost offload = physics::offload_cost(sys, m, t, counts_, layout, *runtime_);
  KernelsAtClocks& lowered = kernels_of(layout);
  // The step at a clock into (sk, s): kernel sums, optimizer, combination.
  auto step_at = [&](double clock, StepKernels& sk, StepBreakdown& s) {
    sk = stage_kernels(kernels(lowered, layout, clock), stage_layers, first_stage_is_last);
    const physics::KernelTime ot = physics::kernel_time(opt, g, clock);
    sk.optimizer = ot.time * opt.count;
    sk.optimizer_kernels = opt.count;
    sk.optimizer_dram = ot.dram * opt.count;
    s = combine_training_step(sk, micro, comm, layout, g, *runtime_, offload);
  };
  // The clock settles over the busy period, the step without its pipeline bubble: fill and drain
  // idle a stage for whole passes (seconds in a large job), longer than the board's power averaging
  // (about a second [gpusim-h100-2026-11b]), so the busy phases meet the limit on their own.
  // The runtime's remainder is time the kernels take beyond the model: busy time at the kernels'
  // mix, not idle time (which would let the clock rise).
  auto mix_of = [&](const StepBreakdown& s, const StepKernels& sk) {
    const double busy = 1.0 + runtime_->remainder;
    return power_mix(sk.arithmetic * (micro * busy), (s.gemm + s.memory_bound) * busy,
                     sk.dram * micro + sk.optimizer_dram, s.time - s.bubble, t.precision);
  };
  // The search's steps go to the scratch; it most often ends on the clock it timed last (the top
  // clock, within the limit), whose step is then taken from there.
  StepKernels& probe_kernels = out.probe_kernels;
  StepBreakdown& probe = out.probe;
  double probe_clock = -1;
  const double clock = settle_clock(g, sys.power_limit, [&](double c) {
    step_at(c, probe_kernels, probe);
    probe_clock = c;
    return mix_of(probe, probe_kernels);
  });
  out.k = &kernels(lowered, layout, clock);
  out.clock = clock;
  out.shown_clock = clock;
  if (probe_clock == clock) {
    out.sk = probe_kernels;
    out.s = probe;
  } else {
    step_at(clock, out.sk, out.s);
  }
  StepBreakdown& s = out.s;
  Watts busy_power = std::min(sys.power_limit, physics::board_power(g, mix_of(s, out.sk), clock));
  if (busy_power < sys.power_limit && clock + kClockStep <= physics::max_clock_ratio(g)) {
    // The limit falls between this clock step and the next: the board alternates between them.
    step_at(clock + kClockStep, probe_kernels, probe);
    const StepBreakdown& upper = probe;
    const StepKernels& upper_kernels = probe_kernels;
    const Watts upper_power = physics::board_power(g, mix_of(upper, upper_kernels), clock + kClockStep);
    const Seconds t_lo = s.time - s.bubble;
    const Seconds t_hi = upper.time - upper.bubble;
    const double phi = dither_share(sys.power_limit, t_lo, busy_power, t_hi, upper_power);
    if (phi > 0) {
      const Dithered d = dithered(clock, t_lo, busy_power, t_hi, upper_power, phi);
      out.shown_clock = d.clock;
      busy_power = d.power;
      s = blend(s, upper, phi);
    }
  }
  out.busy_power = busy_power;
  out.busy_period = s.time - s.bubble;
  if (job_->input) {
    const physics::InputRate rate = physics::input_rate(sys, *job_->input);
    const Seconds input_time(static_cast<double>(t.global_batch) / sys.nodes() / rate.samples_per_s);
    s.input_stave = rate.stave;
    s.input_stall = input_time > s.time ? input_time - s.time : Seconds(0);
    s.time += s.input_stall;
  }
}

Seconds Evaluator::job_time(const Layout& layout, int gpus) {
  if (!job_->training) {
    return evaluate(layout, gpus).job_time;
  }
  const auto& [sys, fabric] = system_for(gpus);
  training_step(layout, sys, fabric, *step_);
  // evaluate_training's expressions, in its order
  const workload::Training& t = *job_->training;
  const double tokens_per_s = t.tokens_per_step() / step_->s.time.value();
  return Seconds(t.tokens / tokens_per_s);
}

Evaluation Evaluator::evaluate_training(const Layout& layout, const System& sys, const physics::Fabric& fabric,
                                        const Options& options) {
  const workload::Training& t = *job_->training;
  const workload::ModelShape& m = job_->model;
  const hardware::GpuSpec& g = sys.gpu;
  TrainingStep& ts = *step_;
  training_step(layout, sys, fabric, ts);
  const StepKernels& sk = ts.sk;
  const double micro = ts.micro;
  const double clock = ts.clock;

  Evaluation e;
  e.training = true;
  e.gpus = sys.gpus;
  e.clock = ts.shown_clock;
  StepBreakdown& s = e.step;
  s = ts.s;
  const Watts busy_power = ts.busy_power;
  const Seconds busy_period = ts.busy_period;
  e.memory = training_memory(layout);  // sys.gpu is system_->gpu: only the count differs
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
    add_shares(*ts.k, ts.stage_layers, ts.first_stage_is_last, micro, e.ops);
    Kernels optimizer;
    optimizer.ops = shared_ops({*ts.opt});
    optimizer.times.push_back(physics::kernel_time(*ts.opt, g, clock));
    add_shares(optimizer, 1.0, true, 1.0, e.ops);
    sort_shares(e.ops);
  }
  return e;
}

Evaluation evaluate(const System& system, const workload::Job& job, const Layout& layout,
                    const workload::Runtime& runtime, const Options& options) {
  Evaluator ev(system, job, runtime, Evaluator::Borrow{});  // the inputs outlive the call
  return ev.evaluate(layout, 0, options);
}

}  // namespace gpusim::step
