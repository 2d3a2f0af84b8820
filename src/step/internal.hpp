// Private to src/step/: kernel sums of a pass and the combination of a training step from its
// parts (equations in include/gpusim/step.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "gpusim/step.hpp"

namespace gpusim::step {

// Kernel time of one micro-batch through one pipeline stage (or of one inference pass), and the
// optimizer step.
struct StepKernels {
  Seconds micro;          // all kernels of one micro-batch
  Seconds compute_bound;  // of `micro`
  Flop compute_bound_flops;
  Seconds memory_bound;  // of `micro`
  Seconds arithmetic;    // of `micro`: the arithmetic time of every kernel (physics::KernelTime::busy_arithmetic)
  Seconds backward;      // backward and recompute of one micro-batch
  Seconds attention;     // attention kernels of one micro-batch (ring attention hides its passes behind them)
  Flop recompute_flops;  // of one micro-batch
  double kernels = 0;    // per micro-batch
  double backward_kernels = 0;  // of `kernels`: backward and recompute
  Bytes dram;                   // DRAM traffic of one micro-batch
  Seconds optimizer;            // once per step
  Bytes optimizer_dram;
  double optimizer_kernels = 0;
  StepKernels& operator+=(const StepKernels& o);
  [[nodiscard]] StepKernels scaled(double k) const;  // micro-batch parts only
};

// The ops of one lowering, shared by its kernel sums at every clock.
using Ops = std::shared_ptr<const std::vector<lowering::Op>>;

struct Evaluator::Kernels {
  Ops ops;
  std::vector<physics::KernelTime> times;  // of each op, one instance
  StepKernels layer;                       // one transformer layer
  StepKernels embedding;
  StepKernels head;
};

// Times every op once and sums them per scope.
std::shared_ptr<const Evaluator::Kernels> time_pass(Ops ops, const hardware::GpuSpec& gpu, double clock);
inline Ops shared_ops(std::vector<lowering::Op> ops) {
  return std::make_shared<const std::vector<lowering::Op>>(std::move(ops));
}
// The power mix of a training step or an inference pass: of `kernels` (kernel time), the share the
// arithmetic units are busy (`arithmetic`, on tensor or CUDA cores by `dtype`), the rest waiting
// on memory, and the DRAM traffic rate. A bandwidth-bound GEMM keeps its tensor cores busy for its
// arithmetic time, so a kernel's energy does not jump where it turns compute-bound.
physics::PowerMix power_mix(Seconds arithmetic, Seconds kernels, Bytes dram, Seconds period, DType dtype);
// The kernels of one micro-batch through a stage of `layers` layers that holds the head and, when
// `with_embedding`, the embedding.
StepKernels stage_kernels(const Evaluator::Kernels& k, double layers, bool with_embedding);
// Per-op shares of a step: each op's time × its repeats (layers for layer ops, then micro-batches),
// aggregated by name and phase, largest first.
void add_shares(const Evaluator::Kernels& k, double layers, bool with_embedding, double micro_batches,
                std::vector<OpShare>& out);
void sort_shares(std::vector<OpShare>& out);

// Everything of the step but the input pipeline: stage, bubble, exposed communication, overhead,
// launch stall, exposed offload traffic (time = compute + overhead + communication + bubble + offload).
StepBreakdown combine_training_step(const StepKernels& k, double micro_batches, const physics::ParallelComm& comm,
                                    const workload::Layout& layout, const hardware::GpuSpec& g,
                                    const workload::Runtime& rt, const physics::OffloadCost& offload = {});
// One inference pass: kernels + kernel gaps + launch stall.
Seconds pass_time(const StepKernels& k, const hardware::GpuSpec& g, const workload::Runtime& rt);

// Clocks are settled to this resolution, so that nearby layouts share the memo of kernel sums.
inline constexpr double kClockStep = 1e-3;

// Coarse steps of the clock search, in grid steps (0.05 of the rated boost clock).
inline constexpr double kClockCoarse = 50;

// The clock a period sustains: the highest clock on a grid of kClockStep whose board power, with
// the period's power mix at that clock (compute-bound kernels shorten as it rises), is within the
// limit. That power rises with the clock but for small dips where a GEMM changes its split-K at a
// clock (physics/kernel.cpp), so the search walks down a fixed coarse grid from the highest clock to
// the first point within the limit and searches the coarse step above it: the grid does not depend
// on the highest clock, so a higher clock limit never gives a lower clock, nor a looser limit.
template <class MixAt>
double settle_clock(const hardware::GpuSpec& g, Watts limit, MixAt mix_at) {
  const auto power = [&](double step) {
    const double clock = step * kClockStep;
    return physics::board_power(g, mix_at(clock), clock).value();
  };
  const auto within = [&](double step) { return power(step) <= limit.value(); };
  const double top = std::floor(physics::max_clock_ratio(g) / kClockStep + 1e-9);  // grid steps
  if (within(top)) {
    return top * kClockStep;
  }
  const double bottom = std::ceil(physics::min_clock_ratio() / kClockStep);
  double lo = std::floor(top / kClockCoarse) * kClockCoarse;
  while (lo > bottom && !within(lo)) {
    lo -= kClockCoarse;
  }
  if (lo <= bottom) {
    lo = bottom;  // the lowest clock the model considers (physics::sustained_clock)
    if (!within(lo)) {
      return lo * kClockStep;
    }
  }
  double hi = std::floor(lo / kClockCoarse) * kClockCoarse + kClockCoarse;  // may lie above `top`
  // Within the coarse step the power is close to linear in the clock: aim at the crossing by
  // interpolation, and bisect when that did not halve the interval (safeguarded regula falsi).
  double p_lo = power(lo);
  double p_hi = power(hi);
  bool interpolate = true;
  while (hi - lo > 1) {  // p_lo <= limit < p_hi
    const double width = hi - lo;
    double mid = std::floor(0.5 * (lo + hi));
    if (interpolate && p_hi > p_lo) {
      mid = std::clamp(lo + std::floor((limit.value() - p_lo) / (p_hi - p_lo) * width), lo + 1, hi - 1);
    }
    const double p = power(mid);
    if (p <= limit.value()) {
      lo = mid;
      p_lo = p;
    } else {
      hi = mid;
      p_hi = p;
    }
    interpolate = hi - lo <= 0.5 * width;
  }
  return std::min(lo, top) * kClockStep;
}

// A board whose limit falls between two clock steps alternates between them so that its power
// averages to the limit (the power-capping loop dithers between adjacent V/F points). Of the work,
// the share φ run at the upper step, given each step's busy time and power:
//   φ (E_hi − E_lo) + E_lo = L · (φ (T_hi − T_lo) + T_lo),  E = P · T
// (0 when the lower step already meets the limit exactly, below 1 while the upper exceeds it).
// Time and energy are then the φ-weighted mean of the two steps', so the step time moves smoothly
// with the limit and with anything that changes the power, instead of by whole clock steps.
double dither_share(Watts limit, Seconds t_lo, Watts p_lo, Seconds t_hi, Watts p_hi);
// The clock and the power of the alternation: each step's, weighted by the time spent at it,
// (1 − φ)·T_lo and φ·T_hi (φ > 0, so that time is not 0).
struct Dithered {
  double clock = 0;
  Watts power;
};
Dithered dithered(double clock, Seconds t_lo, Watts p_lo, Seconds t_hi, Watts p_hi, double phi);
// Every time of a step, φ of the way from `lo` to `hi` (the same kernels at two clocks).
StepBreakdown blend(const StepBreakdown& lo, const StepBreakdown& hi, double phi);

// The step fields of a serving evaluation: one decode iteration `d` of `decode` (inference.cpp).
StepBreakdown decode_step(const IterationModel& decode, const IterationShape& d, const hardware::GpuSpec& g,
                          const workload::Runtime& rt);
// Model FLOPs of one request: every weight once per prompt and output token, and attention.
double request_flops(const workload::ModelShape& m, double prompt, double output);

// One engine (a data-parallel replica, or one of a pipeline's virtual engines) and its share of
// the load (serving.cpp).
struct ServingSetup {
  workload::Scheduler scheduler = workload::Scheduler::kStatic;
  workload::Arrival arrival = workload::Arrival::kOffline;
  std::int64_t max_seqs = 1;  // static: the batch
  std::int64_t max_batched_tokens = 0;
  bool chunked = false;
  bool reserve_output = false;
  bool overlap = false;              // tokens reach the user one iteration after they are sampled
  std::int64_t scheduler_steps = 1;  // decode iterations per scheduler call: admissions only between calls
  bool mixed = true;                 // false: an iteration that admits prompts runs no decodes
  double api_latency = 0;            // seconds the API server adds to every request's first token
  double tokenize_per_token = 0;     // and seconds per prompt token its tokenizer adds to it
  std::int64_t kv_block = 16;
  std::int64_t kv_blocks = 0;  // the pool (static engines hold their batch: no limit)
  std::int64_t prompt = 0;
  std::int64_t output = 0;
  double spread = 0;         // prompt lengths uniform in mean x [1 - spread, 1 + spread]
  double output_spread = 0;  // output lengths likewise
  std::int64_t requests = 0;
  double rate = 0;               // requests per second (Poisson)
  std::int64_t concurrency = 0;  // in flight (closed loop)
  std::uint64_t seed = 1;
  // Speculative decoding: output tokens a decode step yields on average (workload::tokens_per_step);
  // a request of N output tokens takes its first from the prompt's pass and the rest in
  // round((N − 1) / τ) steps, each of which the engine runs as one decode.
  double tokens_per_step = 1;
  // Prefix caching: the shared prefix (whole KV blocks, held once in the pool, outside kv_blocks) and
  // the share of requests that find it cached (drawn from a stream of their own).
  std::int64_t prefix = 0;
  double prefix_hit = 0;
  bool latencies = true;       // false: the outcome's latency percentiles are left empty (a capacity run)
  bool keep_requests = false;  // the outcome keeps every completed request's times (ServingOutcome::requests)
};
// One completed request of a run, for runs composed from several engines (disaggregated pools).
struct RequestTimes {
  std::size_t index = 0;  // in the engine's load
  double arrival = 0;
  double first = 0;  // its first output token reaches the user
  double done = 0;   // its last
  std::int64_t prompt = 0;
  std::int64_t tokens = 0;  // output tokens
};
// A request offered to an engine with its arrival and lengths given (not drawn), and the prompt
// tokens whose KV it brings (held by its own blocks once admitted).
struct OfferedRequest {
  double arrival = 0;
  std::int64_t prompt = 0;
  std::int64_t output = 0;
  std::int64_t cached = 0;
  bool prefix_hit = false;  // finds the shared prefix cached
};
// Kernel time and traffic of the iterations run at one clock.
struct ServingOutcome {
  InferenceResult result;   // latencies and rates of this engine
  PhaseCost prefill;        // iterations with prefill tokens (at the prefill model's clock)
  PhaseCost decode;         // decode-only iterations
  double decode_rows = 0;   // mean sequences per iteration that decodes
  double decode_rate = 0;   // sequences decoded per second of the iterations that decode
  double prefill_rate = 0;  // prompt tokens per second of the iterations that prefill
  double busy = 0;
  double elapsed = 0;
  double preemptions = 0;
  bool stalled = false;                // requests left that no iteration could take
  bool truncated = false;              // stopped at the iteration limit with requests left
  std::vector<RequestTimes> requests;  // with ServingSetup::keep_requests, in arrival order
};
// The load of `setup` run through the engine. Runs that share `tables` and a load (its requests,
// lengths, arrival process and seed) draw its requests once (the runs of a serving search that
// differ in batch limit alone).
ServingOutcome simulate_serving(const ServingSetup& setup, const IterationModel& prefill, const IterationModel& decode,
                                TableCache* tables = nullptr);
// The same engine serving the requests `offered` (their count and arrivals replace the setup's load,
// which must be an open one).
ServingOutcome simulate_offered(const ServingSetup& setup, const IterationModel& prefill, const IterationModel& decode,
                                const std::vector<OfferedRequest>& offered);

// A serving deployment as the evaluator simulates it (Evaluator::serving_run, inference.cpp): its
// inference settings (a static engine's largest batch resolved), memory, iteration models at the
// clocks prefill and decode settle at, and one engine's setup and share of the load.
struct ServingRun {
  workload::Inference inf;
  physics::MemoryBreakdown memory;
  int engines = 1;             // data-parallel replicas × a pipeline's virtual engines
  double layers = 1;           // of a pipeline stage
  DType dtype = DType::kFp16;  // the weights' compute dtype on this GPU (fp16 where it lacks theirs)
  double per_token = 0;        // KV bytes per token per GPU
  double context = 0;          // a request's longest context
  double prefill_clock = 1;
  double decode_clock = 1;
  std::optional<IterationModel> prefill;
  std::optional<IterationModel> decode;
  ServingSetup setup;
  TableCache own;                // the tables, unless the caller's options lend theirs
  TableCache* tables = nullptr;  // &own or the caller's
};

}  // namespace gpusim::step
