// Disaggregated prefill and decode (include/gpusim/workload.hpp, Disaggregation; DistServe
// [zhong-2024-distserve], Splitwise [patel-2024-splitwise]): a deployment of two pools, each a set of
// continuous-batching engines simulated as serving.cpp simulates any engine.
//   prefill  P replicas of tp_p GPUs; replica i serves its share of the load (rate / P, requests / P,
//            a seed of its own) as prompts alone, each request's first token sampled at its prompt's
//            end.
//   handoff  the request's KV cache, kv_bytes_per_token(tensor 1) · prompt bytes, moves as tp_p
//            shards in parallel to the decode replica (each GPU's own link):
//              t = α + bytes / (min(tp_p, tp_d) · B)
//            over NVLink when both pools fit in one node, else over the network between nodes;
//            it starts once the prompt is done (assumption: no layer-by-layer overlap).
//   decode   D replicas of tp_d GPUs take the requests in the order their KV arrives, dealt round
//            robin; a request arrives holding its prompt's KV and its first token (its blocks taken at
//            admission), runs that token through the model and generates the other N − 1.
// The user's stream comes from the decode pool (SGLang's and Dynamo's disaggregated serving, vLLM's
// connector): its first token with the decode pool's first iteration for the request (a one-token
// request's at the handoff). Per request: TTFT = that − arrival, end-to-end = last − arrival (each +
// the API server's latency), TPOT = (end-to-end − TTFT) / (N − 1) as the benchmark clients take it;
// the deployment's rates are over the whole run.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "step/serving_engine.hpp"

