// The whole answer for one scenario: the evaluator's step, with energy, carbon, cloud and owned
// cost, break-even, and the diagnosis with its advice — and the report's fields, the one list of
// keys (docs/report.md) that the JSON and CSV writers print and `validate` reads measured rows
// against.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gpusim/cost.hpp"
#include "gpusim/explain.hpp"
#include "gpusim/scenario.hpp"
#include "gpusim/step.hpp"

namespace gpusim::answer {

// Whether a serving deployment meets its scenario's [slo]: each limit against the chosen
// percentile of the simulated latencies. A saturated deployment never does: its queue, and so its
// latencies, grow without bound however long the run.
struct SloCheck {
  scenario::Slo slo;
  std::optional<Seconds> ttft;  // the achieved percentile, for each limit set
  std::optional<Seconds> tpot;
  std::optional<Seconds> e2e;
  bool saturated = false;
  bool incomplete = false;  // the run stopped before serving its load: its latencies are of those it served
  double worst = 0;         // the largest achieved / limit ratio: the SLO is met when it is at most 1
  [[nodiscard]] bool met() const { return worst <= 1.0 && !saturated && !incomplete; }
};
SloCheck check_slo(const scenario::Slo& slo, const step::InferenceResult& r);
// The percentile `p` of a latency distribution.
Seconds percentile_of(const step::Percentiles& d, scenario::Percentile p);

// --- The uncertainty band (uncertainty.cpp) ---
// The inputs the band varies: efficiency values and runtime values over the range their spec
// files give ([uncertainty], specs/README.md), and scenario keys left to their defaults over what
// a real job could set. Each name is the key of its range in the spec file.
enum class Unknown {
  kMicroBatch,      // [training] micro_batch not set: 1, up to the largest that fits
  kRuntime,         // [runtime] name not set: the default runtime's remainder ± its `unnamed` range
  kGemm,            // efficiency.gemm (gemm_fp8 for an fp8 job, gemm_fp4 for an fp4 one)
  kAttention,       // efficiency.attention and attention_flash3
  kDram,            // efficiency.dram
  kGemvInflight,    // efficiency.gemv_inflight_per_sm (and a runtime's gemv_inflight)
  kPeerLink,        // efficiency.peer_link and nvls
  kKernelOverhead,  // efficiency.kernel_overhead
  kLaunch,          // efficiency.launch_eager and launch_graph
  kBetweenGpus,     // a GPU without measurements of its own: gemm, attention and dram together
  kRemainder,       // the runtime's efficiency.remainder
  kOverlap,         // the runtime's [overlap] shares
  kDispatch,        // the runtime's dispatch time per kernel
  kStepOverhead,    // the serving engine's exposed host time per iteration
  kModelError,      // the model's own error on publications it was not fitted to (model-error.toml)
};
inline constexpr base::Named<Unknown> kUnknownNames[] = {
    {Unknown::kMicroBatch, "micro_batch"},
    {Unknown::kRuntime, "unnamed"},
    {Unknown::kGemm, "gemm"},
    {Unknown::kAttention, "attention"},
    {Unknown::kDram, "dram"},
    {Unknown::kGemvInflight, "gemv_inflight"},
    {Unknown::kPeerLink, "peer_link"},
    {Unknown::kKernelOverhead, "kernel_overhead"},
    {Unknown::kLaunch, "launch"},
    {Unknown::kBetweenGpus, "between_gpus"},
    {Unknown::kRemainder, "remainder"},
    {Unknown::kOverlap, "overlap"},
    {Unknown::kDispatch, "dispatch"},
    {Unknown::kStepOverhead, "step_overhead"},
    {Unknown::kModelError, "model_error"},
};
constexpr const char* to_string(Unknown u) { return base::name_in(kUnknownNames, u); }

// One input the band varied, and its part in the band.
struct Contribution {
  Unknown unknown = Unknown::kGemm;
  std::string spec;      // whose range: the GPU id (its architecture's range, or its own), or the runtime id
  std::string arch;      // the GPU's architecture (efficiency ranges)
  double range = 0;      // the input's range: a fraction of the value (efficiencies, dispatch), ± in its unit
                         // (remainder, overlap, unnamed), seconds (step_overhead), the largest micro-batch
  bool assumed = false;  // the range is an assumption, not a measured spread
  double share = 0;      // of the band's variance in the headline figure (step time, or serving throughput)
  std::optional<workload::ModelErrorGroup> error;  // kModelError: the group of held-out errors taken
};

struct Band {
  double low = 0;
  double high = 0;
};
// The report keys that carry a band (docs/report.md, uncertainty.<key>.low and .high), in report
// order; `section` is the report section of the band's two keys; `time` whether the figure is a
// time (else a rate: throughput, utilization), which decides the family of model error it takes.
struct BandKey {
  const char* key;
  const char* section;
  bool time;
};
inline constexpr BandKey kBandKeys[] = {
    {"step.time_s", "uncertainty.step.time_s", true},
    {"throughput.tokens_per_s", "uncertainty.throughput.tokens_per_s", false},
    {"throughput.tokens_per_s_per_gpu", "uncertainty.throughput.tokens_per_s_per_gpu", false},
    {"throughput.samples_per_s", "uncertainty.throughput.samples_per_s", false},
    {"utilization.mfu", "uncertainty.utilization.mfu", false},
    {"utilization.model_tflops_per_gpu", "uncertainty.utilization.model_tflops_per_gpu", false},
    {"utilization.hardware_tflops_per_gpu", "uncertainty.utilization.hardware_tflops_per_gpu", false},
    {"training.time_s", "uncertainty.training.time_s", true},
    {"training.gpu_hours", "uncertainty.training.gpu_hours", true},
    {"inference.time_to_first_token_s", "uncertainty.inference.time_to_first_token_s", true},
    {"inference.time_per_output_token_s", "uncertainty.inference.time_per_output_token_s", true},
    {"inference.request_latency_s", "uncertainty.inference.request_latency_s", true},
    {"inference.output_tokens_per_s", "uncertainty.inference.output_tokens_per_s", false},
    {"inference.decode_tokens_per_s", "uncertainty.inference.decode_tokens_per_s", false},
    {"inference.prefill_tokens_per_s", "uncertainty.inference.prefill_tokens_per_s", false},
    {"inference.requests_per_s", "uncertainty.inference.requests_per_s", false},
    {"inference.ttft_s.mean", "uncertainty.inference.ttft_s.mean", true},
    {"inference.tpot_s.mean", "uncertainty.inference.tpot_s.mean", true},
    {"inference.e2e_s.mean", "uncertainty.inference.e2e_s.mean", true},
};
inline constexpr std::size_t kBandCount = std::size(kBandKeys);
// The index in kBandKeys of a report key's band (the p50 latency keys share the headline
// latencies'); nullopt for a key without one.
std::optional<std::size_t> band_index(std::string_view key);

// The model-error family of a figure: a serving job's latencies apart from its rates; a training
// job's times take its throughput family with the sign flipped (a time is the work over a rate, so
// ln(predicted / measured) of the one is minus that of the other).
struct ErrorFamily {
  workload::MetricFamily metric = workload::MetricFamily::kThroughput;
  bool flip = false;
};
ErrorFamily error_family(workload::JobKind job, bool time);
// The deviations up and down of a figure y that the model-error group `g` allows, in y's unit:
// the measured figure lies within y × [e^−high, e^−low] (with `flip`, e^low and e^high), so
// up = y·max(0, e^−low − 1) and down = y·max(0, 1 − e^−high). Either is 0 where the group's
// quantiles do not straddle 0 on that side (a model that errs one way only).
struct Deviation {
  double up = 0;
  double down = 0;
};
Deviation model_error_deviation(double y, const workload::ModelErrorGroup& g, bool flip);
// A band widened by independent deviations, in quadrature per side (the band's own rule):
// low = max(0, y − √((y − low)² + down²)), high = y + √((high − y)² + up²).
Band widen(const Band& b, double y, const Deviation& d);

struct Uncertainty {
  std::array<std::optional<Band>, kBandCount> bands;  // by kBandKeys; none where the key is null
  std::vector<Contribution> unknowns;                 // every input varied, largest share first
};

struct Estimate {
  std::string scenario;
  // The job apart from its hardware, for a title when the scenario's hardware was replaced
  // (scenario::Scenario::hardware_replaced): report::job_words words it.
  bool hardware_replaced = false;
  std::string model_name;
  std::optional<workload::Training> training;
  std::string gpu_id;
  std::string gpu_name;
  int gpus = 1;
  int nodes = 1;
  physics::IntraPath fabric;  // the intra-node path (report::intra_path_text words it)
  // Between nodes (when nodes > 1): the inter-node link's name and its bandwidth per direction.
  std::string inter_link;
  double inter_link_gb_per_s = 0;
  std::string runtime_id;
  std::string runtime_name;
  workload::Layout layout;  // the layout that ran (charts name it in their titles)
  // What the report says of the stack: its launch path, attention kernel (convolutions for a
  // ResNet) and, training, its optimizer implementation.
  struct Stack {
    bool cuda_graphs = false;
    bool convolutions = false;
    workload::AttentionKernel attention = workload::AttentionKernel::kFlash2;
    std::optional<workload::OptimizerImpl> optimizer;
  } stack;
  // Inference: the engine, its load and the layout (report/ words them).
  struct Serving {
    workload::ServingEngine engine;
    workload::Inference inference;
    workload::Layout layout;
  };
  std::optional<Serving> serving;
  double sm_clock_mhz = 0;  // the SM clock the step sustains
  double params = 0;
  bool images = false;  // an image model (ResNet, ViT): its samples are images

