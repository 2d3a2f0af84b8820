// The evaluator: the one function that times a step. Given the hardware, the job, its layout and
// the runtime, it returns the whole breakdown of one step — kernels, exposed communication,
// pipeline bubble, input stall, overhead — with memory per GPU, throughput, utilization, time to
// finish and average power. `estimate`, `plan`, `sweep`, `compare`, `breakeven`, `roofline` and
// `validate` all reach a step through it; nothing else computes one.
//
// Training, one optimizer step (communication in physics/parallel.cpp):
//   stage    = one micro-batch through the slowest pipeline stage: Σ op time + kernel gaps +
//              remainder × kernels + exposed tensor- and pipeline-parallel communication
//   pipeline = m · stage + bubble, bubble = (p − 1) / v · stage (1F1B, v virtual stages) [narayanan-2021]
//   overhead = Σ kernel launches × kernel_overhead + remainder × kernels (the runtime's time
//              outside modelled kernels, calibrated per runtime)
//              + launch stall: a kernel starts when the GPU is free and the host has launched it
//              (eager or CUDA graph), over three phases: all before the last backward, the last
//              backward, the optimizer (training.cpp: combine_training_step)
//   comm     = data-parallel gradient (and ZeRO-3 parameter) collectives, of which
//              the runtime's overlap share × (the span of the last micro-batch's backward, or all
//              compute for ZeRO-3), at most the fabric's overlap cap (host-staged links hide less)
//              is hidden; the rest delays the optimizer, unless the host is still launching it
//   input    = host pipeline time per step beyond the GPU step (the slowest "stave")
//   step     = kernels + overhead + exposed comm + bubble + input stall
// Inference: time to first token = the prefill pass; time per output token = one decode pass at
// the mean context (prompt + output / 2); each pass pays its kernel gaps and any launch stall.
// Utilization [chowdhery-2022]: MFU = model FLOPs per second / dense peak of the dtype; HFU also
// counts recomputation. Power and clock: the step runs at the highest clock whose board power
// over its busy period (physics::board_power over the shares of tensor-core, CUDA-core and
// bandwidth-bound work and the DRAM traffic of the step without its pipeline bubble) stays within
// the power limit (settle_clock in step/internal.hpp); a limit between two clock steps is met by
// alternating between them (dither_share); compute-bound kernels run at that clock,
// bandwidth-bound ones at the memory's rate. The average power adds the bubble at idle power.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpusim/hardware.hpp"
#include "gpusim/lowering.hpp"
#include "gpusim/physics.hpp"
#include "gpusim/workload.hpp"

