// Bounds on a serving run that need no simulation (include/gpusim/step.hpp, ServingBounds), for a
// search that rules deployments out before it simulates them.
//   iteration  no iteration that samples a token takes less than the least of the prefill and the
//              decode model's floors (IterationModel::floor): either may time it.
//   tpot       a request's time per output token is its span from first to last token over its
//              n − 1 later tokens, sampled in m − 1 iterations (m = n, or with speculative
//              decoding the engine's steps, engine_output). Each is an iteration of its own that starts
//              after its first token was sampled (an evicted request is recomputed in later
//              iterations), so the span holds n − 1 of them, each at least the floor; an engine that
//              hands tokens out one iteration late (overlap scheduler, async output) stamps the first
//              token at the end of the iteration that samples the second, and the last at the end
//              of the run when nothing follows it, so there the span holds n − 2:
//                tpot >= floor · (m − 1 − late) / (n − 1),  the least over the load's requests
//              (a latency percentile or mean of values that each meet a bound meets it).
//   throughput a run that completes its Poisson load spans from its first arrival to its last
//              request's end, at least an iteration after the last arrival, so its output tokens per
//              second are at most the load's output tokens over (last − first arrival + floor).
//   capacity   an iteration samples one token for each of at most C sequences: the batch limit, and
//              for a KV pool the requests it holds at once, each with the blocks of at least the
//              shortest prompt. Every output token is sampled, so requests that end within a span
//              took at least their output tokens' steps / C iterations of it, and a run's requests
//              per second are at most C / (shortest output's steps · floor) per engine.
#include <algorithm>
#include <limits>

#include "step/serving_engine.hpp"

namespace gpusim::step {

namespace {

ServingBounds bounds_of(ServingRun& run) {
  ServingBounds b;
  b.output_tokens_per_s = std::numeric_limits<double>::infinity();
  b.capacity_requests_per_s = std::numeric_limits<double>::infinity();
  const double floor = std::min(run.prefill->floor(), run.decode->floor()).value();
  b.iteration = Seconds(floor);
  if (floor <= 0) {
    return b;
  }
  const ServingSetup& s = run.setup;
  const std::vector<serving_engine::Drawn>& load = LoadMemo::load(s, *run.tables);
  const double late = s.overlap ? 1.0 : 0.0;
  double tpot = std::numeric_limits<double>::infinity();
  double tokens = 0;
  double first = std::numeric_limits<double>::infinity();
  double last = -std::numeric_limits<double>::infinity();
  for (const serving_engine::Drawn& r : load) {
    const auto n = static_cast<double>(r.output);
    const auto m = static_cast<double>(serving_engine::engine_output(s, r.output));
    if (r.output > 1) {
      tpot = std::min(tpot, floor * std::max(0.0, m - 1.0 - late) / (n - 1.0));
    }
    tokens += n;
    first = std::min(first, r.arrival);
    last = std::max(last, r.arrival);
  }
  b.tpot = Seconds(std::isfinite(tpot) ? tpot : 0.0);
  // The bounds are of the runs' own sums: a margin of 1e-9 keeps them above whatever the order those
  // round in.
  constexpr double kMargin = 1e-9;
  if (s.arrival == workload::Arrival::kPoisson && !load.empty()) {
    b.output_tokens_per_s = tokens / (last - first + floor) * run.engines * (1.0 + kMargin);
  }
  // The capacity run draws a load of its own: the shortest lengths any draw gives (draw_length).
  const auto shortest = [](std::int64_t mean, double spread) {
    return spread <= 0 ? mean : std::max<std::int64_t>(1, std::llround(static_cast<double>(mean) * (1.0 - spread)));
  };
  auto seqs = static_cast<double>(s.max_seqs);
  if (s.scheduler == workload::Scheduler::kContinuous) {
    // (a request that finds the shared prefix cached holds only the blocks beyond it)
    const std::int64_t own = shortest(s.prompt, s.spread) - (s.prefix_hit > 0 ? s.prefix : 0);
    const std::int64_t blocks = std::max<std::int64_t>(1, (own + s.kv_block - 1) / s.kv_block);
    seqs = std::min(seqs, std::floor(static_cast<double>(s.kv_blocks) / static_cast<double>(blocks)));
  }
  b.capacity_requests_per_s =
      seqs / (static_cast<double>(serving_engine::engine_output(s, shortest(s.output, s.output_spread))) * floor) *
      run.engines * (1.0 + kMargin);
  return b;
}

}  // namespace

ServingBounds Evaluator::serving_bounds(const workload::Layout& layout, int gpus, const Options& options) {
  if (options.tables != nullptr) {
    share_kernels(*options.tables);
  }
  const auto& [sys, fabric] = system_for(gpus);
  if (job_->training || job_->model.images()) {
    ServingBounds b;
    b.output_tokens_per_s = b.capacity_requests_per_s = std::numeric_limits<double>::infinity();
    return b;
  }
  ServingRun run;
  serving_run(layout, sys, fabric, options, run);
  return bounds_of(run);
}

std::optional<ServingBounds> Evaluator::serving_bounds_past(const workload::Layout& layout, Seconds tpot, int gpus,
                                                            const Options& options) {
  if (options.tables != nullptr) {
    share_kernels(*options.tables);
  }
  const auto& [sys, fabric] = system_for(gpus);
  if (job_->training || job_->model.images()) {
    return std::nullopt;
  }
  ServingRun run;
  serving_run(layout, sys, fabric, options, run);
  // The floor, and with it the TPOT bound, is at most any iteration's time.
  IterationShape one;
  one.tokens = one.rows = one.decode_rows = 1;
  one.context = 1;
  if (run.decode->time(one) <= tpot) {
    return std::nullopt;
  }
  const ServingBounds b = bounds_of(run);
  if (b.tpot <= tpot) {
    return std::nullopt;
  }
  return b;
}

}  // namespace gpusim::step
