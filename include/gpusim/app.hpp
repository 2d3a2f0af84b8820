// The application layer: one request and one function per command, shared by the front ends (the
// command line, the Python module). A function owns its command's option checks and defaults: it
// refuses a request it cannot take with a RequestError naming the field at fault, and returns what
// the command reports; a front end only turns its inputs into the request and the answer into its
// output (report/ formats it), so two front ends given the same request give the same answer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpusim/answer.hpp"
#include "gpusim/catalog.hpp"
#include "gpusim/explain.hpp"
#include "gpusim/report.hpp"
#include "gpusim/scenario.hpp"
#include "gpusim/search.hpp"
#include "gpusim/validation.hpp"

namespace gpusim::app {

// A request a command cannot take. `option` is the request field at fault, spelled as Python's
// keyword (the command line's option is --option with '-' for '_', and --set for sets), or empty
// when no one field is; what() is "<option> <problem>".
class RequestError : public std::invalid_argument {
 public:
  RequestError(const std::string& option, const std::string& problem)
      : std::invalid_argument(option.empty() ? problem : option + " " + problem), option_(option), problem_(problem) {}
  [[nodiscard]] const std::string& option() const { return option_; }
  [[nodiscard]] const std::string& problem() const { return problem_; }

 private:
  std::string option_;
  std::string problem_;
};

// The scenario a request names: a file, or TOML text given under that name (its messages' path).
struct ScenarioSource {
  std::string path;
  std::optional<std::string> text;
};

// The scenario's file read and parsed, or its text parsed (InputError for either).
scenario::ParsedScenario parse(const ScenarioSource& source);

// ---------------------------------------------------------------- GPU what-ifs (app/gpu_variant.cpp)
// A GPU as it would be with other silicon: "what if its memory were twice as fast". It is a patch
// over the GPU's spec file (`base = "<id>"`, as calibration overlays are), so the command line gets
// the same GPU from `--specs DIR` with the patch saved as DIR/gpus/<id>.toml.
struct GpuVariant {
  double memory_bandwidth = 1;  // x the spec's DRAM bandwidth
  // x the SM clock: the compute peaks (SMs x operations per clock x clock), the rated and the highest
  // clock, and the latencies counted in cycles (L1, L2) with it; the DRAM's latency stays in
  // seconds, and the board's power limit stays, so a faster clock may be throttled by it.
  double clock = 1;
  std::optional<int> pcie_gen;  // the host link's generation, 3 to 6
  [[nodiscard]] bool identity() const { return memory_bandwidth == 1 && clock == 1 && !pcie_gen; }
};
// RequestError ("gpu_variant") for a factor outside kVariantFactorRange or a generation outside 3 to 6.
inline constexpr double kVariantFactorRange[2] = {0.1, 10.0};
void check(const GpuVariant& variant);
// The patch file that makes `gpu` so (InputError for an unknown GPU).
catalog::SpecFile gpu_variant_patch(const catalog::Catalog& catalog, const std::string& gpu, const GpuVariant& variant);
// `catalog` with that patch over the GPU's file.
catalog::Catalog with_gpu_variant(const catalog::Catalog& catalog, const std::string& gpu, const GpuVariant& variant);

// ---------------------------------------------------------------- estimate (app/estimate.cpp)
// The whole answer for one scenario: step, throughput, memory, time to train, power, cost, the
// bottleneck and advice, with the band of every figure that has one unless `bands` is false (a
// curve of many estimates, where each band would cost several more).
struct EstimateRequest {
  ScenarioSource scenario;
  std::vector<std::string> sets;    // key=value overrides
  std::vector<std::string> unsets;  // keys (or tables) taken out of the scenario, before the sets
  std::string gpu;                  // replaces system.gpu; empty: the scenario's
  bool bands = true;                // the band of every figure that has one (the command line's)
  GpuVariant variant;               // applied to the GPU the scenario resolves to
};
struct EstimateAnswer {
  scenario::Scenario scenario;
  answer::Estimate estimate;
};
// InputError for the scenario, its overrides and an unknown GPU.
EstimateAnswer estimate(const catalog::Catalog& catalog, const EstimateRequest& request);

// ---------------------------------------------------------------- breakeven (app/estimate.cpp)
// Owning against renting the scenario's GPUs across utilization (report::breakeven_of of its
// estimate).
report::Breakeven breakeven(const catalog::Catalog& catalog, const EstimateRequest& request);

// ---------------------------------------------------------------- sweep (app/sweep.cpp)
// A grid over scenario keys: every point estimated, in grid order (the first axis fastest).
struct SweepRequest {
  ScenarioSource scenario;
  std::vector<std::string> sets;    // fixed overrides
  std::vector<std::string> unsets;  // keys (or tables) taken out of the scenario, before the sets
  std::vector<search::Axis> axes;   // the grid is their product
  int shard = 0;                    // this run's points: shard, shard + shards, ...
  int shards = 1;
  std::uint64_t max_points = search::kMaxSweepPoints;  // the most points this shard may have
  std::function<void(std::size_t done, std::size_t total)> progress;
};
struct SweepAnswer {
  std::size_t points = 0;  // this shard's points, each given to `each`
  std::size_t ran = 0;     // of them, those with an estimate
  // Why no point ran, when none did: their one reason once, or the first few points' with their
  // values (a front end refuses such a sweep; rows that ran nowhere are no answer).
  std::vector<Diagnostic> refusal;
};
// RequestError for no axis, a shard outside 0 <= shard < shards, max_points outside 1 to
// search::kMaxSweepPointsLimit; InputError for a grid of more points than max_points.
void check(const SweepRequest& request);
// check(), then the base scenario (InputError when it is itself invalid), then each point of the
// shard, in grid order, to `each` as it is computed (constant memory whatever the grid).
SweepAnswer sweep(const catalog::Catalog& catalog, const SweepRequest& request,
                  const std::function<void(const search::SweepPoint&)>& each);

// ---------------------------------------------------------------- specs (app/specs.cpp)
// One spec file as the catalog holds it (the top layer), found by its id in any folder; a GPU's
// is validated first. InputError for an id no folder has (naming the known GPU ids) or a GPU spec
// that does not load.
catalog::SpecFile show_spec(const catalog::Catalog& catalog, const std::string& id);
// Every file of the catalog checked, or the given files against it (a file outside the catalog's
// folders is read as a GPU file, e.g. a calibration overlay); returns how many were checked.
// InputError with every problem found.
std::size_t check_specs(const catalog::Catalog& catalog, const std::vector<std::string>& files);

// ---------------------------------------------------------------- roofline (app/roofline.cpp)
// A GPU's roofs, or several GPUs' on one picture, or a scenario's step placed on its GPU's roofs.
struct RooflineRequest {
  std::string gpu;                // the GPU; with a scenario, the one replacing system.gpu
  std::vector<std::string> gpus;  // several GPUs drawn together: roofs only, no scenario
  std::optional<ScenarioSource> scenario;
  std::vector<std::string> sets;    // the scenario's key=value overrides
  std::vector<std::string> unsets;  // keys (or tables) taken out of the scenario, before the sets
  // The dtype whose roof and ridge point are highlighted; none: bf16, or fp16 on a GPU without it.
  std::optional<std::string> dtype;
  GpuVariant variant;  // applied to `gpu`, or the scenario's GPU (not to several `gpus`)
};
// One roofline per GPU of the request, in its order. RequestError for a request it cannot take (no
// GPU and no scenario, several GPUs with a scenario, an unknown dtype, a dtype the GPU lacks);
// InputError for bad specs or scenario input.
std::vector<explain::Roofline> roofline(const catalog::Catalog& catalog, const RooflineRequest& request);

// ---------------------------------------------------------------- plan (app/plan.cpp)
// The best layouts of a training scenario, or the serving deployments that meet its SLO.
struct PlanRequest {
  ScenarioSource scenario;
  std::vector<std::string> sets;
  std::vector<std::string> unsets;   // keys (or tables) taken out of the scenario, before the sets
  std::string gpu;                   // replaces system.gpu; empty: the scenario's
  std::string objective = "time";    // search::kObjectiveNames
  int top = 10;                      // rows kept: 1 to search::kMaxPlanTop
  int max_gpus = 0;                  // also search GPU counts up to this: 0 to search::kMaxPlanGpus
  std::vector<std::string> formats;  // serving only: the weight formats to try; none: the defaults
  std::function<void(std::size_t done, std::size_t total)> progress;  // serving: as candidates finish
};
// The scenario and the options the search ran under (what the reports print), and its result:
// `training` or `serving` after the scenario's job.
struct PlanAnswer {
  scenario::Scenario scenario;
  search::PlanOptions options;
  std::optional<search::PlanResult> training;
  std::optional<search::ServingPlanResult> serving;
};
// The request's own checks, before any scenario is read (RequestError): a front end that sends
// requests elsewhere checks them first.
void check(const PlanRequest& request);
// check(), then the scenario (InputError), then the search; formats on a training scenario are a
// RequestError.
PlanAnswer plan(const catalog::Catalog& catalog, const PlanRequest& request);

// ---------------------------------------------------------------- compare (app/compare.cpp)
// One job on several GPUs, each keeping the scenario's GPU count and layout, ranked; or on several
// whole systems ("2xrtx3090"), each at its own best layout (search::compare_systems).
struct CompareRequest {
  ScenarioSource scenario;
  std::vector<std::string> sets;
  std::vector<std::string> unsets;   // keys (or tables) taken out of the scenario, before the sets
  std::vector<std::string> gpus;     // GPU ids; or
  std::vector<std::string> systems;  // systems, "[NODES x] GPUS x ID" (search::parse_system)
  std::string objective = "time";    // systems: search::kObjectiveNames
};
struct CompareAnswer {
  scenario::Scenario base;                 // the scenario as given (its name titles the report)
  std::vector<search::CompareRow> rows;    // gpus: search::compare's order
  std::vector<search::SystemRow> systems;  // systems: search::compare_systems's order
  search::Objective objective = search::Objective::kTime;
};
// The request's own checks (RequestError): exactly one of gpus and systems, none empty, each
// system of the form search::parse_system reads, the objective with systems only.
void check(const CompareRequest& request);
// check(), then InputError for the scenario (it must itself be valid), an unknown GPU, and a job
// that runs on none of the GPUs or systems (each one's reason: no comparison is an answer).
CompareAnswer compare(const catalog::Catalog& catalog, const CompareRequest& request);

// ---------------------------------------------------------------- validate (app/validate.cpp)
// Every measured row predicted under its conditions, or (cross_validate) each publication's rows
// with every value fitted on it taken back; and the bounds the report was asked to hold.
struct ValidateRequest {
  std::vector<std::string> inputs;  // measurement files or directories, at least one
  std::string role = "all";         // check | fit | all: the rows to predict
  bool cross_validate = false;
  std::optional<double> fail_above;  // percent >= 0: the median |error| of the selected scored rows
  std::optional<double> fail_bias;   // percent >= 0, cross_validate only: a runtime's signed mean error
  // percent >= 0 per kind of row (validation::kRowKindNames), cross_validate only
  std::vector<std::pair<std::string, double>> fail_above_kind;
};
struct ValidateAnswer {
  std::optional<validation::ValidationReport> report;  // without cross_validate
  std::optional<validation::CrossValidation> cross;    // with it
  std::vector<validation::ThresholdBreach> breaches;   // the bounds exceeded (a front end fails on any)
  // The rows the reports point into: keep the answer alive while they are used.
  std::shared_ptr<const std::vector<validation::Measurement>> rows;
};
// The request's own checks (RequestError): inputs, role, bounds, and the bounds that need
// cross_validate.
void check(const ValidateRequest& request);
// check(), then the rows (InputError for unreadable measurements, or no row of the role asked).
ValidateAnswer validate(const catalog::Catalog& catalog, const ValidateRequest& request);

// ---------------------------------------------------------------- calibrate (app/calibrate.cpp)
// The efficiency parameters fitted on the `fit` rows, as an overlay of spec files, and the
// validation error before and after them.
struct CalibrateRequest {
  std::vector<std::string> inputs;  // measurement files or directories, at least one
};
struct CalibrateAnswer {
  validation::CalibrationResult fit;
  std::vector<validation::OverlayFile> files;                        // paths relative to the overlay's folder
  validation::ValidationReport before;                               // under the catalog given
  validation::ValidationReport after;                                // under it with the overlay
  std::shared_ptr<const std::vector<validation::Measurement>> rows;  // the rows the reports point into
};
// RequestError for no inputs; InputError for unreadable measurements.
CalibrateAnswer calibrate(const catalog::Catalog& catalog, const CalibrateRequest& request);

// ---------------------------------------------------------------- model import (app/model_import.cpp)
// A Hugging Face config.json as a model spec file, read back as `specs check` reads it first.
struct ModelImportRequest {
  std::string config;       // the config.json
  std::string output_name;  // where the spec will be written, for messages ("" or "-": "<output>")
};
struct ModelImportAnswer {
  scenario::ImportedModel imported;
  std::string text;  // the spec file (report::model_spec_toml)
};
// InputError for a config it cannot read or map, and for one that maps to a spec the reader
// refuses (naming the config.json fields behind each problem).
ModelImportAnswer import_model(const catalog::Catalog& catalog, const ModelImportRequest& request);

// ---------------------------------------------------------------- init (app/init.cpp)
// A commented scenario to start from: `kind` is training or serving (RequestError otherwise).
std::string init(const std::string& kind);

}  // namespace gpusim::app
