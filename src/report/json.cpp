// JSON report: the DESIGN §5 contract keys (plus a few more), SI units, fractions in 0..1.
// One list of fields feeds both the JSON writer and report_metric, so a key validated against a
// measurement is exactly the key a user reads.
#include <variant>

#include "gpusim/report/report.hpp"
#include "report/json_writer.hpp"

namespace gpusim {
namespace {

struct Null {};
using FieldValue = std::variant<double, bool, std::string, Null>;

struct Field {
  const char* section;  // "" for top-level keys
  const char* key;
  FieldValue value;
};

FieldValue opt(bool present, double v) { return present ? FieldValue(v) : FieldValue(Null{}); }

std::vector<Field> report_fields(const Estimate& e) {
  const StepBreakdown& s = e.step;
  const MemoryBreakdown& m = e.memory;
  const bool inf = e.inference.has_value();
  const InferenceResult r = inf ? *e.inference : InferenceResult{};
  return {
      {"", "scenario", e.scenario},
      {"system", "gpu", e.gpu_id},
      {"system", "gpu_name", e.gpu_name},
      {"system", "gpus", static_cast<double>(e.gpus)},
      {"system", "nodes", static_cast<double>(e.nodes)},
      {"system", "intra_node", e.fabric},
      {"step", "time_s", s.time.value()},
      {"step", "compute_s", s.compute.value()},
      {"step", "communication_s", s.communication.value()},
      {"step", "bubble_s", s.bubble.value()},
      {"step", "input_stall_s", s.input_stall.value()},
      {"step", "overhead_s", s.overhead.value()},
      {"step", "compute_bound_s", s.gemm.value()},
      {"step", "memory_bound_s", s.memory_bound.value()},
      {"step", "communication_total_s", s.communication_total.value()},
      {"step", "kernels", s.kernels},
      {"step", "host_launch_s", s.host_launch.value()},
      {"step", "launch_stall_s", s.launch_stall.value()},
      {"step", "tokens", e.tokens_per_step},
      {"throughput", "tokens_per_s", e.tokens_per_s},
      {"throughput", "tokens_per_s_per_gpu", e.tokens_per_s_per_gpu},
      {"throughput", "samples_per_s", e.samples_per_s},
      {"utilization", "mfu", e.mfu},
      {"utilization", "hfu", e.hfu},
      {"utilization", "model_tflops_per_gpu", e.model_tflops_per_gpu},
      {"utilization", "hardware_tflops_per_gpu", e.hardware_tflops_per_gpu},
      {"utilization", "peak_tflops_per_gpu", units::to_teraflops(e.peak)},
      {"utilization", "dtype", std::string(to_string(e.dtype))},
      {"memory", "per_gpu_bytes", m.total().value()},
      {"memory", "capacity_bytes", m.capacity.value()},
      {"memory", "fits", m.fits()},
      {"memory", "weights_bytes", m.weights.value()},
      {"memory", "gradients_bytes", m.gradients.value()},
      {"memory", "optimizer_bytes", m.optimizer.value()},
      {"memory", "activations_bytes", m.activations.value()},
      {"memory", "kv_cache_bytes", m.kv_cache.value()},
      {"memory", "other_bytes", m.other.value()},
      {"model", "params", e.params},
      {"training", "tokens", opt(e.training, e.tokens)},
      {"training", "time_s", opt(e.training, e.train_time.value())},
      {"training", "gpu_hours", opt(e.training, e.gpu_hours)},
      {"inference", "time_to_first_token_s", opt(inf, r.time_to_first_token.value())},
      {"inference", "time_per_output_token_s", opt(inf, r.time_per_output_token.value())},
      {"inference", "output_tokens_per_s", opt(inf, r.output_tokens_per_s)},
      {"inference", "request_latency_s", opt(inf, r.request_latency.value())},
      {"inference", "offline_output_tokens_per_s", opt(inf, r.offline_output_tokens_per_s)},
      {"inference", "batch", opt(inf, r.batch)},
      {"power", "gpu_avg_w", e.gpu_avg_power.value()},
      {"power", "energy_kwh", e.energy_kwh},
      {"power", "carbon_kg", e.carbon_kg},
      {"cost", "cloud_usd", e.cost.cloud.value()},
      {"cost", "owned_usd", e.cost.owned().value()},
      {"cost", "owned_electricity_usd", e.cost.owned_electricity.value()},
      {"cost", "owned_hardware_usd", e.cost.owned_hardware.value()},
      {"cost", "breakeven_days", opt(e.cost.breakeven_days.has_value(), e.cost.breakeven_days.value_or(0.0))},
      {"", "bottleneck", std::string(to_string(e.bottleneck))},
      {"", "bottleneck_reason", e.bottleneck_reason},
  };
}

void write_value(detail::JsonWriter& w, const char* key, const FieldValue& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Null>) {
          w.null(key);
        } else {
          w.value(key, x);
        }
      },
      v);
}

}  // namespace

std::string report_json(const Estimate& e) {
  detail::JsonWriter w;
  w.begin_object();
  std::string open;  // the section whose object is open
  for (const Field& f : report_fields(e)) {
    if (open != f.section) {
      if (!open.empty()) {
        w.end_object();
      }
      open = f.section;
      if (!open.empty()) {
        w.begin_object(f.section);
      }
    }
    write_value(w, f.key, f.value);
  }
  if (!open.empty()) {
    w.end_object();
  }
  w.begin_array("advice");
  for (const auto& a : e.advice) {
    w.value(nullptr, a);
  }
  w.end_array();
  w.end_object();
  return w.str() + "\n";
}

std::optional<double> report_metric(const Estimate& e, std::string_view key) {
  for (const Field& f : report_fields(e)) {
    const std::string full = *f.section == '\0' ? std::string(f.key) : std::string(f.section) + "." + f.key;
    if (full == key) {
      if (const double* d = std::get_if<double>(&f.value)) {
        return *d;
      }
      if (const bool* b = std::get_if<bool>(&f.value)) {
        return *b ? 1.0 : 0.0;
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

bool is_report_metric(std::string_view key) {
  static const Estimate probe{};
  for (const Field& f : report_fields(probe)) {
    const std::string full = *f.section == '\0' ? std::string(f.key) : std::string(f.section) + "." + f.key;
    if (full == key && !std::holds_alternative<std::string>(f.value)) {
      return true;
    }
  }
  return false;
}

}  // namespace gpusim