  step::Evaluation eval;  // with op shares

  cost::Energy energy;
  cost::CostResult cost;
  cost::CostInputs cost_inputs;  // what the cost was computed from (for the break-even curve)
  std::string cloud_gpu;         // the GPU the cloud price is for
  UsdPerSecond cloud_rate;       // per GPU
  double utilization = 0;        // of the owned machine, for break-even

  explain::Diagnosis diagnosis;
  std::vector<explain::Advice> advice;
  std::optional<SloCheck> slo;             // serving scenarios with an [slo]
  std::optional<Uncertainty> uncertainty;  // with Options::uncertainty
};

struct Options {
  bool advice = true;        // `sweep` rows skip it
  bool uncertainty = false;  // the band: two more evaluations per uncertain input (`estimate`, `validate`)
  // Serving iteration tables and training kernel sums shared with other estimates on this thread
  // (step::TableCache); none: the estimate's evaluations share their own.
  step::TableCache* tables = nullptr;
  // Per-op time shares (the report's kernel list, the roofline, the HTML report): `sweep` rows,
  // which print none of them, skip them.
  bool op_shares = true;
};

// The band of an estimate of `sc` around its point values `point` (uncertainty.cpp).
// Its runs take serving iteration tables from `tables` and keep them there (step::TableCache).
Uncertainty uncertainty_of(const scenario::Scenario& sc, const Estimate& point, step::TableCache* tables = nullptr);
// The band of a report key: nullopt when the estimate has none, or the key carries none. The p50
// latency keys (inference.ttft_s.p50, tpot_s.p50, e2e_s.p50) are the same figures as
// time_to_first_token_s, time_per_output_token_s and request_latency_s, and share their bands.
std::optional<Band> band_of(const Estimate& e, std::string_view key);

// Cloud USD per million tokens of the job: trained, or generated (output tokens) for serving; 0
// when it has none.
double usd_per_million_tokens(const Estimate& e);

// Throws InputError only for what the scenario loader cannot see (a node without a usable link);
// a job that does not fit is reported, not thrown.
Estimate estimate(const scenario::Scenario& sc, const Options& options = {});

// --- Report fields (keys and units in docs/report.md) ---
struct Null {};
// A value is a number, a flag, a name, null, or the intra-node path (words only the report stage
// writes).
using FieldValue = std::variant<double, bool, std::string, Null, physics::IntraPath>;
struct Field {
  const char* section;  // "" for top-level keys
  const char* key;
  FieldValue value;
};
// Every data field of the report, in report order (the text fields bottleneck_reason and advice
// are words: the report stage adds them). For a job that cannot run (step::runs), every figure it
// would have only if it ran (time, rates, use, power, cost, SLO, bands) is null; memory.fits is
// false and the shortfall keys say by how much.
std::vector<Field> report_fields(const Estimate& e);
// The same fields with every figure as the evaluation gives it, whether the job runs or not (what
// bands and validation read).
std::vector<Field> all_fields(const Estimate& e);
// The numeric value of a report key ("throughput.tokens_per_s_per_gpu"); nullopt when the key is
// absent, not numeric, or null for this estimate (inference keys of a training run). A job that
// cannot run as modelled still gives its figures here: a measured job ran, and its prediction is
// scored (validation).
std::optional<double> report_metric(const Estimate& e, std::string_view key);
// Whether `key` names a numeric key of the report (for validating measurement files).
bool is_report_metric(std::string_view key);
// Every such key, in report order (for suggestions).
std::vector<std::string> report_metric_keys();

}  // namespace gpusim::answer
