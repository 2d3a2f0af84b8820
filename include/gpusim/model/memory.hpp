// Memory per GPU (DESIGN §6).
// Training, mixed precision (Rajbhandari et al. 2020, ZeRO §3): 16-bit weights 2N, 16-bit
// gradients 2N, fp32 optimizer states K·N (AdamW: master + m + v = 12N; SGD with momentum 8N;
// Adafactor 4N), i.e. 16 bytes per parameter for AdamW; fp32/tf32 training: 4N + 4N + 8N.
// ZeRO-1 shards the optimizer states over the data-parallel ranks, ZeRO-2 also the gradients,
// ZeRO-3 also the weights. Tensor (t) and pipeline (p) parallelism give each rank N/(t·p).
// Pipeline: the first stage holds min(p, m) micro-batches of activations in flight (1F1B).
// Activations per layer (Korthikanti et al. 2022, generalised to GQA and swiglu, no dropout):
// bytes = e·s·b·(6h + 2·kv_dim + ffn_in + ffn) + (without flash attention) e·a·s²·b; full
// recompute keeps only the layer inputs e·s·b·h plus one layer's working set. The logits and
// their gradient (2·e·s·b·V) are live at the loss.
// Inference: weights N·w, KV cache 2·L·kv_dim·(prompt + output)·batch·kv_bytes.
// Plus the CUDA context/workspace reserve and allocator fragmentation from the spec.
#pragma once

#include "gpusim/workload/scenario.hpp"

namespace gpusim {

struct MemoryBreakdown {
  Bytes weights;
  Bytes gradients;
  Bytes optimizer;
  Bytes activations;
  Bytes kv_cache;
  Bytes other;  // context, workspaces, fragmentation
  Bytes capacity;
  [[nodiscard]] Bytes total() const { return weights + gradients + optimizer + activations + kv_cache + other; }
  [[nodiscard]] bool fits() const { return total() <= capacity; }
};

MemoryBreakdown training_memory(const Scenario& sc);
// The same for any layout (the planner evaluates many without building scenarios).
MemoryBreakdown training_memory(const ModelShape& m, const TrainingConfig& t, const ParallelConfig& par,
                                const GpuSpec& g);
MemoryBreakdown inference_memory(const Scenario& sc);
// Activation bytes of one layer for one micro-batch on one tensor-parallel rank (Korthikanti et
// al. 2022: without SP s·b·h·(10 + 24/t) with dropout; with SP everything divides by t).
Bytes layer_activation_bytes(const ModelShape& m, double seq, double micro_batch, double elem_bytes, bool flash,
                             Recompute recompute, double tp = 1.0, bool sp = false);

}  // namespace gpusim