namespace gpusim::step {

using physics::kStaveNames;
using physics::Stave;

struct StepBreakdown {
  Seconds time;
  Seconds compute;        // all kernels (GEMM, attention, memory-bound, optimizer)
  Seconds gemm;           // compute-bound kernels (GEMMs and attention)
  Flop gemm_flops;        // FLOPs of the compute-bound kernels
  Seconds memory_bound;   // bandwidth-bound kernels
  Seconds communication;  // exposed
  Seconds communication_total;
  Seconds bubble;
  Seconds input_stall;
  Seconds offload;                   // exposed host offload traffic and the CPU optimizer step
  Seconds overhead;                  // kernel gaps + framework time + launch stall
  Seconds launch_stall;              // GPU idle because the host launches kernels slower than they run
  Seconds host_launch;               // host time to launch the step's kernels (eager or CUDA graph)
  double kernels = 0;                // kernel launches per step
  Stave input_stave = Stave::kNone;  // the slowest input stage, when there is an input pipeline
};

// p50, p90 and p99 of a per-request latency over the simulated requests.
struct Percentiles {
  Seconds mean;  // what most serving benchmarks print beside (or instead of) the percentiles
  Seconds p50;
  Seconds p90;
  Seconds p99;
};

// The mean of v and its 50th, 90th and 99th nearest-rank percentiles (the p-th is the value of
// rank ceil(p·n) in ascending order); may reorder v. v holds no NaN.
[[nodiscard]] Percentiles percentiles(std::vector<double>& v);

// The serving engine's two ways of running an iteration (serving_decoders.cpp): through its
// decode set and a static batch's totals (the default), or request by request, the reference the
// first is held equal to by the tests. Process-wide; set it before estimates run.
void set_serving_by_request(bool on);

// A serving deployment under its load (serving.cpp: the engine's scheduler simulated request by
// request, each iteration timed by the IterationModel).
// A Poisson load above this share of the deployment's capacity saturates it (InferenceResult::
// saturated): within 2 % of the capacity the queue of a finite run still drains; beyond it, it grows.
inline constexpr double kSaturation = 0.98;

struct InferenceResult {
  Seconds time_to_first_token;           // p50 of ttft
  Seconds time_per_output_token;         // p50 of tpot
  Seconds request_latency;               // p50 of e2e
  Percentiles ttft;                      // arrival to the first output token
  Percentiles tpot;                      // (e2e − ttft) / (output tokens − 1)
  Percentiles e2e;                       // arrival to the last token
  Percentiles queue;                     // arrival to the first scheduled token
  double output_tokens_per_s = 0;        // all replicas: output tokens over the whole run, prefill included
  double decode_tokens_per_s = 0;        // all replicas: sequences decoded per second of decoding iterations
  double prefill_tokens_per_s = 0;       // all replicas: prompt tokens per second of prefilling iterations
  double requests_per_s = 0;             // completed requests per second, all replicas
  double tokens_per_s_per_user = 0;      // 1 / p50 time per output token
  double mbu = 0;                        // DRAM bytes per second of decode iterations / peak bandwidth
  double batch = 0;                      // mean sequences in flight per replica (static: the batch)
  double kv_utilization = 0;             // mean share of the KV pool in use (continuous engines)
  double kv_capacity_tokens = 0;         // tokens the KV pool of one replica holds within the engine's share
  double kv_request_tokens = 0;          // tokens one request's longest context needs (continuous engines)
  double preemptions = 0;                // requests evicted and recomputed
  double requests = 0;                   // simulated, all replicas
  int replicas = 1;                      // data-parallel replicas x pipeline virtual engines
  Seconds makespan;                      // first arrival to last completion
  double saturation_requests_per_s = 0;  // Poisson load: the most the deployment completes per second
  bool saturated = false;                // the offered rate exceeds it: the queue grows without bound
  bool truncated = false;                // the simulation stopped at its iteration limit with requests left
  // Disaggregated pools: a request's KV cache moved from the prefill to the decode pool (mean bytes
  // and time per request; 0 when aggregated).
  double kv_transfer_bytes = 0;
  Seconds kv_transfer;
};

// What one engine iteration processes: new tokens (prefill and decode together: the GEMMs' M),
// sequences that sample a token (the head's rows), decoding sequences and the context tokens they
// attend over, and the (query, key) pairs of the prefill tokens' causal attention.
struct IterationShape {
  double tokens = 0;
  double rows = 0;
  double decode_rows = 0;
  double context = 0;
  double pairs = 0;  // Σ over prefill chunks of q · (prior + (q + 1) / 2)
};
// What a serving phase costs: one iteration, or a run's prefill or decode iterations summed.
struct PhaseCost {
  Seconds time;           // through every pipeline stage
  Seconds compute_bound;  // kernels of one stage
  Seconds memory_bound;
  Seconds arithmetic;  // of the kernels' time, their arithmetic (physics::KernelTime::busy_arithmetic)
  Bytes dram;
  PhaseCost& operator+=(const PhaseCost& o) {
    time += o.time;
    compute_bound += o.compute_bound;
    memory_bound += o.memory_bound;
    arithmetic += o.arithmetic;
    dram += o.dram;
    return *this;
  }
  // k phases like this one.
  [[nodiscard]] PhaseCost times(double k) const {
    return {time * k, compute_bound * k, memory_bound * k, arithmetic * k, dram * k};
  }
};
struct IterationCost : PhaseCost {
  // Of `time`, the all-reduces and stage sends the GPU waits for: per stage, what the all-reduces
  // add beyond the kernels and gaps or the host launch, whichever is longer, plus the sends.
  Seconds communication;
  Seconds communication_total;  // every all-reduce and send of the iteration, hidden or not
};
class IterationModel;
// Serving iteration tables kept between evaluations (IterationModel): the rows tabulated so far and
// what the model derives from the lowering once. A table is a function of the GPU, the fabric, the
// model shape, the inference's formats, the runtime's kernels and all-reduce, the tensor and
// pipeline split and the clock. It reads neither the load ([serving] arrivals, rate, requests), nor
// the inference's batch, nor the engine's scheduling and host costs (max_seqs, step overhead...),
// nor the launch costs, kernel gaps and remainder a model adds on top, so one entry serves every
// evaluation that differs in those alone (the batch limits and loads of the serving search, the
// capacity run beside a Poisson run, the phases of one run at one clock, the band's moves of
// those inputs). Any other difference is another entry. A cache serves one thread at a time; an
// evaluation with a cache gives the same numbers as one without (tests/test_iteration_cache.cpp).
// A training evaluation keeps its kernel sums by lowering and clock in the cache too (an entry per
// GPU but its kernel gap and launch costs, model, training and runtime but its remainder: what no
// kernel sum reads), so the variants of one job in those share them (tests/test_training_kernel_cache.cpp).
struct LoadMemo;    // serving.cpp: the requests a load draws, kept in a TableCache
struct ServingRun;  // internal.hpp: a serving deployment as the evaluator simulates it

class TableCache {
 public:
  TableCache();
  ~TableCache();
  TableCache(const TableCache&) = delete;
  TableCache& operator=(const TableCache&) = delete;
  TableCache(TableCache&&) noexcept;
  TableCache& operator=(TableCache&&) noexcept;
  [[nodiscard]] std::size_t size() const { return tables_.size(); }
  [[nodiscard]] std::size_t training_entries() const { return training_.size(); }

