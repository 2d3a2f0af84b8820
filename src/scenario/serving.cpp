// [inference] and [serving] of a scenario (keys and defaults in docs/scenarios.md): the requests'
// shapes and formats, the load on the deployment, and the engine settings a scenario may change.
#include "scenario/internal.hpp"

namespace gpusim::scenario {

using base::strfmt;
using parse::Need;
using parse::Range;
using parse::Reader;
using units::Dim;

namespace {

// Requests simulated when a continuous engine's scenario states no count: enough for the
// percentiles of a few hundred requests in flight to settle (assumption).
constexpr std::int64_t kDefaultRequests = 1000;

// Stored weight and KV formats: int8/int4 weights are dequantized and multiplied in fp16.
double stored_bytes(DType d) { return units::bytes_per_element(d); }

}  // namespace

// Weight formats by their storage: bits per weight including block scales, and the datatype the
// GEMMs compute in (a weight-only format is unpacked to fp16).
const std::vector<WeightFormat>& weight_formats() {
  static const std::vector<WeightFormat> formats = {
      {"fp16", 16, DType::kFp16},
      {"bf16", 16, DType::kBf16},
      {"fp8", 8, DType::kFp8},
      {"int8", 8, DType::kFp16},  // plain per-channel int8 (scales negligible)
      {"int4", 4, DType::kFp16},  // plain 4-bit (scales negligible)
      // ggml block formats [ggml-quant-formats]: block_q8_0 = fp16 scale + 32 int8 = 34 B per 32
      // weights; block_q4_0 = fp16 scale + 16 B per 32 weights
      {"q8_0", 34.0 * 8 / 32, DType::kFp16, true},
      {"q4_0", 18.0 * 8 / 32, DType::kFp16, true},
      // Q4_K_M is a per-tensor mix (Q4_K, with Q6_K for the output head and some V/FFN-down
      // layers): llama-bench prints 4.58 GiB for Llama-3-8B (8.03 B weights, 4.90 bits) and 39.59
      // GiB for Llama-3-70B (70.55 B, 4.82 bits) [xiongjiedai-llm-inference-bench]; their mean
      {"q4_k_m", 4.86, DType::kFp16, true},
      // AWQ / GPTQ at group 128: 4 bits + an fp16 scale and a 4-bit zero per 128 weights [awq-2023]
      {"awq-int4", 4.0 + 16.0 / 128 + 4.0 / 128, DType::kFp16},
      {"gptq-int4", 4.0 + 16.0 / 128 + 4.0 / 128, DType::kFp16},
      // Block-scaled fp4 (E2M1) run by Blackwell's fp4 tensor cores: NVFP4 has an fp8 (E4M3) scale
      // per 16 values [nvidia-nvfp4], MXFP4 an 8-bit power-of-two scale per 32 [ocp-mx-spec].
      {"nvfp4", 4.0 + 8.0 / 16, DType::kFp4},
      {"mxfp4", 4.0 + 8.0 / 32, DType::kFp4},
  };
  return formats;
}

namespace {
const WeightFormat* find_format(std::string_view name) {
  for (const WeightFormat& w : weight_formats()) {
    if (w.name == name) {
      return &w;
    }
  }
  return nullptr;
}

std::string format_names() {
  std::string names;
  for (const WeightFormat& w : weight_formats()) {
    names += std::string(names.empty() ? "" : ", ") + "\"" + std::string(w.name) + "\"";
  }
  return names;
}

void apply_format(workload::Inference& inf, const WeightFormat& f) {
  inf.weight_format = std::string(f.name);
  inf.weight_bytes = f.bits / 8.0;
  inf.weight_precision = f.compute;
}
}  // namespace

Scenario with_weight_format(const Scenario& sc, std::string_view format) {
  const WeightFormat* f = find_format(format);
  if (f == nullptr) {
    throw InputError(
        {Diagnostic{SourcePos{"--formats"}, "weight_precision",
                    "unknown weight format \"" + std::string(format) + "\"; expected one of " + format_names()}});
  }
  if (!sc.system.gpu.supports(f->compute)) {
    throw InputError({Diagnostic{
        SourcePos{"--formats"}, "weight_precision",
        "the " + sc.system.gpu.name + " has no " + std::string(units::to_string(f->compute)) + " support"}});
  }
  Scenario out = sc;
  apply_format(*out.job.inference, *f);
  return out;
}

namespace detail {

void read_inference(Reader& r, Scenario& sc, RuntimeOverrides& overrides) {
  workload::Inference inf;
  inf.batch_given = r.has("batch");
  if (r.has("batch") && r.string_value_is("batch", "max")) {
    r.allow({"batch"});
    inf.batch_max = true;  // resolved against the memory model by the evaluator
  } else {
    inf.batch = r.integer("batch", Need::kOptional, 1, limits::kBatch).value_or(1);
  }
  inf.prompt_tokens = r.integer("prompt_tokens", Need::kOptional, 1, limits::kSequence).value_or(512);
  inf.output_tokens = r.integer("output_tokens", Need::kOptional, 1, limits::kSequence).value_or(128);
  overrides.cuda_graphs = r.boolean("cuda_graphs", Need::kOptional);
  if (auto v = r.string("weight_precision", Need::kOptional)) {
    const WeightFormat* f = find_format(*v);
    if (f == nullptr) {
      r.error("weight_precision", "unknown weight format \"" + *v + "\"; expected one of " + format_names());
    } else {
      apply_format(inf, *f);
      const bool low_float = f->compute == DType::kFp8 || f->compute == DType::kFp4;
      if (low_float && !sc.system.gpu.id.empty() && !sc.system.gpu.supports(f->compute)) {
        r.error("weight_precision", "the " + sc.system.gpu.name + " has no " + units::to_string(f->compute) +
                                        " support (weight format \"" + *v + "\")");
      }
    }
  }
  if (auto v = r.choice("kv_precision", units::kDTypeNames, Need::kOptional,
                        {DType::kFp16, DType::kBf16, DType::kFp8, DType::kInt8, DType::kFp4})) {
    inf.kv_bytes = *v == DType::kFp4 ? workload::kNvfp4KvBytes : stored_bytes(*v);
    // kv_precision = "fp4" is an NVFP4 cache, dequantized to fp8 before attention on Blackwell
    // [nvidia-nvfp4-kv-cache]: a GPU without fp4 support has no engine that stores one.
    if (*v == DType::kFp4 && !sc.system.gpu.id.empty() && !sc.system.gpu.supports(DType::kFp4)) {
      r.error("kv_precision", "the " + sc.system.gpu.name + " (" + sc.system.gpu.id +
                                  ") has no fp4 support, so kv_precision = \"fp4\" (NVFP4) cannot run on it; "
                                  "on this GPU use one of \"fp16\", \"bf16\", \"fp8\", \"int8\" (fp4 needs a "
                                  "Blackwell GPU: B200, GB200, RTX 5090)");
    }
  }
  // A request's positions run to prompt + output; past the model's context (max_position_embeddings)
  // there are none to attend with, so no engine serves it as the model stands.
  const workload::ModelShape& m = sc.job.model;
  // (An image model's inference is one pass over each image: it has no prompt or output.)
  if (!m.images() && m.max_seq > 0 && inf.prompt_tokens + inf.output_tokens > m.max_seq) {
    r.error("prompt_tokens",
            strfmt("prompt_tokens + output_tokens = %lld exceeds the model's context of %lld tokens (model.max_seq); "
                   "set model.max_seq if the model was extended",
                   static_cast<long long>(inf.prompt_tokens + inf.output_tokens), static_cast<long long>(m.max_seq)));
  }
  r.finish();
  sc.job.inference = inf;
}

void read_serving(Reader* r, const catalog::Catalog& cat, Scenario& sc) {
  workload::Inference& inf = *sc.job.inference;
  workload::ServingEngine& e = sc.runtime.serving;
  workload::Load& load = inf.load;
  if (r != nullptr) {
    parse::read_serving_engine(*r, e, Need::kOptional);
    if (auto v = r->choice("arrival", workload::kArrivalNames, Need::kOptional)) {
      load.arrival = *v;
    }
    if (auto v = r->quantity("rate", Dim::kFrequency, Need::kOptional)) {
      load.rate = *v;
    }
    if (auto v = count(*r, "concurrency", Need::kOptional, 1, limits::kBatch)) {
      load.concurrency = *v;
    }
    if (auto v = r->integer("requests", Need::kOptional, 1, limits::kRequests)) {
      load.requests = *v;
    }
    if (auto v = r->integer("seed", Need::kOptional, 0, INT64_MAX)) {
      load.seed = static_cast<std::uint64_t>(*v);
    }
    if (auto v = r->number("length_spread", Need::kOptional, Range::kNonNegative)) {
      load.length_spread = *v;
      if (*v >= 1) {
        r->error("length_spread",
                 strfmt("lengths are drawn from mean x [1 - s, 1 + s]: s must be below 1, got %g", *v));
      }
    }
    // Output lengths may spread where prompts do not: a client that sends fixed-length prompts but lets
    // requests stop at the end-of-sequence token before their max_tokens.
    load.output_spread = load.length_spread;
    if (auto v = r->number("output_spread", Need::kOptional, Range::kNonNegative)) {
      load.output_spread = *v;
      if (*v >= 1) {
        r->error("output_spread",
                 strfmt("output lengths are drawn from mean x [1 - s, 1 + s]: s must be below 1, got %g", *v));
      }
    }
    if (load.arrival == workload::Arrival::kPoisson && !r->has("rate")) {
      r->error("rate", "arrival = \"poisson\" needs a request rate, e.g. rate = \"10 req/s\"");
    }
    if (load.arrival == workload::Arrival::kConcurrency && load.concurrency <= 0) {
      r->error("concurrency",
               "arrival = \"concurrency\" needs the number of requests in flight, e.g. concurrency = 64");
    }
    if (load.arrival != workload::Arrival::kPoisson && r->has("rate")) {
      r->error("rate", "a rate applies to arrival = \"poisson\" only");
    }
    if (load.arrival != workload::Arrival::kConcurrency && r->has("concurrency")) {
      r->error("concurrency", "a concurrency applies to arrival = \"concurrency\" only");
    }
    if (auto v = r->integer("prefix_tokens", Need::kOptional, 0, limits::kSequence)) {
      inf.prefix.tokens = *v;
      if (*v >= inf.prompt_tokens) {
        r->error("prefix_tokens", strfmt("a shared prefix of %lld tokens leaves nothing of the %lld-token prompts to "
                                         "prefill: it must be shorter than inference.prompt_tokens",
                                         static_cast<long long>(*v), static_cast<long long>(inf.prompt_tokens)));
      }
    }
    if (auto v = r->number("prefix_hit_rate", Need::kOptional, Range::kNonNegative)) {
      inf.prefix.hit_rate = *v;
      if (*v > 1) {
        r->error("prefix_hit_rate", strfmt("a share of requests: 0 to 1, got %g", *v));
      }
    }
    if (r->has("prefix_hit_rate") != r->has("prefix_tokens")) {
      r->error(r->has("prefix_tokens") ? "prefix_tokens" : "prefix_hit_rate",
               "prefix caching needs both prefix_tokens (the shared prefix) and prefix_hit_rate (the share of requests "
               "that find it cached)");
    }
    if (auto sp = r->table("speculative", Need::kOptional)) {
      read_speculative(*sp, cat, sc);
    }
    if (auto dg = r->table("disaggregated", Need::kOptional)) {
      read_disaggregated(*dg, sc);
    }
    const auto longest_prompt =
        static_cast<std::int64_t>(static_cast<double>(inf.prompt_tokens) * (1.0 + load.length_spread));
    if (e.scheduler == workload::Scheduler::kContinuous && !e.chunked_prefill &&
        longest_prompt > e.max_batched_tokens) {
      r->error("max_batched_tokens",
               strfmt("a prompt of up to %lld tokens never fits a budget of %lld tokens per iteration without "
                      "chunked prefill: raise max_batched_tokens or set chunked_prefill = true",
                      static_cast<long long>(longest_prompt), static_cast<long long>(e.max_batched_tokens)));
    }
    r->finish();
  }
  // A continuous engine takes [inference] batch as its cap on sequences in flight.
  if (e.scheduler == workload::Scheduler::kContinuous && inf.batch_given && !inf.batch_max) {
    e.max_seqs = inf.batch;
  }
  if (load.requests == 0) {
    load.requests = e.scheduler == workload::Scheduler::kStatic && load.arrival == workload::Arrival::kOffline
                        ? 0  // one batch per replica: resolved with the batch by the evaluator
                        : kDefaultRequests;
  }
}

void read_slo(parse::Reader& r, Scenario& sc) {
  Slo slo;
  auto limit = [&](std::string_view key) -> std::optional<Seconds> {
    if (auto v = r.quantity(key, Dim::kTime, Need::kOptional)) {
      return Seconds(*v);
    }
    return std::nullopt;
  };
  slo.ttft = limit("ttft");
  slo.tpot = limit("tpot");
  slo.e2e = limit("e2e");
  if (auto v = r.choice("percentile", kPercentileNames, Need::kOptional)) {
    slo.percentile = *v;
  }
  if (!r.has("ttft") && !r.has("tpot") && !r.has("e2e")) {
    r.error("ttft", "[slo] needs at least one limit: ttft, tpot or e2e (e.g. ttft = \"300 ms\")");
  }
  r.finish();
  sc.slo = slo;
}

}  // namespace detail
}  // namespace gpusim::scenario
