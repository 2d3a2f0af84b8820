// The scenario format's tables and keys (documented one by one in docs/scenarios.md). The loader
// reads exactly these; a test loads a scenario that uses every one of them, and another checks
// that docs/scenarios.md documents each.
#include "gpusim/scenario.hpp"

namespace gpusim::scenario {

const std::vector<TableKeys>& schema() {
  static const std::vector<TableKeys> tables = {
      {"",
       {"name", "system", "model", "training", "inference", "serving", "slo", "parallelism", "runtime", "input",
        "cost"}},
      {"system",
       {"gpu", "gpus", "gpus_per_node", "nics_per_node", "oversubscription", "intra_node", "inter_node", "power_limit",
        "pcie_lanes", "collectives", "host"}},
      {"model",
       {"preset", "params", "hf_config",       "name",   "layers", "hidden", "heads",    "kv_heads", "ffn_hidden",
        "ffn",    "vocab",  "tied_embeddings", "causal", "norm",   "bias",   "position", "max_seq",  "dropout",
        "moe",    "mla"}},
      {"model.moe",
       {"experts", "top_k", "expert_ffn_hidden", "shared_ffn_hidden", "dense_layers", "every", "capacity_factor"}},
      {"model.mla", {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}},
      {"training",
       {"tokens", "images", "seq_len", "global_batch", "micro_batch", "precision", "optimizer", "recompute",
        "flash_attention", "cuda_graphs", "method", "lora_rank", "lora_targets", "offload_optimizer", "offload_params",
        "offload_activations"}},
      {"inference", {"batch", "prompt_tokens", "output_tokens", "weight_precision", "kv_precision", "cuda_graphs"}},
      {"serving",
       {"arrival", "rate", "concurrency", "requests", "seed", "length_spread", "scheduler", "max_seqs",
        "max_batched_tokens", "chunked_prefill", "kv_block", "memory_fraction", "memory_basis", "reserve_output",
        "allreduce_max", "allreduce_one_shot_max", "allreduce_latency", "step_overhead", "overlap_scheduler"}},
      {"slo", {"ttft", "tpot", "e2e", "percentile"}},
      {"parallelism",
       {"tensor", "pipeline", "data", "zero", "sequence", "virtual_stages", "uneven_stages", "expert",
        "expert_imbalance", "context"}},
      {"runtime",
       {"name", "launch", "dispatch", "autocast", "composite_ops", "activation_layout", "attention", "optimizer",
        "quantized_matmul", "fusion", "overlap", "efficiency"}},
      {"runtime.fusion",
       {"norm_residual", "bias_activation", "rope", "cross_entropy", "bias_grad", "norm_backward", "projections"}},
      {"runtime.overlap", {"data_parallel", "parameter_gather", "tensor_parallel", "pipeline", "expert_parallel"}},
      {"runtime.efficiency", {"quantized", "remainder", "gemv_inflight", "mmq"}},
      {"input", {"sample_bytes", "cpu_time_per_sample", "workers", "storage_bandwidth", "pinned_memory"}},
      {"cost",
       {"electricity", "utilization", "cloud_gpu", "cloud_rate", "purchase", "host_power", "pue", "lifetime",
        "carbon_intensity"}},
  };
  return tables;
}

}  // namespace gpusim::scenario
