// The whole answer for one scenario: the evaluator's step, with energy, carbon, cloud and owned
// cost, break-even, and the diagnosis with its advice — and the report's fields, the one list of
// keys (docs/report.md) that the JSON and CSV writers print and `validate` reads measured rows
// against.
#pragma once

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
  double worst = 0;  // the largest achieved / limit ratio: the SLO is met when it is at most 1
  [[nodiscard]] bool met() const { return worst <= 1.0 && !saturated; }
};
SloCheck check_slo(const scenario::Slo& slo, const step::InferenceResult& r);
// The percentile `p` of a latency distribution.
Seconds percentile_of(const step::Percentiles& d, scenario::Percentile p);

struct Estimate {
  std::string scenario;
  std::string gpu_id;
  std::string gpu_name;
  int gpus = 1;
  int nodes = 1;
  std::string fabric;  // the intra-node path, in words
  std::string runtime_id;
  std::string runtime_name;
  std::string runtime_summary;  // launch path, attention kernel, optimizer, in words
  std::string serving_summary;  // inference: the engine, its load and the layout, in words
  double sm_clock_mhz = 0;      // the SM clock the step sustains
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
  std::optional<SloCheck> slo;  // serving scenarios with an [slo]
};

struct Options {
  bool advice = true;  // `sweep` rows skip it
};

// Cloud USD per million tokens of the job: trained, or generated (output tokens) for serving; 0
// when it has none.
double usd_per_million_tokens(const Estimate& e);

// Throws InputError only for what the scenario loader cannot see (a node without a usable link);
// a job that does not fit is reported, not thrown.
Estimate estimate(const scenario::Scenario& sc, const Options& options = {});

// --- Report fields (keys and units in docs/report.md) ---
struct Null {};
using FieldValue = std::variant<double, bool, std::string, Null>;
struct Field {
  const char* section;  // "" for top-level keys
  const char* key;
  FieldValue value;
};
// Every data field of the report, in report order (the text fields bottleneck_reason and advice
// are words: the report stage adds them).
std::vector<Field> report_fields(const Estimate& e);
// The numeric value of a report key ("throughput.tokens_per_s_per_gpu"); nullopt when the key is
// absent, not numeric, or null for this estimate (inference keys of a training run).
std::optional<double> report_metric(const Estimate& e, std::string_view key);
// Whether `key` names a numeric key of the report (for validating measurement files).
bool is_report_metric(std::string_view key);

}  // namespace gpusim::answer