 private:
  friend class IterationModel;
  friend class Evaluator;
  struct Tables;  // iteration.cpp
  std::vector<std::shared_ptr<Tables>> tables_;
  struct TrainingKernels;  // evaluator.cpp: a training job's kernel sums by lowering and clock
  std::vector<std::shared_ptr<TrainingKernels>> training_;
  friend struct LoadMemo;
  struct Loads;  // serving.cpp: requests drawn by load and seed
  std::shared_ptr<Loads> loads_;
};

// One iteration of one serving replica (`pipeline` stages, each a `tensor`-parallel group),
// tabulated once from the lowering and the kernel model (physics::kernel_time) at one clock:
//   stage  = (layers / p) · [dense(T) + attention(decode rows, context, pairs)] + head(rows)
//            + embedding(T) + TP all-reduces(T): 2 per layer and 1 for the embedding
//   gpu    = kernels · (1 + remainder) + kernel gaps + all-reduces
//   time   = p · max(gpu, host launch of its kernels) + (p − 1) · activation send(T)
//            + the engine's host work the GPU waits for (step_overhead, schedule_per_sequence and
//              output_per_sequence, amortized over scheduler_steps and hidden as the engine
//              overlaps it: engine_host_time in src/step/engine_host.hpp)
// dense(T), head(rows) and the all-reduces are tabulated over a grid of T and interpolated;
// attention is linear in decode rows, context tokens and pairs (memory- and compute-bound slopes).
// With speculative decoding [leviathan-2023] an iteration's d decode rows are d speculative steps:
//   target  = the iteration above with T + k·d tokens and rows + k·d rows (k + 1 verified
//             positions per sequence; their attention reads each sequence's KV once, the k extra
//             queries' arithmetic hidden under that read at the few rows per KV head it adds),
//             its context in tokens (the engine counts a request's output in steps: × (P + N/2) /
//             (P + S/2), the mean request's ratio, ServingSetup::tokens_per_step)
//   propose = proposer(the iteration's tokens) + (passes − 1) · proposer(d decode rows)
//   time    = p · stage(target) + propose + the engine's host work (per sequence, not per token)
// where the proposer is the draft network's own IterationModel at the same clock and tensor split,
// with no engine host work of its own.
// A grid point is tabulated the first time an iteration falls beside it: a short run (one batch, a
// few hundred requests) touches few of them, and the values are the same whenever they are made.
// The tables are those of `cache` where it holds them (TableCache); copies share them too. One
// model, its copies and its cache serve one thread at a time.
class IterationModel {
 public:
  IterationModel(const hardware::System& sys, const physics::Fabric& fabric, const workload::ModelShape& m,
                 const workload::Inference& inf, const workload::Runtime& rt, const workload::Layout& layout,
                 double clock, double max_tokens, TableCache& cache);
  [[nodiscard]] IterationCost cost(const IterationShape& s) const;
  // cost(s).time alone (the same arithmetic, so the same value to the last bit).
  [[nodiscard]] Seconds time(const IterationShape& s) const;
  // A time no iteration with a token and a sampled row (tokens, rows >= 1) goes below; zero where the
  // tables give none (iteration.cpp). Tabulates every grid point.
  [[nodiscard]] Seconds floor() const;
  [[nodiscard]] double clock() const { return clock_; }
  [[nodiscard]] double kernels() const { return kernels_; }
  [[nodiscard]] Seconds gaps() const { return gap_; }  // the kernel gaps of one stage

