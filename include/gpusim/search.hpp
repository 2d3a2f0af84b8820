// Search: many evaluations of one question.
//   plan     every valid parallel layout of a training job (tensor t: powers of two dividing heads
//            and FFN; pipeline p dividing the layers and the GPUs; data d = G/(t·p); ZeRO 0..3;
//            micro-batch: powers of two dividing the per-rank batch; recompute none/selective/
//            full; sequence parallelism when t > 1; virtual stages v when p > 1, p·v dividing the
//            layers; and, optionally, the GPU count), each sized by the memory model and, when it
//            fits, timed by the evaluator; the best by time to train or cloud cost are kept.
//   sweep    a grid of scenario variants (--vary KEY=V1,V2,...), the file parsed once.
//   compare  one job on several GPUs, ranked: jobs that fit first, then by time to finish (training)
//            or, for serving, those meeting the [slo] first, then by cloud USD per million output tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusim/answer.hpp"
#include "gpusim/catalog.hpp"
#include "gpusim/scenario.hpp"
#include "gpusim/step.hpp"

namespace gpusim::search {

// ---------------------------------------------------------------- plan

enum class Objective { kTime, kCost };
inline constexpr base::Named<Objective> kObjectiveNames[] = {{Objective::kTime, "time"}, {Objective::kCost, "cost"}};

// Bounds on a plan's options: the ranked table is kept sorted by insertion (cost ∝ top per layout),
// and the largest GPU clusters built hold about 10^5 GPUs.
inline constexpr int kMaxPlanTop = 1000;
inline constexpr int kMaxPlanGpus = 100000;

struct PlanOptions {
  Objective objective = Objective::kTime;
  int top = 10;
  int max_gpus = 0;  // > scenario GPUs: also search GPU counts up to this (node multiples of 2^k and 3·2^k)
  // Serving: the weight formats to try (scenario::weight_formats names); empty: the scenario's own,
  // bf16 (fp16 where the GPU has no bf16), fp8 where the GPU computes it, and AWQ int4.
  std::vector<std::string> formats;
  // Called as candidates finish, one call at a time, from whichever thread finished one.
  std::function<void(std::size_t done, std::size_t total)> progress;
  // Threads that estimate serving candidates (0: one per core). The result is the same for any count.
  unsigned threads = 0;
  // Serving: leave out deployments whose bounds show they cannot meet the SLO's TPOT and would not be
  // shown (ServingPlanResult::ruled_out). The result is the same either way but for the counts.
  bool rule_out = true;
};

struct PlanRow {
  int gpus = 1;
  workload::Layout layout;
  step::Evaluation eval;
  Usd cloud;  // renting the job on the cloud GPU (equal work when it is another GPU)
  [[nodiscard]] double objective(Objective o) const {
    return o == Objective::kTime ? eval.job_time.value() : cloud.value();
  }
};

// Why a region of the space was left out.
enum class Infeasible { kNoFit, kTensorDivides, kPipelineDivides, kDataDivides };
struct Region {
  Infeasible why = Infeasible::kNoFit;
  std::uint64_t count = 0;
};

// Every layout that fits, by what `plan --svg` draws: time to train against cloud cost.
struct PlanPoint {
  int gpus = 1;
  workload::Layout layout;
  Seconds job_time;
  Usd cloud;
};

struct PlanResult {
  std::vector<PlanRow> best;  // feasible, best first
  std::vector<PlanPoint> feasible;
  // When nothing fits: the layout needing the least memory, and that memory.
  std::optional<std::pair<int, workload::Layout>> closest;
  Bytes closest_memory;
  std::vector<Region> infeasible;  // in the order of Infeasible, those that occurred
  std::uint64_t sized = 0;         // layouts whose memory was computed
  std::uint64_t timed = 0;         // layouts that fit and were timed by the evaluator
  double seconds = 0;              // search wall time
};

PlanResult plan(const scenario::Scenario& sc, const PlanOptions& options);

// ---------------------------------------------------------------- plan (serving)
//   Every deployment of a serving scenario's model on its GPU (plan_serving.cpp): GPU counts
//   (powers of two up to the larger of the scenario's count and max_gpus, and the scenario's
//   count); tensor t, a power of two within a node that the heads, KV heads and FFN allow;
//   pipeline p, a power of two with t·p dividing the GPUs and p dividing the layers; data
//   d = G/(t·p) replicas; each weight format; and a batch limit b (powers of two up to the
//   runtime's max_seqs): at most b sequences in flight per replica. Under a Poisson load the
//   scenario's rate is offered to every candidate; under any other load a closed loop keeps b
//   requests in flight per replica (the concurrency sweep serving benchmarks run). Candidates that
//   fit are simulated by the evaluator; those that meet the [slo] are ranked by output tokens/s
//   per GPU (Objective::kTime: GPU-time per token) or by cloud USD per million output tokens. A
//   candidate whose step::ServingBounds show it misses the SLO's TPOT limit is simulated last, and
//   not at all when its bounds also show it neither on the frontier (it saturates, or a simulated
//   row has more tokens/s per user and per GPU than it can) nor the closest: nothing shown changes.
struct ServingPlanRow {
  int gpus = 1;
  workload::Layout layout;
  std::string format;
  std::int64_t batch_limit = 1;
  // Speculative decoding: tokens proposed per step (0: off; the scenario's method otherwise).
  std::int64_t speculative_tokens = 0;
  workload::Disaggregation pools;  // prefill and decode pools (off: aggregated)
  answer::Estimate estimate;
  double per_gpu = 0;       // output tokens/s per GPU
  double per_user = 0;      // output tokens/s per user (1 / TPOT p50)
  double usd_per_mtok = 0;  // cloud USD per million output tokens
  [[nodiscard]] bool meets() const { return !estimate.slo || estimate.slo->met(); }
  [[nodiscard]] double objective(Objective o) const { return o == Objective::kTime ? -per_gpu : usd_per_mtok; }
};

struct ServingPlanResult {
  std::vector<ServingPlanRow> best;       // meeting the SLO (every candidate without one), best first
  std::vector<ServingPlanRow> frontier;   // no candidate has both more tokens/s per user and per GPU
  std::optional<ServingPlanRow> closest;  // nothing meets the SLO: the smallest worst latency / limit
  std::vector<std::string> formats;       // the formats searched
  // Speculative tokens per step searched (0: off); {0} when the scenario names no method.
  std::vector<std::int64_t> speculative_tokens{0};
  bool disaggregated = false;    // prefill:decode splits were searched beside the aggregated deployments
  std::uint64_t candidates = 0;  // (GPU count, layout, format, batch limit) tuples considered
  std::uint64_t no_fit = 0;      // of them, those whose weights and KV pool do not fit
  std::uint64_t timed = 0;       // simulated
  // Not simulated: their TPOT bound (step::ServingBounds) misses the SLO, and their bounds show them
  // neither on the frontier nor the closest.
  std::uint64_t ruled_out = 0;
  std::uint64_t meeting = 0;  // meeting the SLO
  Bytes smallest_no_fit;      // the least memory a candidate that does not fit needs
  double seconds = 0;
  // When nothing meets the SLO (app::plan searches on): the smallest --max-gpus, doubling up to
  // kMaxSuggestedServingGpus, with which a deployment would; 0 when none does or none was tried.
  int meets_with_max_gpus = 0;
  bool more_gpus_tried = false;
  // When nothing meets the SLO: the first weight format not searched (the GPU computes it; a ggml
  // block format only when the scenario's own is one), fewest bits lost first, with which a
  // deployment on the same GPU budget would; empty when none does or none was tried.
  std::string meets_with_format;
  bool more_formats_tried = false;
};
// The most GPUs a serving plan that meets nothing searches on to for its suggestion (one NVL72 rack
// holds 72).
inline constexpr int kMaxSuggestedServingGpus = 64;

// Throws InputError for a format the GPU cannot compute in or that does not exist.
ServingPlanResult plan_serving(const scenario::Scenario& sc, const PlanOptions& options);

// ---------------------------------------------------------------- sweep

struct Axis {
  std::string key;
  std::vector<std::string> values;
};
// "KEY=V1,V2,..."; throws InputError naming the bad axis.
Axis parse_axis(const std::string& text);

struct SweepPoint {
  std::vector<std::string> values;  // one per axis
  std::optional<answer::Estimate> estimate;
  std::string problem;  // why the point cannot run, when it cannot
};

// A sweep estimates at most kMaxSweepPoints points in one run (about two minutes at the ~10 us a
// point takes with its CSV row written) unless SweepOptions::max_points (sweep --max-points) says
// otherwise, up to kMaxSweepPointsLimit; a larger grid is split with shards.
inline constexpr std::uint64_t kMaxSweepPoints = 10'000'000;
inline constexpr std::uint64_t kMaxSweepPointsLimit = 1'000'000'000'000;

struct SweepOptions {
  int shard = 0;  // run points shard, shard + shards, ...
  int shards = 1;
  std::uint64_t max_points = kMaxSweepPoints;  // the most points this shard may have
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// The points of the grid: the product of the axes' value counts; nullopt when it is beyond what
// 64 bits hold.
std::optional<std::uint64_t> grid_points(const std::vector<Axis>& axes);
// Of `points`, those shard `shard` of `shards` runs (shard, shard + shards, ...).
std::uint64_t shard_points(std::uint64_t points, int shard, int shards);
// Throws InputError (naming the point count, each axis's size and the limit) when this shard of
// the grid has more than options.max_points points; sweep calls it before any work.
void check_grid(const std::vector<Axis>& axes, const SweepOptions& options);

// Every point of the grid (the product of the axes, first axis fastest) of this shard, handed to
// `visit` in that order as soon as it is estimated: memory stays the same however many points
// there are.
void sweep(const catalog::Catalog& catalog, const scenario::ParsedScenario& parsed,
           const std::vector<scenario::Override>& fixed, const std::vector<Axis>& axes, const SweepOptions& options,
           const std::function<void(const SweepPoint&)>& visit);
// The same points, kept.
std::vector<SweepPoint> sweep(const catalog::Catalog& catalog, const scenario::ParsedScenario& parsed,
                              const std::vector<scenario::Override>& fixed, const std::vector<Axis>& axes,
                              const SweepOptions& options = {});

// ---------------------------------------------------------------- compare

struct CompareRow {
  std::string gpu;
  std::optional<answer::Estimate> estimate;
  std::string problem;  // why the scenario cannot run on this GPU
};
// The scenario on each GPU (its GPU count and layout kept), in the order above. Throws InputError for an unknown GPU
// id.
std::vector<CompareRow> compare(const catalog::Catalog& catalog, const scenario::ParsedScenario& parsed,
                                const std::vector<scenario::Override>& overrides, const std::vector<std::string>& gpus);

// ---------------------------------------------------------------- compare systems (systems.cpp)
//   One job on whole systems to buy or rent, each at its own best layout: a training job's best
//   layout on all of the system's GPUs (plan), a serving job's best deployment on all of them
//   (plan_serving; a box with GPUs left idle is no box anyone buys for it), then estimated as
//   `gpusim estimate` would with that layout. Ranked: systems that run first; serving, those
//   meeting the [slo] next; then by the objective (time: time to train, or output tokens/s per
//   user; cost: cloud USD for the job, or per million output tokens).

// A system: `nodes` machines of `gpus_per_node` GPUs of one kind ("2xrtx3090": one machine of
// two RTX 3090s; "2x8xh100-sxm5-80gb": two machines of eight).
struct SystemChoice {
  int nodes = 1;
  int gpus_per_node = 1;
  std::string gpu;
  [[nodiscard]] int gpus() const { return nodes * gpus_per_node; }
};
// "[NODES x] GPUS x ID"; nullopt when the text is not of that form or the system's GPUs are not
// 1 to kMaxPlanGpus.
std::optional<SystemChoice> parse_system(std::string_view text);

struct SystemRow {
  SystemChoice system;
  std::string text;                          // as the user wrote it
  std::optional<answer::Estimate> estimate;  // at the best layout; nullopt when none runs
  workload::Layout layout;                   // the best layout (deployment)
  std::string format;                        // serving: the weight format of the deployment
  std::int64_t batch_limit = 0;              // serving: sequences in flight per replica
  std::uint64_t layouts = 0;                 // layouts (deployments) sized for this system
  std::string problem;                       // why nothing runs on it, when nothing does
  Bytes needs;                               // nothing fits: the least memory per GPU a layout needs
  [[nodiscard]] bool runs() const { return estimate.has_value() && step::runs(estimate->eval); }
  [[nodiscard]] bool meets() const { return runs() && (!estimate->slo || estimate->slo->met()); }
};
// Throws InputError for an unknown GPU id (before any search).
std::vector<SystemRow> compare_systems(const catalog::Catalog& catalog, const scenario::ParsedScenario& parsed,
                                       const std::vector<scenario::Override>& overrides,
                                       const std::vector<std::pair<std::string, SystemChoice>>& systems,
                                       Objective objective);

}  // namespace gpusim::search
