// [serving.disaggregated] of a scenario (keys in docs/scenarios.md): the prefill and decode pools of
// a disaggregated deployment, their replicas and tensor-parallel widths, which together take every
// GPU of the system.
#include "scenario/internal.hpp"

namespace gpusim::scenario::detail {

using base::strfmt;
using parse::Need;
using parse::Reader;

namespace {

// The widest tensor-parallel group a pool may have: an NVLink domain of 8 GPUs holds a group in
// every modelled system but NVL72 (assumption: wider groups are not searched or served).
constexpr std::int64_t kMaxPoolTensor = 72;
constexpr std::int64_t kMaxReplicas = 4096;

// Whether the model's heads, KV heads and FFN split over `tp` ranks (the layout rules).
std::string split_problem(const workload::ModelShape& m, int tp) {
  if (tp <= 1) {
    return "";
  }
  if (m.heads % tp != 0) {
    return strfmt("%d must divide the attention heads (%lld)", tp, static_cast<long long>(m.heads));
  }
  if (m.kv_heads > 0 && m.kv_heads % tp != 0 && tp % m.kv_heads != 0) {
    return strfmt("%d must divide the KV heads (%lld) or be a multiple of them", tp,
                  static_cast<long long>(m.kv_heads));
  }
  if (m.ffn_hidden % tp != 0) {
    return strfmt("%d must divide ffn_hidden (%lld)", tp, static_cast<long long>(m.ffn_hidden));
  }
  return "";
}

}  // namespace

void read_disaggregated(Reader& r, Scenario& sc) {
  workload::Disaggregation& d = sc.job.inference->disaggregated;
  const auto prefill = count(r, "prefill_replicas", Need::kRequired, 1, kMaxReplicas);
  const auto decode = count(r, "decode_replicas", Need::kRequired, 1, kMaxReplicas);
  // Each pool's width defaults to the scenario's tensor-parallel width.
  const int tensor = sc.layout.tensor;
  const int prefill_tensor = count(r, "prefill_tensor", Need::kOptional, 1, kMaxPoolTensor).value_or(tensor);
  const int decode_tensor = count(r, "decode_tensor", Need::kOptional, 1, kMaxPoolTensor).value_or(tensor);
  if (!prefill || !decode) {
    r.finish();
    return;
  }
  const workload::ModelShape& m = sc.job.model;
  if (m.images()) {
    r.error("prefill_replicas", "an image model has no prompt and output to split between pools");
  }
  for (const auto& [key, tp] :
       {std::pair{"prefill_tensor", prefill_tensor}, std::pair{"decode_tensor", decode_tensor}}) {
    if (const std::string problem = split_problem(m, tp); !problem.empty()) {
      r.error(key, std::string(key) + " " + problem);
    }
  }
  d.prefill = *prefill;
  d.decode = *decode;
  d.prefill_tensor = prefill_tensor;
  d.decode_tensor = decode_tensor;
  if (d.gpus() != sc.system.gpus) {
    r.error("decode_replicas",
            strfmt("the pools take %d x %d + %d x %d = %d GPUs; the system has %d (system.gpus): they must be equal",
                   d.prefill, d.prefill_tensor, d.decode, d.decode_tensor, d.gpus(), sc.system.gpus));
  }
  if (sc.layout.pipeline > 1) {
    r.error("prefill_replicas", "the pools are tensor-parallel replicas: set parallelism.pipeline = 1");
  }
  const workload::Load& load = sc.job.inference->load;
  if (load.arrival == workload::Arrival::kConcurrency) {
    r.error("prefill_replicas",
            "disaggregated pools are simulated under an open load (arrival = \"poisson\" or \"offline\"): a closed "
            "loop releases each request when another ends in the decode pool, coupling the pools");
  }
  if (sc.runtime.serving.scheduler != workload::Scheduler::kContinuous) {
    r.error("prefill_replicas", "disaggregated pools need a continuous-batching engine (serving.scheduler)");
  }
  r.finish();
}

}  // namespace gpusim::scenario::detail