 private:
  // A table's entry: a PhaseCost's fields at one grid point, or per unit of a count (seconds and
  // bytes per decode row, context token or prefill pair), hence plain numbers.
  struct Point {
    double time = 0;
    double compute_bound = 0;
    double memory_bound = 0;
    double arithmetic = 0;
    double dram = 0;
  };
  // Where x falls on the grid: the segment's upper index and the fraction along it (index 0: below
  // the first point, scaled from zero).
  struct Where {
    std::size_t i = 0;
    double f = 0;
  };
  // The tables at one grid point.
  struct Row {
    Point dense;      // layers of the stage (attention aside) and the embedding, at T tokens
    Point head;       // final norm and logits for T rows
    double comm = 0;  // all-reduces, seconds
    double send = 0;  // one activation send between stages, seconds
  };
  [[nodiscard]] static Where where(const std::vector<double>& grid, double x);
  [[nodiscard]] const Row& row(std::size_t i) const;
  // The rows either side of w: `lo` null below the first grid point; false where w is zero.
  struct Span {
    const Row* lo = nullptr;
    const Row* hi = nullptr;
    double f = 0;
  };
  [[nodiscard]] bool span(Where w, Span& out) const;
  // One table interpolated along a span (the rows fetched once for every table of an iteration).
  [[nodiscard]] static Point at(const Span& s, Point Row::*table);
  [[nodiscard]] static double at(const Span& s, double Row::*table);
  // What new tables derive from the lowering once: the attention slopes and the kernel count.
  static void derive(TableCache::Tables& t);
  friend struct TableCache::Tables;
  std::vector<double> grid_;
  std::shared_ptr<TableCache::Tables> tables_;  // what the rows are computed from, and the rows made so far
  Point decode_per_row_;                        // decode attention: per sequence, and per context token
  Point decode_per_context_;
  Point prefill_per_pair_;
  double remainder_ = 0;
  double kernels_ = 0;
  Seconds gap_;
  Seconds host_;
  int pipeline_ = 1;
  double clock_ = 1;
  workload::ServingEngine engine_;  // the engine's host costs (step::engine_host_time)
  // The parts of an iteration that depend on its token count alone, and on its row count alone.
  // Iterations of a run recur at the same counts (decodes at every batch size it passes through,
  // prompt chunks beside them): whole counts below kByCount and the grid's last point are kept by
  // count in the tables (so across the evaluations that share them); any other count is made
  // anew unless it is the last such count asked for.
  struct TokenPart {
    double count = -1;  // the tokens it is of; < 0: not yet made
    Point dense;
    double comm = 0;
    double send = 0;
  };
  struct RowPart {
    double count = -1;  // the rows it is of
    Point head;
  };
  static constexpr std::size_t kByCount = 16384;
  [[nodiscard]] const TokenPart& token_part(double tokens) const;
  [[nodiscard]] const RowPart& row_part(double rows) const;
  // The time of an iteration from its parts; `stage` is set to one stage's time, `busy` to its
  // kernels' busy time.
  // `v` is the target's iteration (verified(s)), `s` the engine's.
  [[nodiscard]] Seconds time(const TokenPart& t, const RowPart& r, const IterationShape& v, const IterationShape& s,
                             double& stage, double& busy) const;
  // The target's share of a speculative iteration (the iteration itself without speculation).
  [[nodiscard]] IterationShape verified(const IterationShape& s) const;
  // The proposer's passes over an iteration; zero without a proposer.
  [[nodiscard]] IterationCost propose(const IterationShape& s) const;
  double spec_extra_ = 0;     // k: tokens verified per decode row beyond its own
  double context_scale_ = 1;  // engine context to tokens (speculation)
  double passes_ = 0;         // proposer passes per step
  std::shared_ptr<const IterationModel> proposer_;
  mutable TokenPart other_tokens_;  // the last count the memo does not keep
  mutable RowPart other_rows_;
  double memo_limit_ = 0;  // counts below it are kept in the tables' memo (token_part, row_part)

