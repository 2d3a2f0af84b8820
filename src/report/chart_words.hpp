// Private to src/report/: the words charts put on their titles and axes: what ran (GPU, count,
// layout, runtime, precision), scenario keys and report keys as words with their units.
#pragma once

#include <string>

#include "gpusim/report.hpp"

namespace gpusim::report {

// What ran, as a chart title says it: "2 × GeForce RTX 3090 · TP 1 × PP 1 × DP 2 · PyTorch DDP ·
// bf16". Empty parts are left out.
struct RunParts {
  std::string gpu;  // display name
  int gpus = 0;     // 0: not one count (left out)
  std::optional<workload::Layout> layout;
  std::string runtime;
  std::string precision;
};
RunParts run_parts(const answer::Estimate& e);
RunParts run_parts(const scenario::Scenario& sc);
std::string run_words(const RunParts& r);

// A scenario key as an axis title: "global batch (sequences)"; a key without a known unit says
// what it counts or that it has none.
std::string key_words(const std::string& key, bool numeric);
// The same words without the unit: "global batch".
std::string key_name(const std::string& key);
// A report key (docs/report.md) as an axis title: "step time (s)", "MFU (fraction, unitless)".
std::string metric_words(const std::string& key);

}  // namespace gpusim::report
