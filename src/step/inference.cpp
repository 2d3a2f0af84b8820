// The evaluator's inference side (equations in include/gpusim/step.hpp): the deployment's memory
// and KV pool, its iteration model at the clocks prefill and decode sustain, and the engine's
// scheduler simulated under the scenario's load (serving.cpp).
#include <algorithm>
#include <cmath>

#include "step/internal.hpp"

namespace gpusim::step {

using hardware::System;
using workload::Layout;

namespace {

bool is_continuous(const workload::Runtime& rt) { return rt.serving.scheduler == workload::Scheduler::kContinuous; }

// batch = "max" (static engines): the largest batch whose weights, KV cache and workspace fit.
workload::Inference resolve_max_batch(const workload::ModelShape& m, workload::Inference inf,
                                      const hardware::GpuSpec& g, const Layout& layout,
                                      const workload::ServingEngine& engine) {
  if (!inf.batch_max || engine.scheduler == workload::Scheduler::kContinuous) {
    return inf;
  }
  auto fits = [&](std::int64_t b) {
    return physics::inference_memory(m, inf, g, layout, engine, static_cast<double>(b)).fits();
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

StepBreakdown decode_step(const IterationModel& decode, const IterationShape& d, const hardware::GpuSpec& g,
                          const workload::Runtime& rt) {
  const IterationCost dc = decode.cost(d);
  StepBreakdown st;
  st.time = dc.time;
  st.gemm = dc.compute_bound;
  st.memory_bound = dc.memory_bound;
  st.compute = dc.compute_bound + dc.memory_bound;
  st.kernels = decode.kernels();
  st.host_launch = physics::launch_cost(g, rt) * st.kernels;
  st.launch_stall = physics::launch_stall(st.host_launch, st.compute + decode.gaps());
  st.communication = dc.communication;
  st.communication_total = dc.communication_total;
  st.overhead = std::max(Seconds(0), st.time - st.compute - st.communication);
  return st;
}

double request_flops(const workload::ModelShape& m, double prompt, double output) {
  return 2.0 * workload::matmul_params(m) * (prompt + output) +
         workload::attention_matmul_flops(1.0, prompt + output, prompt + output, static_cast<double>(m.hidden),
                                          m.causal ? 0.5 : 1.0)
             .value();
}

physics::MemoryBreakdown Evaluator::inference_memory(const Layout& layout) const {
  if (const workload::Disaggregation& d = job_->inference->disaggregated; d.on()) {
    // The pool that does not fit, else the decode pool's (it holds the KV of every request's whole
    // context).
    const physics::MemoryBreakdown prefill = pool_memory(true);
    return prefill.fits() ? pool_memory(false) : prefill;
  }
  const workload::Inference inf =
      resolve_max_batch(job_->model, *job_->inference, system_->gpu, layout, runtime_->serving);
  return physics::inference_memory(job_->model, inf, system_->gpu, layout, runtime_->serving,
                                   static_cast<double>(inf.batch));
}

// An image model (ResNet, ViT) serves batches of images, each image a request: one forward pass of the batch
// (kernels + gaps + launch stall) per batch on each data-parallel replica; images/s = batch ·
// replicas / pass. No tokens are generated: time to first token and the latency are the pass.
Evaluation Evaluator::evaluate_image_inference(const Layout& layout, const System& sys, const Options& options) const {
  const workload::ModelShape& m = job_->model;
  const workload::Inference& inf = *job_->inference;
  const hardware::GpuSpec& g = sys.gpu;
  const double batch = static_cast<double>(inf.batch);
  const DType dtype = g.supports(inf.weight_precision) ? inf.weight_precision : DType::kFp16;
  const bool resnet = m.family == workload::Family::kResNet;
  const double seq = static_cast<double>(m.max_seq);  // a ViT's tokens per image
  const Ops ops = shared_ops(resnet ? lowering::lower_resnet(m, dtype, batch, false, false)
                                    : lowering::lower_forward(m, inf, *runtime_, 1, batch, seq, seq));
  const double layers = resnet ? 1.0 : static_cast<double>(m.layers);
  auto pass_at = [&](double clock, StepKernels& k) {
    k = stage_kernels(*time_pass(ops, g, clock), layers, true);
    return pass_time(k, g, *runtime_);
  };
  auto mix_of = [&](const StepKernels& k, Seconds t) {
    const double busy = 1.0 + runtime_->remainder;
    return power_mix(k.arithmetic * busy, k.micro * busy, k.dram, t, dtype);
  };
  const double clock = settle_clock(g, sys.power_limit, [&](double c) {
    StepKernels k;
    const Seconds t = pass_at(c, k);
    return mix_of(k, t);
  });
  StepKernels k;
  Seconds pass = pass_at(clock, k);
  double shown_clock = clock;
  Watts power = physics::board_power(g, mix_of(k, pass), clock);
  if (power < sys.power_limit && clock + kClockStep <= physics::max_clock_ratio(g)) {
    // The limit falls between this clock step and the next: the board alternates between them.
    StepKernels upper;
    const Seconds t_hi = pass_at(clock + kClockStep, upper);
    const Watts p_hi = physics::board_power(g, mix_of(upper, t_hi), clock + kClockStep);
    const double phi = dither_share(sys.power_limit, pass, power, t_hi, p_hi);
    if (phi > 0) {  // then the pass at the lower step has time, so the blend has too
      const Dithered d = dithered(clock, pass, power, t_hi, p_hi, phi);
      shown_clock = d.clock;
      power = d.power;
      pass = pass + (t_hi - pass) * phi;
    }
  }
  Evaluation e;
  e.training = false;
  e.gpus = sys.gpus;
  e.memory = physics::inference_memory(m, inf, g, layout, runtime_->serving, batch);
  if (resnet) {
    // Without autograd only a few maps are alive at once: a block's input (kept for the residual),
    // the convolution's input and its output, at most three of the largest map.
    double largest = 0;
    for (const workload::ConvLayer& c : workload::resnet_convs(m.resnet)) {
      largest = std::max({largest, c.in_elements(), c.out_elements()});
    }
    e.memory.activations = Bytes(3.0 * largest * batch * units::bytes_per_element(dtype));
  }
  StepBreakdown& st = e.step;
  st.time = pass;
  st.gemm = k.compute_bound * (1.0 + runtime_->remainder);
  st.gemm_flops = k.compute_bound_flops;
  st.memory_bound = k.memory_bound * (1.0 + runtime_->remainder);
  st.compute = st.gemm + st.memory_bound;
  st.kernels = k.kernels;
  st.host_launch = physics::launch_cost(g, *runtime_) * k.kernels;
  st.launch_stall = physics::launch_stall(
      st.host_launch, k.micro * (1.0 + runtime_->remainder) + g.efficiency.kernel_overhead * k.kernels);
  st.overhead = pass > st.compute ? pass - st.compute : Seconds(0);
  const int replicas = layout.data;
  InferenceResult r;
  r.replicas = replicas;
  r.batch = batch;
  r.requests = batch * replicas;
  r.requests_per_s = batch * replicas / pass.value();
  r.ttft = r.e2e = Percentiles{pass, pass, pass, pass};
  r.time_to_first_token = r.request_latency = pass;
  r.makespan = pass;
  e.clock = shown_clock;
  e.dtype = dtype;
  e.peak = g.peak_for(dtype);
  e.tokens_per_step = batch * replicas;
  e.tokens_per_s = r.requests_per_s;
  e.tokens_per_s_per_gpu = r.requests_per_s / sys.gpus;
  e.samples_per_s = r.requests_per_s;
  // Model FLOPs per image: 2·MACs (ResNet); the blocks and patch projection on every token and
  // attention over the whole sequence (ViT).
  const double image_flops =
      resnet ? 2.0 * workload::resnet_macs(m.resnet)
             : 2.0 * workload::matmul_params(m) * seq +
                   workload::attention_matmul_flops(1.0, seq, seq, static_cast<double>(m.hidden), 1.0).value() *
                       static_cast<double>(m.layers);
  e.model_flops_per_gpu = FlopPerSecond(image_flops * r.requests_per_s / sys.gpus);
  e.hardware_flops_per_gpu = e.model_flops_per_gpu;
  e.mfu = e.hfu = e.model_flops_per_gpu / e.peak;
  e.tokens = r.requests;
  e.job_time = pass;
  e.gpu_time = pass * static_cast<double>(sys.gpus);
  e.gpu_avg_power = std::min(sys.power_limit, power);
  e.inference = r;
  if (options.op_shares) {
    add_shares(*time_pass(ops, g, clock), layers, true, 1.0, e.ops);
    sort_shares(e.ops);
  }
  return e;
}

void Evaluator::serving_run(const Layout& layout, const System& sys, const physics::Fabric& fabric,
                            const Options& options, ServingRun& out, const workload::Inference* inference) const {
  const workload::ModelShape& m = job_->model;
  const hardware::GpuSpec& g = sys.gpu;
  const workload::ServingEngine& engine = runtime_->serving;
  const bool continuous = is_continuous(*runtime_);
  out.inf = resolve_max_batch(m, inference != nullptr ? *inference : *job_->inference, g, layout, engine);
  const workload::Inference& inf = out.inf;
  const double batch = static_cast<double>(inf.batch);
  const double prompt = static_cast<double>(inf.prompt_tokens);
  const double output = static_cast<double>(inf.output_tokens);
  const double layers = std::ceil(static_cast<double>(m.layers) / layout.pipeline);
  out.layers = layers;
  const DType dtype = g.supports(inf.weight_precision) ? inf.weight_precision : DType::kFp16;
  out.dtype = dtype;
  // A pipeline runs one virtual engine per stage, each with its share of the sequences and of the
  // KV pool (assumption: vLLM's virtual engines); data-parallel replicas are engines of their own.
  const int engines = layout.data * layout.pipeline;
  out.engines = engines;
  out.memory = physics::inference_memory(m, inf, g, layout, engine, batch);
  const double per_token = physics::kv_bytes_per_token(m, inf, layout).value();
  out.per_token = per_token;
  const double context = prompt * (1.0 + inf.load.length_spread) + output * (1.0 + inf.load.output_spread);
  out.context = context;
  const double pool_tokens = continuous ? out.memory.kv_cache.value() / per_token / layout.pipeline : 0.0;

  // Prefill and decode each settle at their own clock (compute-bound prefill may meet the power
  // limit; memory-bound decode rarely does), from a representative pass of each.
  const double seqs = continuous ? std::max(1.0, std::min(static_cast<double>(engine.max_seqs) / layout.pipeline,
                                                          std::floor(pool_tokens / context)))
                                 : batch;
  const double prefill_tokens = continuous ? static_cast<double>(engine.max_batched_tokens) : batch * prompt;
  auto clock_of = [&](const Ops& ops) {
    return settle_clock(g, sys.power_limit, [&](double c) {
      const StepKernels k = stage_kernels(*time_pass(ops, g, c), layers, true);
      const Seconds t = pass_time(k, g, *runtime_);
      const double busy = 1.0 + runtime_->remainder;
      return power_mix(k.arithmetic * busy, k.micro * busy, k.dram, t, dtype);
    });
  };
  const Ops prefill_ops = shared_ops(
      continuous ? lowering::lower_forward(m, inf, *runtime_, layout.tensor, 1.0, prefill_tokens, prefill_tokens)
                 : lowering::lower_forward(m, inf, *runtime_, layout.tensor, batch, prompt, prompt));
  const Ops decode_ops =
      shared_ops(lowering::lower_forward(m, inf, *runtime_, layout.tensor, seqs, 1.0, prompt + output / 2.0));
  out.prefill_clock = clock_of(prefill_ops);
  out.decode_clock = clock_of(decode_ops);
  // A speculative step verifies k + 1 tokens of every decoding sequence.
  const double verified = 1.0 + static_cast<double>(inf.speculative.on() ? inf.speculative.tokens : 0);
  const double max_tokens = std::max({prefill_tokens * (1.0 + inf.load.length_spread), seqs * verified,
                                      static_cast<double>(engine.max_seqs) * verified});
  // Both phases at one clock (neither meets the power limit) share their tables, as do the runs
  // of a serving search that differ in load or batch limit alone (options.tables).
  out.tables = options.tables != nullptr ? options.tables : &out.own;
  out.prefill.emplace(sys, fabric, m, inf, *runtime_, layout, out.prefill_clock, max_tokens, *out.tables);
  out.decode.emplace(sys, fabric, m, inf, *runtime_, layout, out.decode_clock, max_tokens, *out.tables);

  ServingSetup& s = out.setup;
  s.scheduler = engine.scheduler;
  s.arrival = inf.load.arrival;
  s.max_seqs = continuous ? std::max<std::int64_t>(1, engine.max_seqs / layout.pipeline) : inf.batch;
  // A pool short of one request's longest context is widened to it (the capacity bottleneck
  // reports the shortfall); it then serves one request at a time, as such an engine at best could,
  // rather than admitting shorter ones that evict each other as they grow.
  if (continuous && out.memory.total() > out.memory.budget) {
    s.max_seqs = 1;
  }
  s.max_batched_tokens = engine.max_batched_tokens;
  s.chunked = engine.chunked_prefill;
  s.reserve_output = engine.reserve_output;
  s.overlap = engine.overlap_scheduler || engine.async_output;
  s.scheduler_steps = engine.scheduler_steps;
  s.mixed = engine.mixed_batches;
  // Requests that arrive over time come through the engine's API server; a queue filled at once is
  // the offline API (or a throughput run, whose rate a fixed latency per request does not move).
  s.api_latency = inf.load.arrival == workload::Arrival::kOffline ? 0.0 : engine.api_latency.value();
  s.tokenize_per_token = inf.load.arrival == workload::Arrival::kOffline ? 0.0 : engine.tokenize_per_token.value();
  s.kv_block = std::max<std::int64_t>(1, engine.kv_block);
  // Speculation: the engine counts a request's output in steps of τ tokens (ServingSetup), so its
  // pool is counted so too: a request of P + N tokens holds P + S in the engine (S steps), and a
  // pool of T tokens holds T (P + S) / (P + N) of the engine's (exact for the mean request).
  s.tokens_per_step = workload::tokens_per_step(inf.speculative);
  const double steps = 1.0 + (output - 1.0) / s.tokens_per_step;
  const double in_steps = (prompt + steps) / (prompt + output);
  // Prefix caching (continuous engines): the shared prefix's whole blocks, held once.
  const bool prefix = continuous && inf.prefix.tokens > 0 && inf.prefix.hit_rate > 0;
  s.prefix = prefix ? inf.prefix.tokens / s.kv_block * s.kv_block : 0;
  s.prefix_hit = prefix ? inf.prefix.hit_rate : 0.0;
  const double shared_blocks = static_cast<double>(s.prefix / s.kv_block);
  const double one_request = std::ceil(context * in_steps / static_cast<double>(s.kv_block));
  s.kv_blocks =
      continuous
          ? static_cast<std::int64_t>(std::max(
                one_request, std::floor(pool_tokens * in_steps / static_cast<double>(s.kv_block)) - shared_blocks))
          : std::int64_t{1} << 50;
  s.prompt = inf.prompt_tokens;
  s.output = inf.output_tokens;
  s.spread = inf.load.length_spread;
  s.output_spread = inf.load.output_spread;
  const std::int64_t total = inf.load.requests > 0 ? inf.load.requests : inf.batch * engines;
  s.requests = std::max<std::int64_t>(1, (total + engines - 1) / engines);
  s.rate = inf.load.rate / engines;
  s.concurrency = std::max<std::int64_t>(1, std::llround(static_cast<double>(inf.load.concurrency) / engines));
  s.seed = inf.load.seed;
}

Evaluation Evaluator::evaluate_inference(const Layout& layout, const System& sys, const physics::Fabric& fabric,
                                         const Options& options) const {
  if (job_->model.images()) {
    return evaluate_image_inference(layout, sys, options);
  }
  if (job_->inference->disaggregated.on()) {
    return evaluate_disaggregated(sys, fabric, options);
  }
  ServingRun sr;
  serving_run(layout, sys, fabric, options, sr);
  const workload::ModelShape& m = job_->model;
  const hardware::GpuSpec& g = sys.gpu;
  const bool continuous = is_continuous(*runtime_);
  const workload::Inference& inf = sr.inf;
  const double batch = static_cast<double>(inf.batch);
  const double prompt = static_cast<double>(inf.prompt_tokens);
  const double output = static_cast<double>(inf.output_tokens);
  const double layers = sr.layers;
  const DType dtype = sr.dtype;
  const int engines = sr.engines;
  const double per_token = sr.per_token;
  const double context = sr.context;
  const double prefill_clock = sr.prefill_clock;
  const double decode_clock = sr.decode_clock;
  const IterationModel& prefill_model = *sr.prefill;
  const IterationModel& decode_model = *sr.decode;
  TableCache& tables = *sr.tables;
  const ServingSetup& s = sr.setup;

  Evaluation e;
  e.training = false;
  e.gpus = sys.gpus;
  e.memory = sr.memory;
  const ServingOutcome run = simulate_serving(s, prefill_model, decode_model, &tables);

  InferenceResult r = run.result;
  r.replicas = engines;
  r.output_tokens_per_s *= engines;
  r.requests_per_s *= engines;
  r.requests *= engines;
  r.time_to_first_token = r.ttft.p50;
  r.time_per_output_token = r.tpot.p50;
  r.request_latency = r.e2e.p50;
  if (r.tpot.p50.value() > 0) {
    r.tokens_per_s_per_user = 1.0 / r.tpot.p50.value();
  }
  // (a speculative step decodes τ tokens of its sequence)
  r.decode_tokens_per_s = run.decode_rate * engines * s.tokens_per_step;
  r.prefill_tokens_per_s = run.prefill_rate * engines;
  if (run.decode.time.value() > 0) {
    r.mbu = run.decode.dram.value() / run.decode.time.value() / g.memory_bandwidth.value();
  }
  // The pool the engine's share holds: a pool widened to one request (above) reports what fits,
  // so the report states one truth about the KV cache; a static engine holds its batch, no pool.
  const Bytes limit = e.memory.budget.value() > 0 ? e.memory.budget : e.memory.capacity;
  const double over_budget = std::max(0.0, e.memory.total().value() - limit.value());
  r.kv_capacity_tokens =
      continuous ? std::max(0.0, e.memory.kv_cache.value() - over_budget) / per_token / layout.pipeline : 0.0;
  r.kv_request_tokens = continuous ? context : 0.0;
  if (inf.load.arrival == workload::Arrival::kPoisson && options.capacity) {
    ServingSetup offline = s;
    offline.arrival = workload::Arrival::kOffline;
    offline.latencies = false;  // its rate alone is read
    // The capacity is a steady-state rate: a few thousand queued requests settle it (assumption:
    // the ramp-up and drain of a run of kCapacityRequests are a few percent of it).
    constexpr std::int64_t kCapacityRequests = 4000;
    offline.requests = std::min(offline.requests, kCapacityRequests);
    r.saturation_requests_per_s =
        simulate_serving(offline, prefill_model, decode_model, &tables).result.requests_per_s * engines;
    r.saturated = inf.load.rate > kSaturation * r.saturation_requests_per_s;
  }

  // The step fields describe one decode iteration of the mean decode batch.
  IterationShape d;
  d.rows = d.tokens = d.decode_rows = std::max(1.0, std::round(run.decode_rows));
  // (in the engine's count: a speculative request's output in steps, ServingSetup)
  d.context = d.rows * (prompt + (1.0 + (output - 1.0) / s.tokens_per_step) / 2.0);
  e.step = decode_step(decode_model, d, g, *runtime_);
  e.clock = decode_clock;
  e.dtype = inf.weight_precision;
  e.peak = g.peak_for(dtype);
  e.tokens_per_step = d.rows * engines;
  e.tokens_per_s = r.output_tokens_per_s;
  e.tokens_per_s_per_gpu = r.output_tokens_per_s / sys.gpus;
  e.samples_per_s = r.requests_per_s;
  e.model_flops_per_gpu = FlopPerSecond(request_flops(m, prompt, output) * r.requests_per_s / sys.gpus);
  e.hardware_flops_per_gpu = e.model_flops_per_gpu;
  e.mfu = e.model_flops_per_gpu / e.peak;
  e.hfu = e.mfu;
  e.tokens = r.requests * output;
  e.job_time = r.makespan;
  e.gpu_time = r.makespan * static_cast<double>(sys.gpus);
  // Power over the run: prefill and decode iterations at their clocks, idle waits at idle power.
  auto phase_power = [&](const PhaseCost& ph, double clock) {
    if (ph.time.value() <= 0) {
      return Watts(0);
    }
    return physics::board_power(
        g, power_mix(ph.arithmetic, ph.compute_bound + ph.memory_bound, ph.dram, ph.time, dtype), clock);
  };
  const double idle = std::max(0.0, run.elapsed - run.busy);
  const Watts idle_power = physics::board_power(g, physics::PowerMix{}, decode_clock);
  e.gpu_avg_power =
      run.elapsed > 0 ? std::min(sys.power_limit,
                                 (phase_power(run.prefill, prefill_clock) * run.prefill.time.value() +
                                  phase_power(run.decode, decode_clock) * run.decode.time.value() + idle_power * idle) /
                                     run.elapsed)
                      : idle_power;
  r.batch = continuous ? r.batch : batch;
  e.inference = r;
  if (options.op_shares) {
    // the decode iteration the step fields describe
    const Ops shown =
        shared_ops(lowering::lower_forward(m, inf, *runtime_, layout.tensor, d.rows, 1.0, prompt + output / 2.0));
    add_shares(*time_pass(shown, g, decode_clock), layers, true, 1.0, e.ops);
    sort_shares(e.ops);
  }
  return e;
}

}  // namespace gpusim::step