 public:
  // The parts of iterations of one token count and one row count, looked up once: iterations that
  // differ only in their context or pairs (a stretch of decodes) share them. Valid until the next
  // look-up by this model or one sharing its tables.
  class Counts {
    friend class IterationModel;
    const TokenPart* tokens_ = nullptr;
    const RowPart* rows_ = nullptr;
  };
  // The parts of the iteration `s` (only its token and row counts and decode rows are read).
  [[nodiscard]] Counts counts(const IterationShape& s) const;
  // time(s) and cost(s) for an iteration of `c`'s token and row counts (s.tokens, s.rows), to the
  // last bit.
  [[nodiscard]] Seconds time(const Counts& c, const IterationShape& s) const;
  [[nodiscard]] IterationCost cost(const Counts& c, const IterationShape& s) const;
};

// The step's kernels aggregated by name and phase (per step, all instances).
struct OpShare {
  std::string name;
  lowering::Phase phase = lowering::Phase::kForward;
  lowering::OpKind kind = lowering::OpKind::kMemoryBound;
  Flop flops;
  Bytes bytes;
  Seconds time;
  bool compute_bound = false;
};

struct Evaluation {
  bool training = true;
  int gpus = 1;
  StepBreakdown step;  // training: one optimizer step; inference: one decode step
  physics::MemoryBreakdown memory;
  std::vector<OpShare> ops;  // largest time first; only with Options::op_shares
  DType dtype = DType::kBf16;
  FlopPerSecond peak;          // dense peak of the dtype per GPU (nominal clocks)
  double tokens_per_step = 0;  // all GPUs
  double tokens_per_s = 0;     // training: trained tokens; inference: output tokens in decode
  double tokens_per_s_per_gpu = 0;
  double samples_per_s = 0;              // sequences (training) or requests (inference) per second
  FlopPerSecond model_flops_per_gpu;     // achieved model FLOP/s per GPU
  FlopPerSecond hardware_flops_per_gpu;  // including recomputation (what Megatron-LM reports)
  double mfu = 0;
  double hfu = 0;
  double tokens = 0;  // training tokens, or output tokens of one batch of requests
  Seconds job_time;   // time to train, or the latency of one batch of requests
  Seconds gpu_time;   // job_time × GPUs (GPU-seconds)
  Watts gpu_avg_power;
  double clock = 1;  // SM clock the step sustains over the rated boost clock (inference: decode's)
  std::optional<InferenceResult> inference;
};

// Whether the job can run as given: its memory fits the GPU (or the engine's share of it) and the
// host, and a continuous-batching engine's KV pool holds one request's longest context (else the
// engine refuses to start: vLLM's worker raises "The model's max seq len ... is larger than the
// maximum number of tokens that can be stored in KV cache" [vllm-source]).
// The figures of a job that cannot run are what it would do if it could.
[[nodiscard]] inline bool runs(const Evaluation& e) {
  return e.memory.fits() && !(e.inference && e.inference->kv_request_tokens > e.inference->kv_capacity_tokens);
}

struct Options {
  bool op_shares = false;  // aggregate per-op times (for reports and the roofline)
  // A Poisson load's capacity run (inference.saturation_requests_per_s and saturated): the band of
  // an estimate, which varies none of the two, skips it.
  bool capacity = true;
  // Serving iteration tables to take from and keep in (one thread at a time); none: the
  // evaluation keeps its own for its runs.
  TableCache* tables = nullptr;
};

// An evaluator for one (hardware, job, runtime); layouts and GPU counts vary per call. It is the
// compiled form of the three: the parameter counts, once; the fabric per GPU count; the kernel
// sums of one micro-batch per lowering (tensor, sequence parallelism, micro-batch, recompute,
// ZeRO-3 or not, expert split, context) and clock; the communication terms the last layouts share
// with the next; the memory of the last layout. A search pays only for what a layout changes; a
// kept and a fresh evaluation run the same code and give the same numbers
// (tests/test_evaluator_reuse.cpp). One evaluator serves one thread at a time.
// What any simulated run of a serving deployment satisfies, known from its iteration models and
// its drawn requests without simulating it (Evaluator::serving_bounds, serving_bounds.cpp). The
// last two hold for a run that completes its load (InferenceResult::truncated false).
struct ServingBounds {
  Seconds iteration;  // no iteration that samples a token takes less
  // Every request with more than one output token has at least this time per output token (0: no
  // such request in the load).
  Seconds tpot;
  // Output tokens per second over all replicas at most this (infinite where the arrivals depend on
  // the run: a closed loop, or a queue filled at once).
  double output_tokens_per_s = 0;
  // The capacity (InferenceResult::saturation_requests_per_s, any run) at most this.
  double capacity_requests_per_s = 0;
};

class Evaluator {
 public:
  Evaluator(hardware::System system, workload::Job job, workload::Runtime runtime);
  // One that reads the caller's inputs instead of a copy of them: they must outlive it (an
  // evaluation within one call, where copying a GPU spec's names and sources costs more than
  // the estimate).
  struct Borrow {};
  Evaluator(const hardware::System& system, const workload::Job& job, const workload::Runtime& runtime, Borrow);
  ~Evaluator();
  // Not copied: it points into its own memo.
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;
  Evaluator(Evaluator&&) noexcept;
  Evaluator& operator=(Evaluator&&) noexcept;

