// The report's data fields (keys, units and formulas in docs/report.md): times in seconds, sizes
// in bytes, power in watts, energy in kWh, money in USD, fractions in 0..1. One list feeds the
// JSON and CSV writers and report_metric, so a key validated against a measurement is exactly
// the key a user reads.
#include <algorithm>

#include "gpusim/answer.hpp"

namespace gpusim::answer {
namespace {

FieldValue opt(bool present, double v) { return present ? FieldValue(v) : FieldValue(Null{}); }

}  // namespace

std::vector<Field> all_fields(const Estimate& e) {
  const step::Evaluation& ev = e.eval;
  const step::StepBreakdown& s = ev.step;
  const physics::MemoryBreakdown& m = ev.memory;
  const bool inf = ev.inference.has_value();
  const step::InferenceResult r = inf ? *ev.inference : step::InferenceResult{};
  const bool training = ev.training;
  auto slo_limit = [&e](std::optional<Seconds> scenario::Slo::*limit) {
    return e.slo && e.slo->slo.*limit ? FieldValue(units::to_seconds(*(e.slo->slo.*limit))) : FieldValue(Null{});
  };
  std::vector<Field> out = {
      {"", "scenario", e.scenario},
      {"system", "gpu", e.gpu_id},
      {"system", "gpu_name", e.gpu_name},
      {"system", "gpus", static_cast<double>(e.gpus)},
      {"system", "nodes", static_cast<double>(e.nodes)},
      {"system", "intra_node", e.fabric},
      {"runtime", "id", e.runtime_id},
      {"runtime", "name", e.runtime_name},
      {"step", "time_s", units::to_seconds(s.time)},
      {"step", "compute_s", units::to_seconds(s.compute)},
      {"step", "communication_s", units::to_seconds(s.communication)},
      {"step", "bubble_s", units::to_seconds(s.bubble)},
      {"step", "input_stall_s", units::to_seconds(s.input_stall)},
      {"step", "offload_s", units::to_seconds(s.offload)},
      {"step", "overhead_s", units::to_seconds(s.overhead)},
      {"step", "compute_bound_s", units::to_seconds(s.gemm)},
      {"step", "memory_bound_s", units::to_seconds(s.memory_bound)},
      {"step", "communication_total_s", units::to_seconds(s.communication_total)},
      {"step", "kernels", s.kernels},
      {"step", "host_launch_s", units::to_seconds(s.host_launch)},
      {"step", "launch_stall_s", units::to_seconds(s.launch_stall)},
      {"step", "tokens", ev.tokens_per_step},
      {"throughput", "tokens_per_s", ev.tokens_per_s},
      {"throughput", "tokens_per_s_per_gpu", ev.tokens_per_s_per_gpu},
      {"throughput", "samples_per_s", ev.samples_per_s},
      {"utilization", "mfu", ev.mfu},
      {"utilization", "hfu", ev.hfu},
      {"utilization", "model_tflops_per_gpu", units::to_teraflops(ev.model_flops_per_gpu)},
      {"utilization", "hardware_tflops_per_gpu", units::to_teraflops(ev.hardware_flops_per_gpu)},
      {"utilization", "peak_tflops_per_gpu", units::to_teraflops(ev.peak)},
      {"utilization", "dtype", std::string(units::to_string(ev.dtype))},
      {"memory", "per_gpu_bytes", units::to_bytes(m.total())},
      {"memory", "allocated_bytes", units::to_bytes(m.allocated())},
      {"memory", "capacity_bytes", units::to_bytes(m.capacity)},
      {"memory", "fits", step::runs(ev)},
      {"memory", "shortfall_bytes",
       units::to_bytes(std::max(Bytes(0), m.total() - (m.budget.value() > 0 ? m.budget : m.capacity)))},
      {"memory", "host_shortfall_bytes",
       units::to_bytes(m.host_capacity.value() > 0 ? std::max(Bytes(0), m.host - m.host_capacity) : Bytes(0))},
      {"memory", "gpu_fits", m.gpu_fits()},
      {"memory", "host_fits", m.host_fits()},
      {"memory", "weights_bytes", units::to_bytes(m.weights)},
      {"memory", "gradients_bytes", units::to_bytes(m.gradients)},
      {"memory", "optimizer_bytes", units::to_bytes(m.optimizer)},
      {"memory", "activations_bytes", units::to_bytes(m.activations)},
      {"memory", "kv_cache_bytes", units::to_bytes(m.kv_cache)},
      {"memory", "other_bytes", units::to_bytes(m.other)},
      {"memory", "host_bytes", units::to_bytes(m.host)},
      {"memory", "host_capacity_bytes", units::to_bytes(m.host_capacity)},
      {"memory", "nvme_bytes", units::to_bytes(m.nvme)},
      {"model", "params", e.params},
      {"training", "tokens", opt(training, ev.tokens)},
      {"training", "time_s", opt(training, units::to_seconds(ev.job_time))},
      {"training", "gpu_hours", opt(training, units::to_hours(ev.gpu_time))},
      {"inference", "time_to_first_token_s", opt(inf, units::to_seconds(r.time_to_first_token))},
      {"inference", "time_per_output_token_s", opt(inf, units::to_seconds(r.time_per_output_token))},
      {"inference", "request_latency_s", opt(inf, units::to_seconds(r.request_latency))},
      {"inference", "output_tokens_per_s", opt(inf, r.output_tokens_per_s)},
      {"inference", "decode_tokens_per_s", opt(inf, r.decode_tokens_per_s)},
      {"inference", "prefill_tokens_per_s", opt(inf, r.prefill_tokens_per_s)},
      {"inference", "requests_per_s", opt(inf, r.requests_per_s)},
      {"inference", "tokens_per_s_per_user", opt(inf, r.tokens_per_s_per_user)},
      {"inference", "mbu", opt(inf, r.mbu)},
      {"inference", "batch", opt(inf, r.batch)},
      {"inference", "kv_cache_utilization", opt(inf, r.kv_utilization)},
      {"inference", "kv_capacity_tokens", opt(inf, r.kv_capacity_tokens)},
      {"inference", "kv_shortfall_tokens", opt(inf, std::max(0.0, r.kv_request_tokens - r.kv_capacity_tokens))},
      {"inference", "preemptions", opt(inf, r.preemptions)},
      {"inference", "requests", opt(inf, r.requests)},
      {"inference", "replicas", opt(inf, static_cast<double>(r.replicas))},
      {"inference", "saturation_requests_per_s",
       opt(inf && r.saturation_requests_per_s > 0, r.saturation_requests_per_s)},
      {"inference", "saturated", inf ? FieldValue(r.saturated) : FieldValue(Null{})},
      {"inference", "truncated", inf ? FieldValue(r.truncated) : FieldValue(Null{})},
      {"inference.ttft_s", "mean", opt(inf, units::to_seconds(r.ttft.mean))},
      {"inference.ttft_s", "p50", opt(inf, units::to_seconds(r.ttft.p50))},
      {"inference.ttft_s", "p90", opt(inf, units::to_seconds(r.ttft.p90))},
      {"inference.ttft_s", "p99", opt(inf, units::to_seconds(r.ttft.p99))},
      {"inference.tpot_s", "mean", opt(inf, units::to_seconds(r.tpot.mean))},
      {"inference.tpot_s", "p50", opt(inf, units::to_seconds(r.tpot.p50))},
      {"inference.tpot_s", "p90", opt(inf, units::to_seconds(r.tpot.p90))},
      {"inference.tpot_s", "p99", opt(inf, units::to_seconds(r.tpot.p99))},
      {"inference.e2e_s", "mean", opt(inf, units::to_seconds(r.e2e.mean))},
      {"inference.e2e_s", "p50", opt(inf, units::to_seconds(r.e2e.p50))},
      {"inference.e2e_s", "p90", opt(inf, units::to_seconds(r.e2e.p90))},
      {"inference.e2e_s", "p99", opt(inf, units::to_seconds(r.e2e.p99))},
      {"inference.queue_s", "mean", opt(inf, units::to_seconds(r.queue.mean))},
      {"inference.queue_s", "p50", opt(inf, units::to_seconds(r.queue.p50))},
      {"inference.queue_s", "p90", opt(inf, units::to_seconds(r.queue.p90))},
      {"inference.queue_s", "p99", opt(inf, units::to_seconds(r.queue.p99))},
      {"power", "gpu_avg_w", units::to_watts(ev.gpu_avg_power)},
      {"power", "sm_clock_mhz", e.sm_clock_mhz},
      {"power", "energy_kwh", units::to_kwh(e.energy.energy)},
      {"power", "carbon_kg", units::to_kilograms(e.energy.carbon)},
      {"cost", "cloud_usd", units::to_usd(e.cost.cloud)},
      {"cost", "owned_usd", units::to_usd(e.cost.owned())},
      {"cost", "owned_electricity_usd", units::to_usd(e.cost.owned_electricity)},
      {"cost", "owned_hardware_usd", units::to_usd(e.cost.owned_hardware)},
      {"cost", "purchase_usd", units::to_usd(e.cost_inputs.purchase)},
      {"cost", "usd_per_million_output_tokens", opt(inf && ev.tokens > 0, usd_per_million_tokens(e))},
      {"cost", "breakeven_days",
       opt(e.cost.breakeven.has_value(), units::to_days(e.cost.breakeven.value_or(Seconds(0))))},
      {"slo", "met", e.slo ? FieldValue(e.slo->met()) : FieldValue(Null{})},
      {"slo", "worst_ratio", opt(e.slo.has_value(), e.slo ? e.slo->worst : 0.0)},
      {"slo", "ttft_limit_s", slo_limit(&scenario::Slo::ttft)},
      {"slo", "tpot_limit_s", slo_limit(&scenario::Slo::tpot)},
      {"slo", "e2e_limit_s", slo_limit(&scenario::Slo::e2e)},
  };
  // The band of each figure that has one (uncertainty.cpp); null without a band.
  for (std::size_t i = 0; i < kBandCount; ++i) {
    const std::optional<Band> b = e.uncertainty ? e.uncertainty->bands[i] : std::nullopt;
    out.push_back({kBandKeys[i].section, "low", opt(b.has_value(), b ? b->low : 0.0)});
    out.push_back({kBandKeys[i].section, "high", opt(b.has_value(), b ? b->high : 0.0)});
  }
  out.push_back({"", "bottleneck", std::string(explain::to_string(e.diagnosis.bottleneck))});
  return out;
}

namespace {

// A figure of a job that ran: its time, rates, use, power, cost, SLO and their bands. Not the
// system's price, the GPU's own figures (utilization.dtype, peak_tflops_per_gpu), the memory, the model, the tokens
// to train, nor what a serving engine holds (batch, KV capacity and shortfall, replicas, requests).
bool as_if_run(const Field& f) {
  const std::string_view section = f.section;
  const std::string_view key = f.key;
  const std::string_view top = section.substr(0, section.find('.'));
  if (top == "utilization") {
    return key != "dtype" && key != "peak_tflops_per_gpu";
  }
  if (top == "cost") {
    return key != "purchase_usd";  // the price of the system, whether or not the job runs on it
  }
  if (top == "step" || top == "throughput" || top == "power" || top == "slo" || top == "uncertainty") {
    return true;
  }
  if (section == "training") {
    return key == "time_s" || key == "gpu_hours";
  }
  if (top == "inference") {
    return section != "inference" || !(key == "batch" || key == "kv_capacity_tokens" || key == "kv_shortfall_tokens" ||
                                       key == "replicas" || key == "requests");
  }
  return false;
}

std::string full_key(const Field& f) {
  return *f.section == '\0' ? std::string(f.key) : std::string(f.section) + "." + f.key;
}

}  // namespace

std::vector<Field> report_fields(const Estimate& e) {
  std::vector<Field> out = all_fields(e);
  if (!step::runs(e.eval)) {
    for (Field& f : out) {
      if (as_if_run(f) && !std::holds_alternative<std::string>(f.value)) {
        f.value = Null{};
      }
    }
  }
  return out;
}

std::optional<double> report_metric(const Estimate& e, std::string_view key) {
  for (const Field& f : all_fields(e)) {
    if (full_key(f) == key) {
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

std::vector<std::string> report_metric_keys() {
  static const Estimate probe{};
  std::vector<std::string> out;
  for (const Field& f : all_fields(probe)) {
    // Names and words are no figure; a band end is not a figure a benchmark measures.
    if (!std::holds_alternative<std::string>(f.value) && !std::holds_alternative<physics::IntraPath>(f.value) &&
        std::string_view(f.section).substr(0, 12) != "uncertainty.") {
      out.push_back(full_key(f));
    }
  }
  return out;
}

bool is_report_metric(std::string_view key) {
  static const std::vector<std::string> keys = report_metric_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

}  // namespace gpusim::answer
