// Step model, throughput, power, energy and cost (equations in estimate.hpp).
#include "gpusim/model/estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "gpusim/model/comm.hpp"
#include "gpusim/model/kernel.hpp"
#include "gpusim/model/parallel.hpp"
#include "gpusim/model/training_step.hpp"
#include "model/advice.hpp"

namespace gpusim {

const char* to_string(Bottleneck b) {
  switch (b) {
    case Bottleneck::kCompute:
      return "compute";
    case Bottleneck::kMemory:
      return "memory";
    case Bottleneck::kCommunication:
      return "communication";
    case Bottleneck::kInput:
      return "input";
    case Bottleneck::kLatency:
      return "latency";
    case Bottleneck::kCapacity:
      return "capacity";
  }
  return "compute";
}

namespace {

// DESIGN §6 seed: compute-bound work slows roughly with (limit / TDP)^(1/3) under a power cap.
double clock_scale(const SystemConfig& sys) {
  const double ratio = sys.power_limit.value() / sys.gpu.tdp.value();
  return ratio >= 1.0 ? 1.0 : std::cbrt(ratio);
}

using KernelSums = StepKernels;

// `repeat` scales per-micro-batch ops in the shares (micro-batches a GPU runs per step).
KernelSums time_plan(const StepPlan& plan, const GpuSpec& gpu, double scale, std::vector<OpShare>* shares,
                     double repeat = 1.0) {
  KernelSums s;
  std::map<std::pair<std::string, int>, OpShare> agg;
  for (const Op& op : plan.ops) {
    const KernelTime kt = kernel_time(op, gpu, scale);
    const Seconds t = kt.time * op.count;
    const bool optimizer = op.phase == Phase::kOptimizer;
    if (optimizer) {
      s.optimizer += t;
      s.optimizer_kernels += op.count;
    } else {
      s.micro += t;
      s.kernels += op.count;
      (kt.compute_bound() ? s.compute_bound : s.memory_bound) += t;
      if (op.phase == Phase::kBackward || op.phase == Phase::kRecompute) {
        s.backward += t;
      }
    }
    if (shares != nullptr) {
      const double r = optimizer ? 1.0 : repeat;
      OpShare& sh = agg[{op.name, static_cast<int>(op.phase)}];
      sh.name = op.name;
      sh.phase = op.phase;
      sh.kind = op.kind;
      sh.flops += op.flops * (op.count * r);
      sh.bytes += op.bytes * (op.count * r);
      sh.time += t * r;
      sh.compute_bound = kt.compute_bound();
    }
  }
  if (shares != nullptr) {
    for (auto& [k, v] : agg) {
      shares->push_back(v);
    }
    std::sort(shares->begin(), shares->end(), [](const OpShare& a, const OpShare& b) { return a.time > b.time; });
  }
  return s;
}

// The host launches kernels while the GPU runs earlier ones; when launching takes longer than the
// GPU needs for them, the GPU waits: stall = max(0, kernels × launch cost − GPU time).
Seconds launch_stall(const GpuSpec& g, double kernels, bool graphs, Seconds gpu_time, Seconds* host_time) {
  *host_time = (graphs ? g.efficiency.launch_graph : g.efficiency.launch_eager) * kernels;
  return *host_time > gpu_time ? *host_time - gpu_time : Seconds(0);
}

// Input pipeline ("barrel"): the slowest of host CPU, storage and the host-to-device copy.
void input_pipeline(const Scenario& sc, Seconds gpu_step, StepBreakdown& step) {
  if (!sc.input || !sc.training) {
    return;
  }
  const InputConfig& in = *sc.input;
  const SystemConfig& sys = sc.system;
  const double per_node = static_cast<double>(sc.training->global_batch) / sys.nodes();
  const double cpu_rate = in.workers / in.cpu_time_per_sample.value();
  const double storage_rate = in.storage_bandwidth.value() / in.sample_bytes.value();
  const double pcie_rate =
      sys.gpus_per_node * host_copy_bandwidth(sys, in.pinned_memory).value() / in.sample_bytes.value();
  double rate = cpu_rate;
  step.input_stave = "cpu";
  if (storage_rate < rate) {
    rate = storage_rate;
    step.input_stave = "storage";
  }
  if (pcie_rate < rate) {
    rate = pcie_rate;
    step.input_stave = "pcie";
  }
  const Seconds input_time(per_node / rate);
  step.input_stall = input_time > gpu_step ? input_time - gpu_step : Seconds(0);
}

// `dtype`: the compute dtype; fp32 runs on CUDA cores (simt activity), the others on tensor cores.
Watts average_power(const GpuSpec& g, const SystemConfig& sys, const StepBreakdown& s, DType dtype) {
  const double total = s.time.value();
  if (total <= 0) {
    return g.idle_power;
  }
  const double compute_activity = dtype == DType::kFp32 ? g.activity.simt : g.activity.gemm;
  const double busy = (s.gemm.value() * compute_activity + s.memory_bound.value() * g.activity.memory +
                       (total - s.gemm.value() - s.memory_bound.value()) * g.activity.idle) /
                      total;
  const Watts p = g.idle_power + (g.tdp - g.idle_power) * busy;
  return std::min(p, sys.power_limit);
}

void finish_power_cost(const Scenario& sc, Seconds job_time, Seconds cloud_job_time, Estimate& e) {
  const SystemConfig& sys = sc.system;
  const Watts system_power =
      e.gpu_avg_power * static_cast<double>(sys.gpus) + sc.cost.host_power * static_cast<double>(e.nodes);
  const Joules energy = system_power * job_time * sc.cost.pue;
  e.energy_kwh = units::to_kwh(energy);
  e.carbon_kg = (sc.cost.carbon_intensity * energy).value();
  CostInputs ci;
  ci.job_time = job_time;
  ci.cloud_job_time = cloud_job_time;
  ci.gpus = sys.gpus;
  ci.cloud_rate = sc.cost.cloud_rate;
  ci.system_power = system_power;
  ci.pue = sc.cost.pue;
  ci.electricity = sc.cost.electricity;
  ci.purchase = sc.cost.purchase;
  ci.lifetime = sc.cost.lifetime;
  ci.utilization = sc.cost.utilization;
  e.cost = compute_cost(ci);
  e.cost_inputs = ci;
  e.cloud_gpu = sc.cost.cloud_gpu;
  e.cloud_rate = sc.cost.cloud_rate;
  e.utilization = sc.cost.utilization;
}

void estimate_training(const Scenario& sc, Estimate& e) {
  const TrainingConfig& t = *sc.training;
  const ParallelConfig& par = sc.parallel;
  const GpuSpec& g = sc.system.gpu;
  const double scale = clock_scale(sc.system);
  const StepPlan plan = lower_training(sc);
  const double micro = plan.micro_batches;
  const KernelSums k = time_plan(plan, g, scale, &e.ops, micro);
  const ParallelComm comm = parallel_comm(sc);

  StepBreakdown& s = e.step;
  s = combine_step(k, micro, comm, par, g, t.cuda_graphs);
  const Seconds gpu_step = s.time;
  input_pipeline(sc, gpu_step, s);
  s.time = gpu_step + s.input_stall;

  e.memory = training_memory(sc);
  e.dtype = t.precision;
  e.peak = g.peak_for(t.precision) * scale;
  e.tokens_per_step = static_cast<double>(t.global_batch * t.seq_len);
  e.tokens_per_s = e.tokens_per_step / s.time.value();
  e.tokens_per_s_per_gpu = e.tokens_per_s / sc.system.gpus;
  e.samples_per_s = static_cast<double>(t.global_batch) / s.time.value();
  e.model_tflops_per_gpu = units::to_teraflops(plan.model_flops_per_gpu / s.time);
  e.hardware_tflops_per_gpu = units::to_teraflops(plan.hardware_flops_per_gpu / s.time);
  e.mfu = (plan.model_flops_per_gpu / s.time) / e.peak;
  e.hfu = (plan.hardware_flops_per_gpu / s.time) / e.peak;
  e.tokens = t.tokens;
  e.train_time = Seconds(t.tokens / e.tokens_per_s);
  e.gpu_hours = units::to_hours(e.train_time) * sc.system.gpus;
  e.gpu_avg_power = average_power(g, sc.system, s, t.precision);
}

void estimate_inference(const Scenario& sc, Estimate& e) {
  const InferenceConfig& inf = *sc.inference;
  const GpuSpec& g = sc.system.gpu;
  const double scale = clock_scale(sc.system);
  const StepPlan prefill = lower_prefill(sc);
  // Decode at the mean context over the generation.
  const double ctx = static_cast<double>(inf.prompt_tokens) + static_cast<double>(inf.output_tokens) / 2.0;
  const StepPlan decode = lower_decode(sc, ctx);
  const KernelSums kp = time_plan(prefill, g, scale, nullptr);
  const KernelSums kd = time_plan(decode, g, scale, &e.ops);
  auto with_overhead = [&](const KernelSums& k) {
    const Seconds gpu = k.micro + g.efficiency.kernel_overhead * k.kernels;
    Seconds host;
    return gpu + launch_stall(g, k.kernels, inf.cuda_graphs, gpu, &host);
  };

  InferenceResult r;
  r.time_to_first_token = with_overhead(kp);
  r.time_per_output_token = with_overhead(kd);
  const double replicas = sc.system.gpus;  // independent replicas, one per GPU
  r.output_tokens_per_s = replicas * static_cast<double>(inf.batch) / r.time_per_output_token.value();
  r.request_latency = r.time_to_first_token + r.time_per_output_token * static_cast<double>(inf.output_tokens);
  // A batch of requests start to finish (offline / in-flight batching at full load): prefill
  // and decode of every request, all output tokens.
  r.offline_output_tokens_per_s =
      replicas * static_cast<double>(inf.batch * inf.output_tokens) / r.request_latency.value();
  r.batch = static_cast<double>(inf.batch);
  e.inference = r;

  StepBreakdown& s = e.step;  // one decode step
  s.compute = kd.micro;
  s.gemm = kd.compute_bound;
  s.memory_bound = kd.memory_bound;
  s.kernels = kd.kernels;
  s.overhead = g.efficiency.kernel_overhead * kd.kernels;
  s.launch_stall = launch_stall(g, kd.kernels, inf.cuda_graphs, s.compute + s.overhead, &s.host_launch);
  s.overhead += s.launch_stall;
  s.time = s.compute + s.overhead;

  e.memory = inference_memory(sc);
  e.dtype = inf.weight_precision;
  e.peak = g.peak_for(g.supports(e.dtype) ? e.dtype : DType::kFp16) * scale;
  e.tokens_per_step = replicas * static_cast<double>(inf.batch);
  e.tokens_per_s = r.output_tokens_per_s;
  e.tokens_per_s_per_gpu = r.output_tokens_per_s / replicas;
  e.samples_per_s = replicas * static_cast<double>(inf.batch) / r.request_latency.value();
  const double flops_per_token = decode.model_flops_per_gpu.value() / static_cast<double>(inf.batch);
  e.model_tflops_per_gpu = flops_per_token * e.tokens_per_s_per_gpu / 1e12;
  e.mfu = e.model_tflops_per_gpu * 1e12 / e.peak.value();
  e.hfu = e.mfu;
  e.tokens = static_cast<double>(inf.output_tokens * inf.batch) * replicas;
  e.train_time = r.request_latency;
  e.gpu_hours = units::to_hours(r.request_latency) * sc.system.gpus;
  // Power over the request: prefill is compute-bound, decode mostly memory-bound.
  StepBreakdown whole = s;
  whole.gemm = kp.compute_bound + kd.compute_bound * static_cast<double>(inf.output_tokens);
  whole.memory_bound = kp.memory_bound + kd.memory_bound * static_cast<double>(inf.output_tokens);
  whole.time = r.request_latency;
  e.gpu_avg_power = average_power(g, sc.system, whole, inf.weight_precision);
}

void classify(Estimate& e) {
  if (!e.memory.fits()) {
    e.bottleneck = Bottleneck::kCapacity;
    return;
  }
  const StepBreakdown& s = e.step;
  const std::pair<Bottleneck, double> parts[] = {
      {Bottleneck::kCompute, s.gemm.value()},
      {Bottleneck::kMemory, s.memory_bound.value()},
      {Bottleneck::kCommunication, s.communication.value()},
      {Bottleneck::kInput, s.input_stall.value()},
      {Bottleneck::kLatency, s.overhead.value()},
  };
  const auto* best = std::max_element(std::begin(parts), std::end(parts),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
  e.bottleneck = best->first;
}

}  // namespace

namespace {
// batch = "max": the largest batch whose weights, KV cache and activations fit in memory.
Scenario resolve_max_batch(const Scenario& sc) {
  Scenario s = sc;
  if (!s.inference || !s.inference->batch_max) {
    return s;
  }
  auto fits = [&s](std::int64_t b) {
    s.inference->batch = b;
    return inference_memory(s).fits();
  };
  std::int64_t lo = 1, hi = 1;
  if (!fits(1)) {
    s.inference->batch = 1;  // even one sequence does not fit: the report says so
    return s;
  }
  while (hi < (1 << 20) && fits(hi * 2)) {
    hi *= 2;
  }
  lo = hi;
  hi = hi * 2;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  s.inference->batch = lo;
  return s;
}
}  // namespace

Estimate estimate_core(const Scenario& sc_in) {
  const Scenario sc = resolve_max_batch(sc_in);
  Estimate e;
  e.scenario = sc.name;
  e.gpu_id = sc.system.gpu_id;
  e.gpu_name = sc.system.gpu.name;
  e.gpus = sc.system.gpus;
  e.nodes = sc.system.nodes();
  e.fabric = make_fabric(sc.system).intra_desc;
  e.training = sc.training.has_value();
  e.params = total_params(sc.model);
  if (sc.training) {
    estimate_training(sc, e);
  } else {
    estimate_inference(sc, e);
  }
  classify(e);
  finish_power_cost(sc, e.train_time, e.train_time, e);
  return e;
}

Estimate estimate(const Scenario& sc, const Catalog& catalog) {
  Estimate e = estimate_core(sc);
  if (sc.cost.cloud_gpu != sc.system.gpu_id) {
    // Equal work on the rented GPU: same scenario, same GPU count, the cloud GPU's speed.
    Scenario cloud = sc;
    cloud.system.gpu = catalog.gpu(sc.cost.cloud_gpu);
    cloud.system.gpu_id = sc.cost.cloud_gpu;
    cloud.system.power_limit = cloud.system.gpu.tdp;
    const Estimate ce = estimate_core(cloud);
    finish_power_cost(sc, e.train_time, ce.train_time, e);
  }
  e.bottleneck_reason = explain_bottleneck(sc, e);
  e.advice = make_advice(sc, e);
  return e;
}

}  // namespace gpusim