  // One step of the job on `layout` over `gpus` GPUs (the system's count when 0).
  Evaluation evaluate(const workload::Layout& layout, int gpus = 0, const Options& options = {});
  // Memory per GPU only (a search sizes layouts before it times the ones that fit).
  physics::MemoryBreakdown memory(const workload::Layout& layout) const;
  // evaluate(layout, gpus).job_time, to the bit, without the figures derived from the step (a
  // search ranks layouts by it and evaluates in full only those it keeps).
  Seconds job_time(const workload::Layout& layout, int gpus = 0);
  // Bounds on the serving simulation of `layout` over `gpus` GPUs that need no simulation (a search
  // rules out by them deployments it need not simulate); its tables are options.tables'.
  ServingBounds serving_bounds(const workload::Layout& layout, int gpus = 0, const Options& options = {});
  // The bounds of a deployment that cannot meet the TPOT limit `tpot` at any load: serving_bounds
  // where their tpot is above it, else none (found without tabulating the whole grid where one decode
  // iteration at a one-token context is within it).
  std::optional<ServingBounds> serving_bounds_past(const workload::Layout& layout, Seconds tpot, int gpus = 0,
                                                   const Options& options = {});

  [[nodiscard]] const hardware::System& system() const { return *system_; }
  [[nodiscard]] const workload::Job& job() const { return *job_; }

  // Kernel sums of one micro-batch, per scope (private to the evaluator's files).
  struct Kernels;

 private:
  friend class TableCache;  // its TrainingKernels hold an evaluator's kernel sums

