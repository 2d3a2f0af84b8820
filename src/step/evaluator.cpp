// The evaluator (equations in include/gpusim/step.hpp): one step of a (hardware, job, layout,
// runtime) tuple, training or inference.
#include <algorithm>
#include <cmath>

#include "step/internal.hpp"

namespace gpusim::step {

using hardware::System;
using workload::Layout;

Evaluator::Evaluator(System system, workload::Job job, workload::Runtime runtime)
    : system_(std::move(system)), job_(std::move(job)), runtime_(runtime) {}

const Evaluator::Kernels& Evaluator::kernels(const Layout& layout, double clock) {
  // Everything of the layout the lowering reads: ZeRO-3 shards the parameters, which changes what
  // autocast casts (physics::parameter_bytes).
  const auto key = std::make_tuple(layout.tensor, layout.sequence, layout.micro_batch,
                                   static_cast<int>(layout.recompute), layout.zero >= 3, clock);
  auto it = kernels_.find(key);
  if (it == kernels_.end()) {
    auto ops = lowering::lower_training(job_.model, *job_.training, layout, runtime_);
    it = kernels_.emplace(key, time_pass(std::move(ops), system_.gpu, clock)).first;
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

namespace {

// Clocks are settled to this resolution, so that nearby layouts share the memo of kernel sums.
constexpr double kClockStep = 1e-3;

// The clock a period sustains: its power mix depends on the clock (compute-bound kernels shorten
// as it rises), and the clock on the mix (physics::sustained_clock). `mix_at(clock)` gives the
// mix; starting from the highest clock, whose power is the highest, the iterates settle within a
// few rounds.
template <class MixAt>
double settle_clock(const hardware::GpuSpec& g, Watts limit, MixAt mix_at) {
  double clock = std::floor(physics::max_clock_ratio(g) / kClockStep) * kClockStep;
  for (int i = 0; i < 12; ++i) {
    const double next = std::floor(physics::sustained_clock(g, limit, mix_at(clock)) / kClockStep) * kClockStep;
    if (std::fabs(next - clock) < 0.5 * kClockStep) {
      break;
    }
    clock = next;
  }
  return clock;
}

// batch = "max": the largest batch whose weights, KV cache and activations fit in memory.
workload::Inference resolve_max_batch(const workload::ModelShape& m, workload::Inference inf,
                                      const hardware::GpuSpec& g) {
  if (!inf.batch_max) {
    return inf;
  }
  auto fits = [&](std::int64_t b) {
    inf.batch = b;
    return physics::inference_memory(m, inf, g).fits();
  };
  if (!fits(1)) {
    inf.batch = 1;  // even one sequence does not fit: the report says so
    return inf;
  }
  std::int64_t hi = 1;
  while (hi < (1 << 20) && fits(hi * 2)) {
    hi *= 2;
  }
  std::int64_t lo = hi;
  hi = hi * 2;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  inf.batch = lo;
  return inf;
}

}  // namespace

physics::MemoryBreakdown Evaluator::memory(const Layout& layout) const {
  if (job_.training) {
    return physics::training_memory(job_.model, *job_.training, layout, runtime_, system_.gpu);
  }
  return physics::inference_memory(job_.model, resolve_max_batch(job_.model, *job_.inference, system_.gpu),
                                   system_.gpu);
}

Evaluation Evaluator::evaluate(const Layout& layout, int gpus, const Options& options) {
  const auto& [sys, fabric] = system_for(gpus);
  return job_.training ? evaluate_training(layout, sys, fabric, options) : evaluate_inference(sys, options);
}

Evaluation Evaluator::evaluate_training(const Layout& layout, const System& sys, const physics::Fabric& fabric,
                                        const Options& options) {
  const workload::Training& t = *job_.training;
  const workload::ModelShape& m = job_.model;
  const hardware::GpuSpec& g = sys.gpu;
  const double stage_layers = std::ceil(static_cast<double>(m.layers) / layout.pipeline);
  const bool first_stage_is_last = layout.pipeline == 1;  // the slowest stage also holds the embedding
  const lowering::Op opt = lowering::optimizer_op(m, t, layout, runtime_);
  const double micro = static_cast<double>(t.global_batch) / (static_cast<double>(layout.micro_batch) * layout.data);
  const physics::ParallelComm comm = physics::parallel_comm(fabric, sys.gpus_per_node, m, t, layout, runtime_);
  // The step at a clock: kernel sums, optimizer, combination.
  auto step_at = [&](double clock, StepKernels& sk) {
    sk = stage_kernels(kernels(layout, clock), stage_layers, first_stage_is_last);
    const physics::KernelTime ot = physics::kernel_time(opt, g, clock);
    sk.optimizer = ot.time * opt.count;
    sk.optimizer_kernels = opt.count;
    sk.optimizer_dram = ot.dram * opt.count;
    return combine_training_step(sk, micro, comm, layout, g, runtime_);
  };
  // The clock settles over the busy period, the step without its pipeline bubble: fill and drain
  // idle a stage for whole passes (seconds in a large job), longer than the board's power averaging
  // (about a second [gpusim-session-h100-2026-11b]), so the busy phases meet the limit on their own.
  // The runtime's remainder is time the kernels take beyond the model: busy time at the kernels'
  // mix, not idle time (which would let the clock rise).
  auto mix_of = [&](const StepBreakdown& s, const StepKernels& sk) {
    const double busy = 1.0 + runtime_.remainder;
    return power_mix(s.gemm * busy, s.memory_bound * busy, sk.dram * micro + sk.optimizer_dram, s.time - s.bubble,
                     t.precision);
  };
  const double clock = settle_clock(g, sys.power_limit, [&](double c) {
    StepKernels sk;
    const StepBreakdown s = step_at(c, sk);
    return mix_of(s, sk);
  });
  const Kernels& k = kernels(layout, clock);
  StepKernels sk;

  Evaluation e;
  e.training = true;
  e.gpus = sys.gpus;
  e.clock = clock;
  StepBreakdown& s = e.step;
  s = step_at(clock, sk);
  const Seconds busy_period = s.time - s.bubble;
  const Watts busy_power = std::min(sys.power_limit, physics::board_power(g, mix_of(s, sk), clock));
  if (job_.input) {
    const physics::InputRate rate = physics::input_rate(sys, *job_.input);
    const Seconds input_time(static_cast<double>(t.global_batch) / sys.nodes() / rate.samples_per_s);
    s.input_stave = base::value_in(kStaveNames, rate.stave).value_or(Stave::kNone);
    s.input_stall = input_time > s.time ? input_time - s.time : Seconds(0);
    s.time += s.input_stall;
  }
  e.memory = physics::training_memory(m, t, layout, runtime_, g);
  e.dtype = t.precision;
  e.peak = g.peak_for(t.precision);
  e.tokens_per_step = t.tokens_per_step();
  e.tokens_per_s = e.tokens_per_step / s.time.value();
  e.tokens_per_s_per_gpu = e.tokens_per_s / sys.gpus;
  e.samples_per_s = static_cast<double>(t.global_batch) / s.time.value();
  const Flop model_flops =
      workload::training_flops_per_token(m, static_cast<double>(t.seq_len)) * (e.tokens_per_step / sys.gpus);
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

Evaluation Evaluator::evaluate_inference(const System& sys, const Options& options) const {
  const workload::ModelShape& m = job_.model;
  const hardware::GpuSpec& g = sys.gpu;
  const workload::Inference inf = resolve_max_batch(m, *job_.inference, g);
  const double batch = static_cast<double>(inf.batch);
  const double prompt = static_cast<double>(inf.prompt_tokens);
  const double output = static_cast<double>(inf.output_tokens);
  const double layers = static_cast<double>(m.layers);
  const DType dtype = g.supports(inf.weight_precision) ? inf.weight_precision : DType::kFp16;
  // Prefill and decode each settle at their own clock (compute-bound prefill may meet the power
  // limit; memory-bound decode rarely does).
  auto pass_at = [&](const std::vector<lowering::Op>& ops, double& clock) {
    clock = settle_clock(g, sys.power_limit, [&](double c) {
      const StepKernels k = stage_kernels(*time_pass(ops, g, c), layers, true);
      const Seconds t = pass_time(k, g, runtime_);
      const double busy = 1.0 + runtime_.remainder;
      return power_mix(k.compute_bound * busy, k.memory_bound * busy, k.dram, t, dtype);
    });
    return time_pass(ops, g, clock);
  };
  double prefill_clock = 1;
  double decode_clock = 1;
  const auto prefill = pass_at(lowering::lower_forward(m, inf, runtime_, batch, prompt, prompt), prefill_clock);
  // Decode at the mean context over the generation.
  const auto decode =
      pass_at(lowering::lower_forward(m, inf, runtime_, batch, 1.0, prompt + output / 2.0), decode_clock);
  const StepKernels kp = stage_kernels(*prefill, layers, true);
  const StepKernels kd = stage_kernels(*decode, layers, true);

  Evaluation e;
  e.training = false;
  e.gpus = sys.gpus;
  e.clock = decode_clock;
  InferenceResult r;
  r.time_to_first_token = pass_time(kp, g, runtime_);
  r.time_per_output_token = pass_time(kd, g, runtime_);
  const double replicas = sys.gpus;  // independent replicas, one per GPU
  r.output_tokens_per_s = replicas * batch / r.time_per_output_token.value();
  r.request_latency = r.time_to_first_token + r.time_per_output_token * output;
  // A batch of requests start to finish (offline / in-flight batching at full load): prefill and
  // decode of every request, all output tokens.
  r.offline_output_tokens_per_s = replicas * batch * output / r.request_latency.value();
  r.batch = batch;
  e.inference = r;

  StepBreakdown& s = e.step;  // one decode step
  s.compute = kd.micro;
  s.gemm = kd.compute_bound;
  s.gemm_flops = kd.compute_bound_flops;
  s.memory_bound = kd.memory_bound;
  s.kernels = kd.kernels;
  s.overhead = g.efficiency.kernel_overhead * kd.kernels;
  s.host_launch = physics::launch_cost(g, runtime_) * kd.kernels;
  s.launch_stall = physics::launch_stall(s.host_launch, s.compute + s.overhead);
  s.overhead += s.launch_stall;
  s.time = s.compute + s.overhead;

  e.memory = physics::inference_memory(m, inf, g);
  e.dtype = inf.weight_precision;
  e.peak = g.peak_for(g.supports(e.dtype) ? e.dtype : DType::kFp16);
  e.tokens_per_step = replicas * batch;
  e.tokens_per_s = r.output_tokens_per_s;
  e.tokens_per_s_per_gpu = r.output_tokens_per_s / replicas;
  e.samples_per_s = replicas * batch / r.request_latency.value();
  // Model FLOPs of one decoded token: the decode pass's FLOPs over its batch.
  Flop decode_flops;
  for (std::size_t i = 0; i < decode->ops.size(); ++i) {
    const lowering::Op& op = decode->ops[i];
    decode_flops += op.flops * (op.count * (op.scope == lowering::Scope::kLayer ? layers : 1.0));
  }
  e.model_flops_per_gpu = FlopPerSecond(decode_flops.value() / batch * e.tokens_per_s_per_gpu);
  e.hardware_flops_per_gpu = e.model_flops_per_gpu;
  e.mfu = e.model_flops_per_gpu / e.peak;
  e.hfu = e.mfu;
  e.tokens = batch * output * replicas;
  e.job_time = r.request_latency;
  e.gpu_time = r.request_latency * static_cast<double>(sys.gpus);
  // Power over the request: the prefill at its clock, then the decode steps at theirs.
  const double busy = 1.0 + runtime_.remainder;
  const Watts prefill_power = physics::board_power(
      g, power_mix(kp.compute_bound * busy, kp.memory_bound * busy, kp.dram, r.time_to_first_token, dtype),
      prefill_clock);
  const Watts decode_power = physics::board_power(
      g, power_mix(kd.compute_bound * busy, kd.memory_bound * busy, kd.dram, r.time_per_output_token, dtype),
      decode_clock);
  e.gpu_avg_power = std::min(sys.power_limit, (prefill_power * r.time_to_first_token.value() +
                                               decode_power * (r.time_per_output_token * output).value()) /
                                                  r.request_latency.value());
  if (options.op_shares) {
    add_shares(*decode, layers, true, 1.0, e.ops);
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