namespace gpusim::step {

namespace {

// A pool's inference: the prefill pool generates the first token alone, without speculation.
workload::Inference pool_inference(const workload::Inference& inf, bool prefill) {
  workload::Inference out = inf;
  if (prefill) {
    out.output_tokens = 1;
    out.load.output_spread = 0;
    out.speculative = workload::Speculative{};
  }
  out.disaggregated = workload::Disaggregation{};
  return out;
}

workload::Layout pool_layout(int tensor) {
  workload::Layout l;
  l.tensor = tensor;
  return l;
}

// Mean board power of one engine over `span` seconds: its prefill and decode iterations at their
// clocks, idle the rest (as evaluate_inference).
double engine_power(const hardware::GpuSpec& g, const ServingOutcome& o, const ServingRun& run, double span) {
  auto phase = [&](const PhaseCost& ph, double clock) {
    if (ph.time.value() <= 0) {
      return 0.0;
    }
    return physics::board_power(
               g, power_mix(ph.arithmetic, ph.compute_bound + ph.memory_bound, ph.dram, ph.time, run.dtype), clock)
               .value() *
           ph.time.value();
  };
  const double busy = o.prefill.time.value() + o.decode.time.value();
  const double idle = std::max(0.0, span - busy);
  const double energy = phase(o.prefill, run.prefill_clock) + phase(o.decode, run.decode_clock) +
                        physics::board_power(g, physics::PowerMix{}, run.decode_clock).value() * idle;
  return span > 0 ? energy / span : physics::board_power(g, physics::PowerMix{}, run.decode_clock).value();
}

}  // namespace

physics::MemoryBreakdown Evaluator::pool_memory(bool prefill) const {
  const workload::Disaggregation& d = job_->inference->disaggregated;
  const workload::Inference inf = pool_inference(*job_->inference, prefill);
  const workload::Layout layout = pool_layout(prefill ? d.prefill_tensor : d.decode_tensor);
  return physics::inference_memory(job_->model, inf, system_->gpu, layout, runtime_->serving,
                                   static_cast<double>(inf.batch));
}

Evaluation Evaluator::evaluate_disaggregated(const hardware::System& sys, const physics::Fabric& fabric,
                                             const Options& options) const {
  const workload::Inference& inf = *job_->inference;
  const workload::Disaggregation& d = inf.disaggregated;
  const workload::ModelShape& m = job_->model;
  const hardware::GpuSpec& g = sys.gpu;
  const bool poisson = inf.load.arrival == workload::Arrival::kPoisson;
  const double api = poisson ? runtime_->serving.api_latency.value() : 0.0;
  const std::int64_t total = inf.load.requests > 0 ? inf.load.requests : 1;

  // The prefill pool: each replica's share of the load, drawn as an aggregated run would.
  workload::Inference pre = pool_inference(inf, true);
  pre.load.rate = inf.load.rate / d.prefill;
  pre.load.requests = std::max<std::int64_t>(1, (total + d.prefill - 1) / d.prefill);
  ServingRun prefill_run;
  serving_run(pool_layout(d.prefill_tensor), sys, fabric, options, prefill_run, &pre);
  // The lengths come from the scenario's own load (its output lengths, which the pool's run does not draw).
  ServingSetup drawing = prefill_run.setup;
  drawing.output = inf.output_tokens;
  drawing.output_spread = inf.load.output_spread;
  const double per_token = physics::kv_bytes_per_token(m, inf, pool_layout(1)).value();
  const bool one_node = d.gpus() <= fabric.gpus_per_node;
  const BytesPerSecond link = one_node ? fabric.intra_p2p : fabric.inter_bus;
  const Seconds alpha = one_node ? fabric.intra_alpha : fabric.inter_alpha;
  const double shards = std::min(d.prefill_tensor, d.decode_tensor);

  struct Handed {
    double arrival = 0;
    double first = 0;
    double ready = 0;  // its KV at the decode pool
    std::int64_t prompt = 0;
    std::int64_t output = 0;
    bool hit = false;
  };
  std::vector<Handed> handed;
  std::vector<ServingOutcome> prefill_outcomes;
  double transfer_bytes = 0;
  double transfer_time = 0;
  for (int i = 0; i < d.prefill; ++i) {
    ServingSetup s = drawing;
    s.seed = inf.load.seed + static_cast<std::uint64_t>(i);
    const std::vector<serving_engine::Drawn> drawn = serving_engine::draw_load(s);
    std::vector<OfferedRequest> offered;
    offered.reserve(drawn.size());
    for (const serving_engine::Drawn& r : drawn) {
      offered.push_back({r.arrival < 0 ? 0.0 : r.arrival, r.prompt, 1, 0, r.hit});
    }
    ServingSetup run = prefill_run.setup;
    run.api_latency = 0;
    run.keep_requests = true;
    ServingOutcome o = simulate_offered(run, *prefill_run.prefill, *prefill_run.decode, offered);
    for (const RequestTimes& t : o.requests) {
      const serving_engine::Drawn& r = drawn[t.index];
      const double bytes = per_token * static_cast<double>(r.prompt);
      const double move = physics::p2p_time(Bytes(bytes / shards), link, alpha).value();
      transfer_bytes += bytes;
      transfer_time += move;
      handed.push_back({t.arrival, t.first, t.first + move, r.prompt, r.output, r.hit});
    }
    prefill_outcomes.push_back(std::move(o));
  }
  std::stable_sort(handed.begin(), handed.end(), [](const Handed& a, const Handed& b) { return a.ready < b.ready; });

  // The decode pool: the requests dealt round robin in the order their KV arrives.
  const workload::Inference dec = pool_inference(inf, false);
  ServingRun decode_run;
  serving_run(pool_layout(d.decode_tensor), sys, fabric, options, decode_run, &dec);
  std::vector<double> done(handed.size(), -1.0);
  std::vector<double> shown(handed.size(), -1.0);  // the user's first token
  std::vector<ServingOutcome> decode_outcomes;
  for (int j = 0; j < d.decode; ++j) {
    std::vector<OfferedRequest> offered;
    std::vector<std::size_t> which;
    for (std::size_t k = static_cast<std::size_t>(j); k < handed.size(); k += static_cast<std::size_t>(d.decode)) {
      const Handed& h = handed[k];
      if (h.output <= 1) {
        done[k] = shown[k] = h.ready;  // its one token, handed over with the KV
        continue;
      }
      // Its first token runs through the model (a one-token chunk over the prompt's KV) and
      // samples the second; N − 1 in all.
      offered.push_back({h.ready, h.prompt + 1, h.output - 1, h.prompt, false});
      which.push_back(k);
    }
    ServingSetup run = decode_run.setup;
    run.api_latency = 0;
    run.keep_requests = true;
    ServingOutcome o = simulate_offered(run, *decode_run.prefill, *decode_run.decode, offered);
    for (const RequestTimes& t : o.requests) {
      done[which[t.index]] = t.done;
      shown[which[t.index]] = t.first;
    }
    decode_outcomes.push_back(std::move(o));
  }

  // Per request, and the run.
  std::vector<double> ttft;
  std::vector<double> tpot;
  std::vector<double> e2e;
  double tokens = 0;
  double first_arrival = std::numeric_limits<double>::infinity();
  double last_done = 0;
  for (std::size_t k = 0; k < handed.size(); ++k) {
    const Handed& h = handed[k];
    if (done[k] < 0) {
      continue;  // not completed (a run stopped at its iteration limit)
    }
    ttft.push_back(shown[k] - h.arrival + api);
    e2e.push_back(done[k] - h.arrival + api);
    if (h.output > 1) {
      tpot.push_back((done[k] - shown[k]) / static_cast<double>(h.output - 1));
    }
    tokens += static_cast<double>(h.output);
    first_arrival = std::min(first_arrival, h.arrival);
    last_done = std::max(last_done, done[k]);
  }
  const auto completed = static_cast<double>(ttft.size());
  InferenceResult r;
  r.ttft = percentiles(ttft);
  r.tpot = percentiles(tpot);
  r.e2e = percentiles(e2e);
  r.queue = prefill_outcomes.front().result.queue;
  const double span = completed > 0 ? last_done - first_arrival : 0.0;
  r.makespan = Seconds(span);
  r.requests = completed;
  r.replicas = d.prefill + d.decode;
  if (span > 0) {
    r.output_tokens_per_s = tokens / span;
    r.requests_per_s = completed / span;
  }
  r.time_to_first_token = r.ttft.p50;
  r.time_per_output_token = r.tpot.p50;
  r.request_latency = r.e2e.p50;
  if (r.tpot.p50.value() > 0) {
    r.tokens_per_s_per_user = 1.0 / r.tpot.p50.value();
  }
  double batch = 0;
  double decode_rows = 0;
  PhaseCost decode_phase;
  for (const ServingOutcome& o : decode_outcomes) {
    r.decode_tokens_per_s += o.decode_rate * decode_run.setup.tokens_per_step;
    r.preemptions += o.preemptions;
    r.truncated = r.truncated || o.result.truncated;
    batch += o.result.batch / d.decode;
    decode_rows += o.decode_rows / d.decode;
    decode_phase += o.decode;
    r.kv_utilization += o.result.kv_utilization / d.decode;
  }
  for (const ServingOutcome& o : prefill_outcomes) {
    r.prefill_tokens_per_s += o.prefill_rate;
    r.preemptions += o.preemptions;
    r.truncated = r.truncated || o.result.truncated;
  }
  r.batch = batch;
  if (decode_phase.time.value() > 0) {
    r.mbu = decode_phase.dram.value() / decode_phase.time.value() / g.memory_bandwidth.value();
  }
  r.kv_capacity_tokens = decode_run.memory.kv_cache.value() / decode_run.per_token;
  r.kv_request_tokens = decode_run.context;
  r.kv_transfer_bytes = completed > 0 ? transfer_bytes / static_cast<double>(handed.size()) : 0.0;
  r.kv_transfer = Seconds(handed.empty() ? 0.0 : transfer_time / static_cast<double>(handed.size()));
  // A Poisson load the pools do not keep up with completes at a lower rate than it arrives
  // (assumption: 10 % below it, beyond a finite run's ramp and drain).
  constexpr double kKeepsUp = 0.9;
  if (poisson && r.requests_per_s < kKeepsUp * inf.load.rate) {
    r.saturated = true;
    r.saturation_requests_per_s = r.requests_per_s;
  }

  Evaluation e;
  e.training = false;
  e.gpus = sys.gpus;
  e.memory = inference_memory(workload::Layout{});
  // The step fields: one decode iteration of the decode pool's mean batch.
  IterationShape it;
  it.rows = it.tokens = it.decode_rows = std::max(1.0, std::round(decode_rows));
  const double prompt = static_cast<double>(inf.prompt_tokens);
  const double output = static_cast<double>(inf.output_tokens);
  it.context = it.rows * (prompt + (1.0 + (output - 1.0) / decode_run.setup.tokens_per_step) / 2.0);
  e.step = decode_step(*decode_run.decode, it, g, *runtime_);
  e.clock = decode_run.decode_clock;
  e.dtype = inf.weight_precision;
  e.peak = g.peak_for(decode_run.dtype);
  e.tokens_per_step = it.rows * d.decode;
  e.tokens_per_s = r.output_tokens_per_s;
  e.tokens_per_s_per_gpu = r.output_tokens_per_s / sys.gpus;
  e.samples_per_s = r.requests_per_s;
  e.model_flops_per_gpu = FlopPerSecond(request_flops(m, prompt, output) * r.requests_per_s / sys.gpus);
  e.hardware_flops_per_gpu = e.model_flops_per_gpu;
  e.mfu = e.hfu = e.model_flops_per_gpu / e.peak;
  e.tokens = completed * output;
  e.job_time = r.makespan;
  e.gpu_time = r.makespan * static_cast<double>(sys.gpus);
  // Power: every GPU of a pool as its replica's engine, averaged over the pools' GPUs.
  double watts = 0;
  for (const ServingOutcome& o : prefill_outcomes) {
    watts += engine_power(g, o, prefill_run, span) * d.prefill_tensor;
  }
  for (const ServingOutcome& o : decode_outcomes) {
    watts += engine_power(g, o, decode_run, span) * d.decode_tensor;
  }
  e.gpu_avg_power = std::min(sys.power_limit, Watts(watts / d.gpus()));
  e.inference = r;
  if (options.op_shares) {
    const Ops pass =
        shared_ops(lowering::lower_forward(m, dec, *runtime_, d.decode_tensor, it.rows, 1.0, prompt + output / 2.0));
    add_shares(*time_pass(pass, g, decode_run.decode_clock), decode_run.layers, true, 1.0, e.ops);
    sort_shares(e.ops);
  }
  return e;
}

}  // namespace gpusim::step