 private:
  // The kernel sums of one lowering (what of a layout the lowering reads) at each clock they were
  // timed at, by clock.
  using KernelKey = std::tuple<int, bool, std::int64_t, int, bool, int, double, int>;
  struct KernelsAtClocks {
    std::vector<std::pair<double, std::shared_ptr<const Kernels>>> by_clock;
  };
  KernelsAtClocks& kernels_of(const workload::Layout& layout);
  const Kernels& kernels(KernelsAtClocks& lowered, const workload::Layout& layout, double clock);
  // The system at `gpus` GPUs (0: its own count) and its fabric; the evaluator's own system where
  // the count changes nothing of it.
  std::pair<const hardware::System&, const physics::Fabric&> system_for(int gpus);
  // parallel_comm of a layout on `sys` (one of system_for's), from the terms the last layouts
  // share with it.
  physics::ParallelComm communication(const workload::Layout& layout, const hardware::System& sys,
                                      const physics::Fabric& fabric);
  Evaluation evaluate_training(const workload::Layout& layout, const hardware::System& sys,
                               const physics::Fabric& fabric, const Options& options);
  // The step of a training layout, settled clock and power included, into `out` (evaluator.cpp).
  struct TrainingStep;
  void training_step(const workload::Layout& layout, const hardware::System& sys, const physics::Fabric& fabric,
                     TrainingStep& out);
  Evaluation evaluate_inference(const workload::Layout& layout, const hardware::System& sys,
                                const physics::Fabric& fabric, const Options& options) const;
  // What evaluate_inference simulates, up to the simulation (inference.cpp).
  void serving_run(const workload::Layout& layout, const hardware::System& sys, const physics::Fabric& fabric,
                   const Options& options, ServingRun& out, const workload::Inference* inference = nullptr) const;
  physics::MemoryBreakdown inference_memory(const workload::Layout& layout) const;  // inference.cpp
  // A disaggregated deployment (disaggregated.cpp): its pools simulated in turn, and one pool's
  // memory per GPU.
  Evaluation evaluate_disaggregated(const hardware::System& sys, const physics::Fabric& fabric,
                                    const Options& options) const;
  physics::MemoryBreakdown pool_memory(bool prefill) const;
  // A training layout's memory per GPU, without the host's share (which depends on the GPU count).
  physics::MemoryBreakdown training_memory(const workload::Layout& layout) const;
  Evaluation evaluate_image_inference(const workload::Layout& layout, const hardware::System& sys,
                                      const Options& options) const;  // inference.cpp: a ResNet's batches

  void start();   // what both constructors do once the inputs are in place
  struct Inputs;  // the inputs an evaluator owns (evaluator.cpp); where it borrows them, none
  std::shared_ptr<const Inputs> owned_;
  const hardware::System* system_ = nullptr;  // into owned_ or the lender's
  const workload::Job* job_ = nullptr;
  const workload::Runtime* runtime_ = nullptr;
  workload::ModelCounts counts_;        // of a training job
  std::unique_ptr<TrainingStep> step_;  // the last training step (kept, not rebuilt per layout)
  // The kernel sums by lowering: the evaluator's own, or those of a TableCache entry for the same
  // GPU, model, training and runtime but its remainder (evaluate with Options::tables), which no
  // kernel sum reads.
  std::shared_ptr<std::map<KernelKey, KernelsAtClocks>> kernels_;
  const TableCache* kernels_from_ = nullptr;  // the cache kernels_ was taken from
  void share_kernels(TableCache& cache);      // kernels_ from `cache` (evaluator.cpp)
  KernelsAtClocks* last_lowered_ = nullptr;   // of last_key_: consecutive layouts of a search share it
  KernelKey last_key_;
  std::map<int, std::pair<hardware::System, physics::Fabric>> systems_;  // other GPU counts
  std::optional<physics::Fabric> own_fabric_;                            // of system_
  // A search's layouts in its order share communication terms: the per-micro-batch terms of the
  // last layout but its ZeRO stage, and the data-parallel terms per (ZeRO, expert) of the last
  // (GPUs, tensor, pipeline, data, context, micro-batch).
  struct MicroComm {
    int gpus = 0;
    workload::Layout layout;  // with zero = 0
    physics::ParallelComm comm;
  };
  std::optional<MicroComm> micro_comm_;
  using DataKey = std::tuple<int, int, int, int, int, std::int64_t>;
  std::optional<DataKey> data_key_;
  std::vector<std::tuple<int, int, physics::ParallelComm>> data_comm_;  // (zero, expert, terms)
  // The last layout's training memory: a search sizes a layout (memory) before it times it.
  mutable std::optional<std::pair<workload::Layout, physics::MemoryBreakdown>> last_memory_;
};

// The pure function: one step of the tuple.
Evaluation evaluate(const hardware::System& system, const workload::Job& job, const workload::Layout& layout,
                    const workload::Runtime& runtime, const Options& options = {});

}  // namespace gpusim::step
