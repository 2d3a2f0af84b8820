// The words of chart titles and axes (see report/chart_words.hpp).
#include "report/chart_words.hpp"

#include <string_view>

#include "report/format.hpp"

namespace gpusim::report {

namespace {

struct KeyWords {
  const char* key;
  const char* words;  // with the unit in parentheses
};

// Scenario keys a sweep varies, in words with their units (docs/scenarios.md defines each key).
constexpr KeyWords kScenarioKeys[] = {
    {"system.gpu", "GPU (model, unitless)"},
    {"system.gpus", "GPUs (count)"},
    {"system.gpus_per_node", "GPUs per node (count)"},
    {"system.power_limit", "power limit per GPU (W)"},
    {"system.oversubscription", "network oversubscription (ratio, unitless)"},
    {"training.global_batch", "global batch (sequences)"},
    {"training.micro_batch", "micro-batch per GPU (sequences)"},
    {"training.seq_len", "sequence length (tokens)"},
    {"training.tokens", "tokens to train (tokens)"},
    {"training.images", "images to train (images)"},
    {"training.precision", "training precision (format, unitless)"},
    {"training.recompute", "activation recomputation (mode, unitless)"},
    {"training.lora_rank", "LoRA rank (unitless)"},
    {"inference.batch", "batch (requests)"},
    {"inference.prompt_tokens", "prompt length (tokens)"},
    {"inference.output_tokens", "output length (tokens)"},
    {"inference.weight_precision", "weight precision (format, unitless)"},
    {"inference.kv_precision", "KV-cache precision (format, unitless)"},
    {"serving.rate", "arrival rate (requests/s)"},
    {"serving.concurrency", "requests in flight (requests)"},
    {"serving.max_seqs", "batch limit (sequences)"},
    {"serving.max_batched_tokens", "tokens per iteration limit (tokens)"},
    {"parallelism.tensor", "tensor-parallel degree (GPUs)"},
    {"parallelism.pipeline", "pipeline stages (count)"},
    {"parallelism.data", "data-parallel degree (replicas)"},
    {"parallelism.zero", "ZeRO stage (unitless)"},
    {"runtime.name", "runtime (name, unitless)"},
    {"cost.utilization", "utilization of the owned system (fraction, unitless)"},
    {"cost.electricity", "electricity price (USD/kWh)"},
    {"model.layers", "layers (count)"},
    {"model.hidden", "hidden width (units)"},
};

// Report keys (docs/report.md) charts are most often asked for.
constexpr KeyWords kReportKeys[] = {
    {"step.time_s", "step time (s)"},
    {"throughput.tokens_per_s", "throughput (tokens/s)"},
    {"throughput.tokens_per_s_per_gpu", "throughput per GPU (tokens/s)"},
    {"throughput.samples_per_s", "samples per second (1/s)"},
    {"utilization.mfu", "MFU (fraction, unitless)"},
    {"utilization.hfu", "HFU (fraction, unitless)"},
    {"utilization.model_tflops_per_gpu", "model FLOP/s per GPU (TFLOP/s)"},
    {"utilization.hardware_tflops_per_gpu", "hardware FLOP/s per GPU (TFLOP/s)"},
    {"memory.per_gpu_bytes", "memory per GPU (bytes)"},
    {"training.time_s", "time to train (s)"},
    {"training.gpu_hours", "GPU-hours (h)"},
    {"inference.time_to_first_token_s", "time to first token (s)"},
    {"inference.time_per_output_token_s", "time per output token (s)"},
    {"inference.request_latency_s", "request latency (s)"},
    {"inference.output_tokens_per_s", "output throughput (tokens/s)"},
    {"power.energy_kwh", "energy (kWh)"},
    {"cost.cloud_usd", "cloud cost (USD)"},
    {"cost.owned_usd", "owned cost (USD)"},
    {"cost.usd_per_million_output_tokens", "cloud cost per million output tokens (USD)"},
};

const char* lookup(const KeyWords* table, std::size_t n, std::string_view key) {
  for (std::size_t i = 0; i < n; ++i) {
    if (key == table[i].key) {
      return table[i].words;
    }
  }
  return nullptr;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// "max_batched_tokens" → "max batched tokens".
std::string spaced(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = c == '_' || c == '.' ? ' ' : c;
  }
  return out;
}

}  // namespace

RunParts run_parts(const answer::Estimate& e) {
  return {e.gpu_name, e.gpus, e.layout, e.runtime_name, units::to_string(e.eval.dtype)};
}

RunParts run_parts(const scenario::Scenario& sc) {
  const DType d = sc.job.training ? sc.job.training->precision : sc.job.inference->weight_precision;
  return {sc.system.gpu.name, sc.system.gpus, sc.layout, sc.runtime.name, units::to_string(d)};
}

std::string run_words(const RunParts& r) {
  std::string out;
  auto add = [&out](const std::string& part) {
    if (!part.empty()) {
      out += (out.empty() ? "" : " · ") + part;
    }
  };
  add(r.gpus > 0 ? strfmt("%d × %s", r.gpus, r.gpu.c_str()) : r.gpu);
  if (r.layout) {
    add(strfmt("TP %d × PP %d × DP %d", r.layout->tensor, r.layout->pipeline, r.layout->data));
  }
  add(r.runtime);
  add(r.precision);
  return out;
}

std::string key_words(const std::string& key, bool numeric) {
  if (const char* w = lookup(kScenarioKeys, std::size(kScenarioKeys), key)) {
    return w;
  }
  const std::string name = spaced(key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1));
  return name + (numeric ? " (in the scenario's unit)" : " (name, unitless)");
}

std::string key_name(const std::string& key) {
  const std::string w = key_words(key, true);
  return w.substr(0, w.find(" ("));
}

std::string metric_words(const std::string& key) {
  if (const char* w = lookup(kReportKeys, std::size(kReportKeys), key)) {
    return w;
  }
  // By the key's suffix, as docs/report.md names units: _s seconds, _w watts, _usd dollars.
  struct Suffix {
    const char* tail;
    const char* unit;
  };
  constexpr Suffix kSuffixes[] = {{"_per_s", "(1/s)"},     {"_s", "(s)"},         {"_w", "(W)"},
                                  {"_usd", "(USD)"},       {"_bytes", "(bytes)"}, {"_kwh", "(kWh)"},
                                  {"_tokens", "(tokens)"}, {"_kg", "(kg)"},       {"_hours", "(h)"}};
  for (const Suffix& s : kSuffixes) {
    if (ends_with(key, s.tail)) {
      return spaced(key.substr(0, key.size() - std::string_view(s.tail).size())) + " " + s.unit;
    }
  }
  return spaced(key) + " (unitless)";
}

}  // namespace gpusim::report
