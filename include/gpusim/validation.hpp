// Validation: measured results (format in docs/measurements.md) predicted by the very functions
// the step model uses, the error summarized per role, category and GPU, and the least-squares
// calibration of efficiency parameters from the rows marked `fit`.
//
// Each row is either `fit` (calibration may use it) or `check` (held out: the evidence). A
// parameter tuned on a row no longer proves itself on that row, so accuracy is reported on check
// rows and fit rows separately.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpusim/answer.hpp"
#include "gpusim/catalog.hpp"
#include "gpusim/hardware.hpp"
#include "gpusim/scenario.hpp"

namespace gpusim::validation {

enum class Benchmark {
  kStreamCopy,
  kStreamTriad,
  kStreamRead,
  kL2Bandwidth,
  kLatencyL1,
  kLatencyL2,
  kLatencyDram,
  kGemm,
  kAttention,
  kLaunchOverhead,
  kH2d,
  kD2h,
  kP2p,
  kAllreduce,
  kReduceScatter,
  kAllGather,
  kAllToAll,
  kPower,
  kPowerLimit,
  kScenario,
};
// The algorithm a collective row forced (nccl-tests under NCCL_ALGO), or auto: the library's choice.
enum class ForcedAlgorithm { kAuto, kRing, kTree, kNvls };
inline constexpr base::Named<ForcedAlgorithm> kForcedAlgorithmNames[] = {{ForcedAlgorithm::kAuto, "auto"},
                                                                         {ForcedAlgorithm::kRing, "ring"},
                                                                         {ForcedAlgorithm::kTree, "tree"},
                                                                         {ForcedAlgorithm::kNvls, "nvls"}};
inline constexpr base::Named<Benchmark> kBenchmarkNames[] = {
    {Benchmark::kStreamCopy, "stream_copy"},
    {Benchmark::kStreamTriad, "stream_triad"},
    {Benchmark::kStreamRead, "stream_read"},
    {Benchmark::kL2Bandwidth, "l2_bandwidth"},
    {Benchmark::kLatencyL1, "latency_l1"},
    {Benchmark::kLatencyL2, "latency_l2"},
    {Benchmark::kLatencyDram, "latency_dram"},
    {Benchmark::kGemm, "gemm"},
    {Benchmark::kAttention, "attention"},
    {Benchmark::kLaunchOverhead, "launch_overhead"},
    {Benchmark::kH2d, "h2d"},
    {Benchmark::kD2h, "d2h"},
    {Benchmark::kP2p, "p2p"},
    {Benchmark::kAllreduce, "allreduce"},
    {Benchmark::kReduceScatter, "reduce_scatter"},
    {Benchmark::kAllGather, "all_gather"},
    {Benchmark::kAllToAll, "all_to_all"},
    {Benchmark::kPower, "power"},
    {Benchmark::kPowerLimit, "power_limit"},
    {Benchmark::kScenario, "scenario"},
};
constexpr const char* to_string(Benchmark b) { return base::name_in(kBenchmarkNames, b); }
// The summary category of a benchmark: "bandwidth", "latency", "gemm", "attention", "launch",
// "host link", "communication", "power", "end-to-end".
const char* category_of(Benchmark b);

enum class Role { kFit, kCheck };
inline constexpr base::Named<Role> kRoleNames[] = {{Role::kFit, "fit"}, {Role::kCheck, "check"}};
constexpr const char* to_string(Role r) { return base::name_in(kRoleNames, r); }

struct Measurement {
  std::string id;
  std::string file;  // the measurement file
  SourcePos pos;     // of the [[measurement]] entry
  Role role = Role::kCheck;
  std::string gpu;  // catalog id
  int gpus = 1;
  Benchmark benchmark = Benchmark::kStreamCopy;
  // The measured figure in SI units (B/s, FLOP/s, s, W, or the report key's unit for scenarios)
  // or, for latencies given in cycles, in cycles (value_in_cycles).
  double value = 0;
  bool value_in_cycles = false;
  std::optional<Bytes> bytes;
  std::optional<DType> dtype;
  double m = 0, n = 0, k = 0;
  double batch = 0, seq_len = 0, heads = 0, head_dim = 0;
  bool causal = false;
  bool graph = false;
  bool pinned = true;
  bool bidirectional = false;
  ForcedAlgorithm algorithm = ForcedAlgorithm::kAuto;
  std::optional<double> intensity;  // FLOP per byte (power rows)
  std::string kernel;
  std::string scenario;  // resolved path of the scenario file (scenario and power_limit rows)
  // That file as parsed when the rows were loaded, shared by the rows and copies that name it: rows
  // resolved again and again (calibration's judging, cross-validation's folds) read and parse it
  // once. Null where it could not be parsed then (resolving the row reports why).
  std::shared_ptr<const scenario::ParsedScenario> parsed;
  std::string metric;  // report key for scenario rows; "speed" or "energy" for power_limit rows
  // The release of the runtime the figure was measured on, as the publication states it
  // ("0.6.0"; empty when it states none), and where the row gives it: the scenario's runtime file
  // must cover it (its `versions`), else the row is refused.
  std::string runtime_version;
  SourcePos runtime_version_pos;
  std::string runtime_version_key;   // "measurement[3].runtime_version"
  std::optional<Watts> power_limit;  // power_limit rows: the cap of the point
  std::string conditions;
  std::string source;
  // The publication the row belongs to (a docs/sources.md key in the shipped files): the unit that
  // cross-validation leaves out. Its file's [meta] publication unless the row names its own; a
  // file without one makes each row's source its publication.
  std::string publication;
  std::string note;
  bool scored = true;
};
// The summary category of a row: its benchmark's, except that scenario rows of the inference
// report are "serving throughput" (rates) or "serving latency" (times), the two the serving
// accuracy targets are stated for.
const char* category_of(const Measurement& m);

// GPUs of a measured multi-GPU row share one box up to 8 of them (PCIe workstations and bridged
// pairs included), whatever a scenario's default node size would be.
inline int box_size(int gpus) { return gpus <= 8 ? std::max(1, gpus) : 8; }

// Loads files and directories (every *.toml directly inside a directory). Throws InputError with
// all problems of all files, and when no row was found.
std::vector<Measurement> load_measurements(const catalog::Catalog& catalog, const std::vector<std::string>& paths);

// Whether a row is predicted on a whole scenario (end-to-end and power-limit rows) rather than on
// a system.
constexpr bool uses_scenario(Benchmark b) { return b == Benchmark::kScenario || b == Benchmark::kPowerLimit; }

// What a row is predicted on, resolved once: the system of a microbenchmark row, the scenario of
// an end-to-end row, or why there is none.
struct Subject {
  const Measurement* row = nullptr;
  std::optional<hardware::System> system;
  std::optional<scenario::Scenario> scenario;
  std::string problem;
};
std::vector<Subject> resolve(const std::vector<Measurement>& rows, const catalog::Catalog& catalog);

struct Prediction {
  std::optional<double> value;       // in the measurement's units (SI, or cycles)
  std::string reason;                // why there is no prediction
  std::optional<answer::Band> band;  // scenario rows whose report key has a band (answer::band_of)
};
// Predicts one row under its conditions. Never throws for a row the model cannot predict: it
// says why. A scenario row's serving runs take iteration tables from `tables` and keep them there
// (step::TableCache; one thread at a time), so that predictions of one row under runtime variants
// share them.
Prediction predict(const Subject& s, step::TableCache* tables = nullptr);
// The same with the band of a scenario row's figure (answer::band_of): about twenty more
// evaluations of its scenario, so calibration's fits use predict() alone.
Prediction predict_with_band(const Subject& s);
// Every subject's prediction (predict, or predict_with_band with `bands`), each scenario file
// estimated once however many rows measured its figures (the subjects were resolved together, on
// one catalog).
std::vector<Prediction> predict_all(const std::vector<Subject>& subjects, bool bands);

// What a row measures, for the summaries: a microbenchmark (a kernel, a copy, a collective, a power
// draw), a training job or a serving (inference) job.
enum class RowKind { kMicrobenchmark, kTraining, kServing };
inline constexpr base::Named<RowKind> kRowKindNames[] = {
    {RowKind::kMicrobenchmark, "microbenchmark"}, {RowKind::kTraining, "training"}, {RowKind::kServing, "serving"}};
constexpr const char* to_string(RowKind k) { return base::name_in(kRowKindNames, k); }

struct RowResult {
  const Measurement* measurement = nullptr;
  Prediction prediction;
  RowKind kind = RowKind::kMicrobenchmark;
  std::optional<hardware::Segment> segment;  // of the row's GPU, when it resolved
  std::string runtime;                       // end-to-end rows: the scenario's runtime id
  bool runtime_named = false;                // the scenario names its runtime (not a default)
  // Cross-validation only: why the row could not be held out (a spec value fitted on it has no
  // sibling to fall back to); such rows are left out of the summaries and listed.
  std::string not_held_out;
  [[nodiscard]] std::optional<double> error() const;  // (predicted - measured) / measured
  // Whether the measured value lies in the band [low, high]; nullopt without a band.
  [[nodiscard]] std::optional<bool> inside_band() const;
};
// The row's result with its kind, segment and runtime read off what it was predicted on.
RowResult row_result(const Subject& s, Prediction p);

struct Summary {
  std::string group;
  int count = 0;
  double median = 0;  // of |error|
  double p90 = 0;
  double worst = 0;
  double mean = 0;  // signed mean error (only from summarize_signed): + predicted high, − low
};
// Median, 90th percentile (nearest rank) and maximum of |errors|; zeros for an empty list.
Summary summarize(const std::string& group, std::vector<double> abs_errors);
// The same from signed errors, with their mean: a bias shows as a mean far from 0.
Summary summarize_signed(const std::string& group, const std::vector<double>& errors);

// How well the bands of a group of rows hold what was measured: the share of rows whose measured
// value lies in [low, high] (coverage), and the median half-width (high − low) / 2 over the
// predicted value. The bands aim at about 80 % coverage (answer/uncertainty.cpp).
struct BandCheck {
  double measured = 0;
  double predicted = 0;
  answer::Band band;
};
struct Coverage {
  std::string group;
  int rows = 0;    // with a band
  int inside = 0;  // measured within [low, high]
  double share = 0;
  double median_half_width = 0;
};
// Zeros for an empty list.
Coverage summarize_coverage(const std::string& group, const std::vector<BandCheck>& rows);

// What the bands of a report were built from: the spec files' ranges alone (a catalog without
// model-error groups); the ranges and model-error quantiles taken from the same rows' held-out
// errors (in-sample: `gpusim validate`); or the ranges and quantiles computed with each row's own
// publication left out (held-out, jackknife+: `gpusim validate --cross-validate`).
enum class BandBasis { kRanges, kInSample, kHeldOut };
inline constexpr base::Named<BandBasis> kBandBasisNames[] = {
    {BandBasis::kRanges, "ranges"}, {BandBasis::kInSample, "in-sample"}, {BandBasis::kHeldOut, "held-out"}};
constexpr const char* to_string(BandBasis b) { return base::name_in(kBandBasisNames, b); }

struct ValidationReport {
  // Every row predicted with its own publication left out of every fitted value (see
  // cross_validate): every row is then evidence, and the per-runtime, per-kind and per-segment
  // summaries take fit rows as well as check rows.
  bool cross_validated = false;
  // Summarize fit rows with the check rows in the per-runtime, per-kind and per-segment summaries
  // (set for cross-validated reports, and for the shipped report they are compared with).
  bool all_roles = false;
  std::vector<RowResult> rows;
  std::vector<Summary> by_gpu;          // scored rows of both roles
  std::vector<Summary> by_category[2];  // per role (index: Role)
  // End-to-end check rows (scenario and power-limit rows), per runtime and per GPU, with the
  // signed mean: the bias of a software stack or a GPU.
  std::vector<Summary> by_runtime;
  std::vector<Summary> by_gpu_end_to_end;
  // Check rows (all rows when cross-validated) per kind of job and per GPU segment, signed.
  std::vector<Summary> by_kind;
  std::vector<Summary> by_segment;
  Summary all;
  Summary by_role[2];  // index: Role
  // Band coverage over the scored rows that have a band, per category and over all: the check
  // rows, or every row when cross-validated (coverage); the check rows alone (check_coverage).
  std::vector<Coverage> coverage_by_category;
  Coverage coverage;
  std::vector<Coverage> check_coverage_by_category;
  Coverage check_coverage;
  BandBasis band_basis = BandBasis::kRanges;
};
// The report points into `rows`: keep them alive while it is used. With `bands` (`gpusim
// validate`), scenario rows carry their bands and the report their coverage; without, the errors
// alone, about ten times faster (what `calibrate` compares before and after its fit).
ValidationReport validate(const std::vector<Subject>& subjects, bool bands = false);
// The summaries of a report whose rows are filled in (validate and cross_validate call it).
void summarize_rows(ValidationReport& r);

// A bound `gpusim validate` was asked to hold and the report exceeds (the command then exits 3).
struct ThresholdBreach {
  enum class What : std::uint8_t {
    kMedian,       // the median |error| of the scored rows (group: the role asked for, or "all")
    kKindMedian,   // cross-validated: the median |error| of one kind of row (group: the kind)
    kRuntimeBias,  // cross-validated: a runtime's signed mean error (group: the runtime)
  };
  What what = What::kMedian;
  bool cross_validated = false;
  std::string group;
  double value = 0;  // the median or mean, a fraction
  int count = 0;     // rows behind it
  double bound = 0;  // percent, as asked
};

// ---------------------------------------------------------------- citations
//
// A line of a spec file that holds a value, or names measured rows in a comment. Spec files cite
// the rows a value was set, fitted or borrowed from on the value's own line; rows named anywhere
// else (headers, [meta] sources) are relied on too. Every row a spec names is `fit` (a test holds
// the shipped files to it), and cross-validation takes back the values whose line names a row of
// the publication it leaves out.
struct SpecLine {
  catalog::SpecKind kind = catalog::SpecKind::kGpu;
  std::string id;    // spec id
  std::string path;  // file, for messages
  int line = 0;
  std::string key;                // "efficiency.gemm" on a value's line; empty elsewhere
  std::string value;              // the value as written ("0.94", "\"0.46 us\""), on a value's line
  std::vector<std::string> rows;  // row ids named (ranges such as A24-A26 expanded)
};
// Every value line of every file (all layers) of the catalog, and every other line that names one
// of `row_ids`.
std::vector<SpecLine> spec_lines(const catalog::Catalog& catalog, const std::set<std::string>& row_ids);

// ---------------------------------------------------------------- cross-validation
//
// Leave-one-publication-out (src/validation/cross_validate.cpp): for each publication, every spec
// value whose line names one of its rows is taken back to what a sibling spec holds, what
// calibration can fit of it is fitted again on the other publications' fit rows, and the
// publication's rows are predicted under that catalog. Every row is then evidence.
struct TakenBack {
  catalog::SpecKind kind = catalog::SpecKind::kGpu;
  std::string id;
  std::string key;              // "efficiency.gemm"
  std::string shipped;          // the value as shipped, as written
  std::string prior;            // what stands without the publication; empty: no sibling, kept as shipped
  std::optional<double> refit;  // calibration's value on the other publications' rows (SI)
};
struct Fold {
  std::string publication;
  int rows = 0;
  std::vector<TakenBack> taken_back;
};
struct CrossValidation {
  // Every row predicted without its publication (cross_validated); scenario rows with the band of
  // their figure: the spec ranges and the model-error quantiles of the other publications' rows
  // (band_basis kHeldOut).
  ValidationReport held_out;
  ValidationReport shipped;  // the same rows under the shipped specs
  std::vector<Fold> folds;   // the publications some spec value was taken from
  // The model-error quantiles of every held-out row: what specs/uncertainty/model-error.toml holds
  // (scripts/model-error writes it from the JSON report). Coverage and min_runtime_rows are the
  // catalog file's; no groups when the catalog has none.
  workload::ModelError model_error;
};
// Both reports point into `rows`: keep them alive while they are used.
CrossValidation cross_validate(const std::vector<Measurement>& rows, const catalog::Catalog& catalog);

// ---------------------------------------------------------------- model error
//
// The model's error on publications it was not fitted to, as specs/uncertainty/model-error.toml
// holds it (src/validation/model_error.cpp): per kind of job and family of metric
// (answer::error_family), the quantiles of r = ln(predicted / measured) over held-out rows.
struct Residual {
  workload::JobKind job = workload::JobKind::kTraining;
  workload::MetricFamily metric = workload::MetricFamily::kThroughput;
  std::string runtime;   // empty when the row's scenario names no runtime
  double log_ratio = 0;  // ln(predicted / measured), in its family's orientation
};
// The residual of a scored scenario row whose figure has a band, predicted and measured above 0;
// nullopt for any other row, and for a cross-validated row that was not held out.
std::optional<Residual> residual_of(const RowResult& r);
// The central quantiles of `values` at `coverage` (0 < c < 1), with α = 1 − c: the values of rank
// ⌊(α/2)(n + 1)⌋ and ⌈(1 − α/2)(n + 1)⌉ among the n sorted values, the finite-sample quantiles of
// conformal prediction [barber-jackknife-2021, §1.1]; nullopt when n is too small for either rank
// to lie within 1..n.
std::optional<std::pair<double, double>> central_quantiles(std::vector<double> values, double coverage);
// The groups of a set of residuals: per job and family over every runtime (pooled), and per runtime
// where that runtime has at least `min_runtime_rows` rows of the job and family; a group too small
// for its quantiles is left out.
workload::ModelError model_error_of(const std::vector<Residual>& residuals, double coverage, int min_runtime_rows);

// ---------------------------------------------------------------- calibration
//
// Each parameter enters its prediction linearly (or its measured time linearly), so each fit is
// an ordinary least-squares problem solved with Eigen (QR), every coefficient computed by the
// prediction functions themselves with the unknown set to 1:
//   stream / L2 / host link:  measured_i = η · B_i
//   attention:                t_i = c_i · (1/η) + 2·gap          (c_i: the flash kernels at η = 1)
//   GEMM:                     t_i = c_i · (1/η) + o              (c_i: wave-quantized compute at η = 1)
//   collectives in a node:    t_i = a_i · (1/η) + s_i · α        (a_i = S·f(n)/B_link, s_i = ring steps)
//   power:                    activity = (P_i − idle) / (TDP − idle)
//   launch overhead:          t_i = launch cost (eager or CUDA graph)
// Only rows with role = "fit" are used. Per GPU, and per architecture over all its GPUs' rows
// (defaults for GPUs without rows). A parameter with too few rows, or whose fit is not finite and
// positive, keeps its prior value and the result says why; so does a fit that raises the median
// |error| of its own rows (least squares and the median judge differently).

struct FittedParam {
  std::string scope;  // GPU id, or "arch:<architecture>"
  std::string table;  // "efficiency" or "power"
  std::string key;    // e.g. "dram", "peer_latency"
  double prior = 0;
  double value = 0;
  bool is_time = false;            // written with a unit ("2.1 us")
  std::vector<std::string> rows;   // measurement ids it was fitted on
  std::vector<std::string> files;  // measurement files they came from
};

struct CalibrationResult {
  std::vector<FittedParam> params;
  std::vector<std::string> kept;  // "h100-sxm5-80gb efficiency.gemm: 1 row, needs 2 (kept 0.80)"
};

// `scopes` limits the fits to those GPU ids, "arch:<architecture>" and "runtime:<id>" scopes
// (empty: every scope the rows reach).
CalibrationResult calibrate(const std::vector<Measurement>& rows, const catalog::Catalog& catalog,
                            const std::set<std::string>& scopes = {});

// The overlay as spec files: gpus/<id>.toml and arch/<arch>.toml, each `base = "<own id>"` (a
// patch over the built-in file), every value commented with its rows and files.
struct OverlayFile {
  std::string relative_path;
  std::string text;
};
std::vector<OverlayFile> overlay_files(const std::vector<FittedParam>& params);
// `base` with the fitted values patched in (what `--specs DIR` gives after the files are written).
catalog::Catalog with_overlay(const catalog::Catalog& base, const std::vector<FittedParam>& params);

}  // namespace gpusim::validation
