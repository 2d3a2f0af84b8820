// Readers of the [uncertainty] tables of architecture, GPU and runtime files (formats in
// specs/README.md): the plausible range of each uncertain value, which the band of an estimate
// varies (answer/uncertainty.cpp).
#include <algorithm>

#include "parse/parse.hpp"

namespace gpusim::parse {
namespace {

// A range as a fraction of its value: at least 0 and below 1, so that value × (1 − range) stays
// above 0.
void fraction(Reader& r, std::string_view key, double& out, Need need = Need::kRequired) {
  if (auto v = r.number(key, need, Range::kNonNegative)) {
    if (*v >= 1.0) {
      r.error(key, base::strfmt("a range as a fraction of its value is at least 0 and below 1, got %g", *v));
      return;
    }
    out = *v;
  }
}

// `assumed` names keys of the same table.
std::vector<std::string> assumed_keys(Reader& r, std::initializer_list<std::string_view> keys) {
  std::vector<std::string> out = r.string_list("assumed");
  for (const std::string& k : out) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
      std::string known;
      for (const auto key : keys) {
        known += (known.empty() ? "" : ", ") + std::string(key);
      }
      r.error("assumed", "\"" + k + "\" is not a range of this table (known: " + known + ")");
    }
  }
  return out;
}

}  // namespace

void read_efficiency_ranges(Reader& r, hardware::EfficiencyRanges& e) {
  fraction(r, "gemm", e.gemm);
  if (r.has("gemm_fp8")) {
    double v = 0;
    fraction(r, "gemm_fp8", v);
    e.gemm_fp8 = v;
  }
  if (r.has("gemm_fp4")) {
    double v = 0;
    fraction(r, "gemm_fp4", v);
    e.gemm_fp4 = v;
  }
  fraction(r, "attention", e.attention);
  fraction(r, "dram", e.dram);
  fraction(r, "gemv_inflight", e.gemv_inflight);
  fraction(r, "peer_link", e.peer_link);
  fraction(r, "kernel_overhead", e.kernel_overhead);
  fraction(r, "launch", e.launch);
  fraction(r, "between_gpus", e.between_gpus);
  e.measured_on = r.string_list("measured_on");
  e.assumed = assumed_keys(r, {"gemm", "gemm_fp8", "gemm_fp4", "attention", "dram", "gemv_inflight", "peer_link",
                               "kernel_overhead", "launch", "between_gpus"});
  r.finish();
}

void read_runtime_ranges(Reader& r, workload::RuntimeRanges& rr, workload::RuntimeKind kind) {
  if (auto v = r.number("remainder", Need::kRequired, Range::kNonNegative)) {
    rr.remainder = *v;
  }
  if (auto v = r.number("overlap", Need::kRequired, Range::kNonNegative, 1.0)) {
    rr.overlap = *v;
  }
  fraction(r, "dispatch", rr.dispatch);
  // The exposed host time per iteration is a serving engine's: inference runtimes state its range.
  const Need serving = kind == workload::RuntimeKind::kInference ? Need::kRequired : Need::kOptional;
  if (auto v = r.quantity("step_overhead", units::Dim::kTime, serving, Range::kNonNegative)) {
    rr.step_overhead = Seconds(*v);
    if (kind == workload::RuntimeKind::kTraining) {
      r.error("step_overhead", "a serving engine's range; this runtime trains");
    }
  }
  if (auto v = r.number("unnamed", Need::kOptional, Range::kNonNegative)) {
    rr.unnamed = *v;
  }
  rr.assumed = assumed_keys(r, {"remainder", "overlap", "dispatch", "step_overhead", "unnamed"});
  r.finish();
}

}  // namespace gpusim::parse
