// [parallelism] of a scenario: the parallel layout (tensor, pipeline, data, expert, context and
// ZeRO) and the rules that tie it to the model, the job and the GPU count, each reported with its
// failing numbers. Apart because these cross-key rules are the loader's densest.
#include "scenario/internal.hpp"

namespace gpusim::scenario::detail {

using parse::Need;
using parse::Range;
using parse::Reader;

namespace {

// The constraints of a parallel layout, each with its failing numbers.
void check_layout(Reader& r, const workload::ModelShape& m, const workload::Layout& p) {
  auto n = [](auto v) { return std::to_string(v); };
  if (m.images()) {
    for (const auto& [key, value] : {std::pair{"tensor", p.tensor}, std::pair{"pipeline", p.pipeline}}) {
      if (value > 1) {
        r.error(key, std::string(key) + " = " + n(value) +
                         ": an image model runs data-parallel only (tensor = pipeline = 1)");
      }
    }
    return;
  }
  if (p.tensor > 1 && m.heads % p.tensor != 0) {
    r.error("tensor", "tensor (" + n(p.tensor) + ") must divide the attention heads (" + n(m.heads) + ")");
  }
  // KV heads split over the tensor ranks, or replicated when there are fewer of them than ranks
  // (vLLM and TensorRT-LLM): either way one count must divide the other.
  if (p.tensor > 1 && m.heads % p.tensor == 0 && m.kv_heads > 0 && m.kv_heads % p.tensor != 0 &&
      p.tensor % m.kv_heads != 0) {
    r.error("tensor", "tensor (" + n(p.tensor) + ") must divide the KV heads (" + n(m.kv_heads) +
                          ") or be a multiple of them (KV heads are then replicated)");
  }
  if (p.tensor > 1 && m.ffn_hidden % p.tensor != 0) {
    r.error("tensor", "tensor (" + n(p.tensor) + ") must divide ffn_hidden (" + n(m.ffn_hidden) + ")");
  }
  const std::int64_t stages = static_cast<std::int64_t>(p.pipeline) * p.virtual_stages;
  if (stages > m.layers) {
    r.error("pipeline", "pipeline x virtual_stages = " + n(stages) + " exceeds the layers (" + n(m.layers) + ")");
  } else if (!p.uneven_stages && m.layers % stages != 0) {
    r.error("pipeline", "pipeline x virtual_stages = " + n(p.pipeline) + " x " + n(p.virtual_stages) + " = " +
                            n(stages) + " must divide the layers (" + n(m.layers) + "), or set uneven_stages = true");
  }
  if (p.sequence && p.tensor == 1) {
    r.error("sequence", "sequence parallelism splits along the tensor-parallel ranks: it needs tensor > 1");
  }
  if (p.virtual_stages > 1 && p.pipeline == 1) {
    r.error("virtual_stages", "virtual stages interleave pipeline stages: they need pipeline > 1");
  }
  if (p.expert > 1) {
    if (!m.moe) {
      r.error("expert", "expert parallelism (" + n(p.expert) + ") needs a mixture-of-experts model ([model.moe])");
    } else if (m.moe->experts % p.expert != 0) {
      r.error("expert", "expert (" + n(p.expert) + ") must divide the routed experts (" + n(m.moe->experts) + ")");
    } else if (p.data % p.expert != 0) {
      r.error("expert", "expert (" + n(p.expert) + ") must divide data (" + n(p.data) +
                            "): expert-parallel ranks are data-parallel ranks holding different experts");
    }
  }
}

// Context parallelism splits each training sequence into 2·c chunks (two per rank, one from each
// end, as Megatron balances causal work [megatron-context-parallel]) of a dense transformer.
void check_context(Reader& r, const Scenario& sc, const workload::Layout& p) {
  if (p.context == 1) {
    return;
  }
  const auto n = [](auto v) { return std::to_string(v); };
  if (!sc.job.training) {
    r.error("context",
            "context parallelism splits training sequences; a serving scenario splits with tensor and "
            "pipeline");
  } else if (sc.job.training->seq_len % (2 * p.context) != 0) {
    r.error("context", "2 x context = " + n(2 * p.context) + " must divide seq_len (" + n(sc.job.training->seq_len) +
                           "): each rank takes two chunks of every sequence");
  }
  if (sc.job.model.moe || sc.job.model.images()) {
    r.error("context", "context parallelism is modelled for dense transformers");
  }
}

}  // namespace

void read_parallel(Reader* r, Scenario& sc) {
  workload::Layout& p = sc.layout;
  const int gpus = sc.system.gpus;
  if (r == nullptr) {
    p.data = gpus;
    return;
  }
  p.tensor = count(*r, "tensor", Need::kOptional, 1, limits::kDevices).value_or(1);
  p.pipeline = count(*r, "pipeline", Need::kOptional, 1, limits::kDevices).value_or(1);
  p.zero = count(*r, "zero", Need::kOptional, 0, 3).value_or(0);
  p.sequence = r->boolean("sequence", Need::kOptional).value_or(false);
  p.virtual_stages = count(*r, "virtual_stages", Need::kOptional, 1, limits::kLayers).value_or(1);
  p.uneven_stages = r->boolean("uneven_stages", Need::kOptional).value_or(false);
  p.expert = count(*r, "expert", Need::kOptional, 1, limits::kDevices).value_or(1);
  p.expert_imbalance = r->number("expert_imbalance", Need::kOptional, Range::kPositive).value_or(1.0);
  if (p.expert_imbalance < 1.0) {
    r->error("expert_imbalance",
             "the busiest rank's tokens over the mean are at least 1 (got " + std::to_string(p.expert_imbalance) + ")");
  }
  p.context = count(*r, "context", Need::kOptional, 1, limits::kDevices).value_or(1);
  const std::optional<int> data = count(*r, "data", Need::kOptional, 1, limits::kDevices);
  if (data) {
    p.data = *data;
  }
  check_parallel(*r, sc, data.has_value());
  r->finish();
}

void check_parallel(Reader& r, Scenario& sc, bool data_given) {
  workload::Layout& p = sc.layout;
  const int gpus = sc.system.gpus;
  const std::int64_t model_parallel = static_cast<std::int64_t>(p.tensor) * p.pipeline * p.context;
  if (!data_given) {
    p.data = static_cast<int>(gpus / std::max<std::int64_t>(1, model_parallel));
  }
  check_layout(r, sc.job.model, p);
  check_context(r, sc, p);
  const std::int64_t product = model_parallel * p.data;
  if (product != gpus) {
    const std::string context = p.context > 1 ? " x context" : "";
    const std::string context_n = p.context > 1 ? " x " + std::to_string(p.context) : "";
    r.error("data", "tensor x pipeline" + context + " x data = " + std::to_string(p.tensor) + " x " +
                        std::to_string(p.pipeline) + context_n + " x " + std::to_string(p.data) + " = " +
                        std::to_string(product) + ", but system.gpus = " + std::to_string(gpus));
  }
}

}  // namespace gpusim::scenario::detail
