// `gpusim plan`: exhaustive search of parallel layouts for a training scenario.
// Every combination of tensor t (powers of two dividing heads and FFN), pipeline p (dividing the
// layers and the GPUs), data d = G/(t·p), ZeRO 0..3, micro-batch (powers of two dividing the
// per-rank batch), recompute none/selective/full, sequence parallelism (t > 1) and virtual
// stages v (p > 1, p·v dividing the layers), and optionally the GPU count, is timed with the same
// step model as `estimate` (training_step.hpp) and checked against memory; the best by time to
// train (or cloud cost) are kept. Kernel sums are computed once per (t, SP, micro-batch,
// recompute) and reused, so a layout costs only the communication and memory arithmetic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpusim/model/estimate.hpp"
#include "gpusim/workload/scenario.hpp"

namespace gpusim {

enum class PlanObjective { kTime, kCost };

struct PlanOptions {
  PlanObjective objective = PlanObjective::kTime;
  int top = 10;
  int max_gpus = 0;  // > scenario GPUs: also search GPU counts up to this (node multiples of 2^k and 3·2^k)
};

struct Layout {
  int gpus = 1;
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  int zero = 0;
  std::int64_t micro_batch = 1;
  Recompute recompute = Recompute::kNone;
  bool sequence = false;
  int virtual_stages = 1;
};

struct PlanRow {
  Layout layout;
  StepBreakdown step;
  double mfu = 0;
  Bytes memory;
  Seconds train_time;
  Usd cloud;
  [[nodiscard]] double objective(PlanObjective o) const {
    return o == PlanObjective::kTime ? train_time.value() : cloud.value();
  }
};

struct PlanResult {
  std::vector<PlanRow> best;            // feasible, best first
  std::optional<PlanRow> closest;       // when nothing fits: the layout needing the least memory
  std::vector<std::string> infeasible;  // one line per region
  std::uint64_t evaluated = 0;          // layouts timed and sized
  double seconds = 0;                   // search wall time
};

PlanResult plan(const Scenario& sc, const PlanOptions& options);

// The scenario with a layout applied (for `estimate` of a planned layout).
Scenario with_layout(const Scenario& sc, const Layout& l);
std::string describe(const Layout& l);

}  // namespace gpusim
