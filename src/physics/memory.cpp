// Memory per GPU.
// Training, mixed precision [rajbhandari-2020, §3]: 16-bit weights 2N, 16-bit gradients 2N, fp32
// optimizer states K·N (AdamW: master + m + v = 12N; SGD with momentum 8N; Adafactor 4N), i.e. 16
// bytes per parameter for AdamW; fp32/tf32 training: 4N + 4N + 8N; pure 16-bit training (no master
// copy) 2N + 2N + 4N (the bytes per copy: workload::parameter_bytes). ZeRO-1 shards the optimizer
// states over the data-parallel ranks, ZeRO-2 also the gradients, ZeRO-3 also the weights (and
// keeps two gathered layers). Tensor (t) and pipeline (p) parallelism give each rank N/(t·p).
// Pipeline: the first stage holds min(p, m) micro-batches of activations in flight (1F1B).
// Activations per layer [korthikanti-2022], generalised to GQA and swiglu, no dropout:
// bytes = e·s·b·(6h + 2·kv_dim + ffn_in + ffn) + (without flash attention) e·a·s²·b; with tensor
// parallelism the norms' 4h stay replicated unless sequence parallelism splits them. Full
// recompute keeps only the layer inputs e·s·b·h; one layer's working set is live while that layer
// is recomputed and back-propagated, after the loss has freed the logits, so the peak is the
// inputs plus the larger of the two. The logits (e·s·b·V) and their gradient are live at the loss;
// a loss computed in c chunks holds one chunk's gradient at a time [torchtune-chunked-loss].
// Fine-tuning: LoRA's frozen weights hold no gradients or optimizer states [hu-lora-2021]; QLoRA
// stores the frozen block matrices in NF4 [dettmers-qlora-2023] and dequantizes one matrix at a
// time into a 16-bit buffer (part of the recomputed layer's working set); 8-bit Adam keeps its
// moments in a byte each [dettmers-8bit-optim-2022]; offload moves states, gradients, parameters or
// saved activations to the host [ren-zero-offload-2021, rajbhandari-zero-infinity-2021]. A LoRA
// adapter's own activations (x·A, s·b·r per adapted matrix) are r/h of its layer's and not counted.
// Paged optimizers keep the states in CUDA unified memory: what the GPU has left after the rest
// stays resident, the remainder is evicted to the host [bnb-optimizers-docs, dettmers-qlora-2023].
// The optimizer step in the backward pass frees each gradient after its step: one tensor's
// gradient is live, or one layer's when FSDP reduce-scatters a layer's at once [torchtune-memory-docs].
// Mixtures of experts: a MoE layer's FFN activations are its tokens' k permuted copies and the
// experts' widths for them; each rank holds its 1/ep of the routed experts (workload::rank_params).
// Inference: weights N·w (all experts), KV cache 2·L·kv_dim·(prompt + output)·batch·kv_bytes (MLA:
// L·(kv_lora_rank + qk_rope_head_dim) per token).
// Plus the CUDA context/workspace reserve and allocator fragmentation from the spec.
#include <algorithm>
#include <cmath>

#include "gpusim/physics.hpp"

namespace gpusim::physics {

using hardware::GpuSpec;
using workload::FfnKind;
using workload::ModelShape;
using workload::Recompute;

Bytes layer_activation_bytes(const ModelShape& m, double seq, double micro_batch, double e, bool flash,
                             Recompute recompute, double tp, bool sp) {
  const double h = static_cast<double>(m.hidden);
  const double sb = seq * micro_batch;
  const double replicated_split = sp ? tp : 1.0;  // sequence parallelism splits what TP replicates
  if (recompute == Recompute::kFull) {
    return Bytes(e * sb * h / replicated_split);  // only the layer input is kept
  }
  const double f = static_cast<double>(m.ffn_hidden);
  const double f_in = m.ffn == FfnKind::kSwiglu ? 2.0 * f : f;
  if (recompute == Recompute::kOp) {
    // The layer input, the attention output and every second matmul output (QKV, attention out,
    // FFN up, FFN down: half of them) are kept; with flash attention its log-sum-exp too.
    const double matmuls = 0.5 * ((h + 2.0 * static_cast<double>(m.kv_dim())) / tp + h / replicated_split + f_in / tp +
                                  h / replicated_split);
    double bytes = e * sb * (h / replicated_split + h / tp + matmuls);
    if (flash) {
      bytes += 4.0 * sb * static_cast<double>(m.heads) / tp;
    } else {
      bytes += e * static_cast<double>(m.heads) / tp * seq * seq * micro_batch;  // softmax output
    }
    return Bytes(bytes);
  }
  // Replicated under tensor parallelism: the two norms' inputs and outputs (4h). Split across the
  // tensor ranks: Q/K/V (h + 2 kv), the attention output (h) and the FFN input and output.
  const double replicated = 4.0 * h;
  double ffn = f_in + f;
  if (m.moe_share() > 0) {
    // The mean layer: a MoE layer keeps each token's k permuted copies in and out (2h each) and the
    // experts' f_in + f for them (times the capacity factor when experts compute padded rows), and
    // the shared experts' f_in + f.
    const workload::MoeShape& x = *m.moe;
    const double share = m.moe_share();
    const double fe = static_cast<double>(x.expert_ffn_hidden);
    const double fs = static_cast<double>(x.shared_ffn_hidden);
    const double swiglu = m.ffn == FfnKind::kSwiglu ? 2.0 : 1.0;
    const double rows = static_cast<double>(x.top_k) * (x.capacity_factor > 0 ? x.capacity_factor : 1.0);
    const double moe = rows * (2.0 * h + (swiglu + 1.0) * fe) + (swiglu + 1.0) * fs;
    ffn = (1.0 - share) * ffn + share * moe;
  }
  const double split = 2.0 * h + 2.0 * static_cast<double>(m.attention_kv_width()) + ffn;
  double bytes = e * sb * (replicated / replicated_split + split / tp);
  const double heads = static_cast<double>(m.heads) / tp;
  if (flash) {
    bytes += 4.0 * sb * heads;  // fp32 log-sum-exp per row
  } else if (recompute != Recompute::kSelective) {
    bytes += e * heads * seq * seq * micro_batch;  // softmax output
  }
  return Bytes(bytes);
}

namespace {

// Gradient bytes live at once when each parameter's step runs in the backward pass: the largest
// tensor's (the embedding or output head, or a block matrix; an adapter matrix under LoRA), or,
// when ZeRO-2/3 reduce-scatters a layer's gradients together, one layer's unsharded ones.
Bytes in_backward_gradients(const ModelShape& m, const workload::Training& t, const workload::ModelCounts& counts,
                            const workload::Layout& par, double g_bytes) {
  const double tp = par.tensor;
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn_hidden);
  if (t.adapters()) {
    return Bytes(static_cast<double>(t.lora_rank) * std::max(h, f) * g_bytes);
  }
  const double largest = std::max({static_cast<double>(m.vocab) * h, h * f, h * h}) / tp;
  if (par.zero >= 2 && par.replicas() > 1) {
    return Bytes(std::max(counts.params.per_layer / tp, largest) * g_bytes);
  }
  return Bytes(largest * g_bytes);
}

}  // namespace

MemoryBreakdown training_memory(const ModelShape& m, const workload::Training& t, const workload::Layout& par,
                                const workload::Runtime& rt, const GpuSpec& g) {
  return training_memory(m, t, workload::model_counts(m, t), par, rt, g);
}

MemoryBreakdown training_memory(const ModelShape& m, const workload::Training& t, const workload::ModelCounts& counts,
                                const workload::Layout& par, const workload::Runtime& rt, const GpuSpec& g) {
  const double tp = par.tensor;
  const double pp = par.pipeline;
  const workload::ParamRoles& roles = counts.roles;
  const double n = roles.trainable / (tp * pp);  // updated parameters of one rank's shard
  // The routed experts split over the expert-parallel ranks (full training of a mixture of experts).
  const double n_rank = t.adapters() ? n : workload::rank_params(counts, par);
  const bool wide = units::is_wide(t.precision);
  // Bytes per updated parameter: under autocast with fp32 parameters the model itself is the fp32
  // master copy (weights and gradients 4 bytes, the optimizer only its moments); pure 16-bit
  // training keeps no master copy.
  const workload::ParameterBytes pb = workload::precision_policy(t, par, rt);
  const double w_bytes = pb.weight;
  const double g_bytes = pb.gradient;
  const double o_bytes = pb.optimizer();
  // Frozen weights (LoRA) stay in the training precision's storage width; QLoRA packs the block
  // matrices in NF4.
  const double frozen_e = wide ? 4.0 : 2.0;
  const double frozen_linear_bytes = t.method == workload::Method::kQlora ? workload::kNf4BytesPerParam : frozen_e;
  const double frozen = (roles.frozen_linear * frozen_linear_bytes + roles.frozen_other * frozen_e) / (tp * pp);
  const double dp = par.replicas();  // ranks holding the same weights (data x context)
  const int zero = par.zero;
  MemoryBreakdown mb;
  mb.capacity = g.memory_capacity;
  const Bytes shard_weights(((zero >= 3 ? n : n_rank) * w_bytes + frozen) / (zero >= 3 ? dp : 1.0));
  const Bytes gathered(2.0 * (counts.params.per_layer / tp) *
                       (t.adapters() ? frozen_linear_bytes : w_bytes));  // the layer computed and the one prefetched
  const Bytes grads((zero >= 2 ? n : n_rank) * g_bytes / (zero >= 2 ? dp : 1.0));
  const Bytes states((zero >= 1 ? n : n_rank) * o_bytes / (zero >= 1 ? dp : 1.0));
  mb.weights = shard_weights;
  mb.gradients = t.optimizer_in_backward ? std::min(grads, in_backward_gradients(m, t, counts, par, g_bytes)) : grads;
  mb.optimizer = states;
  if (zero >= 3 && (dp > 1 || t.offload_params != workload::Offload::kNone)) {
    mb.weights += gathered;
  }
  // ZeRO-Offload [ren-zero-offload-2021]: the optimizer states, the fp32 master copy and fp32
  // gradients live in host memory (or on NVMe, ZeRO-Infinity [rajbhandari-zero-infinity-2021]);
  // the GPU streams its 16-bit gradients out bucket by bucket: two layers' worth stay on it.
  auto park = [&mb](workload::Offload where, Bytes b) { (where == workload::Offload::kNvme ? mb.nvme : mb.host) += b; };
  if (t.offload_optimizer != workload::Offload::kNone) {
    const double layers = std::max(1.0, std::ceil(static_cast<double>(m.layers) / pp));
    mb.optimizer = Bytes(0);
    mb.gradients = std::min(grads, Bytes(2.0 * n / layers * g_bytes));
    park(t.offload_optimizer, states);
    mb.host += Bytes(n * 4.0 / (zero >= 2 ? dp : 1.0));  // fp32 gradients for the CPU optimizer
  }
  if (t.offload_params != workload::Offload::kNone) {
    mb.weights -= shard_weights;
    park(t.offload_params, shard_weights);
  }

  const double e = wide ? 4.0 : 2.0;
  const double s = static_cast<double>(t.seq_len) / par.context;  // a rank's share of each sequence
  const double b = static_cast<double>(par.micro_batch);
  const double layers = std::ceil(static_cast<double>(m.layers) / pp);
  const double micro = static_cast<double>(t.global_batch) / (b * static_cast<double>(par.data));
  // 1F1B: the first stage holds the activations of up to p micro-batches; the last stage one,
  // plus the logits and their gradient at the loss. The larger of the two is the GPU's need.
  const double in_flight = std::min(pp, micro);
  const Bytes per_layer = layer_activation_bytes(m, s, b, e, rt.flash_attention(), par.recompute, tp, par.sequence);
  auto saved = [&](double micro_batches) { return per_layer * (layers * micro_batches); };
  const double chunks = static_cast<double>(std::max<std::int64_t>(1, rt.loss_chunks));
  const Bytes logits(e * s * b * static_cast<double>(m.vocab) / tp * (1.0 + 1.0 / chunks));
  if (m.family == workload::Family::kResNet) {
    mb.activations = Bytes(workload::resnet_saved_elements(m.resnet) * b * e);  // data-parallel only
  } else if (par.recompute == Recompute::kFull) {
    // The layer being recomputed and back-propagated, with QLoRA's 16-bit copy of the largest
    // matrix it dequantizes; the loss freed the logits before the first recompute.
    Bytes working = layer_activation_bytes(m, s, b, e, rt.flash_attention(), Recompute::kNone, tp, par.sequence);
    if (t.method == workload::Method::kQlora) {
      working += Bytes(2.0 * static_cast<double>(m.hidden) * static_cast<double>(m.ffn_hidden) / tp);
    }
    mb.activations = std::max(saved(in_flight) + working, saved(1) + std::max(working, logits));
  } else {
    mb.activations = std::max(saved(in_flight), saved(1) + logits);
  }
  if (t.offload_activations) {
    // Saved activations go to host memory as each layer's forward ends and come back before its
    // backward: the GPU keeps the layer in flight and the one being copied [torchtune-activation-offload].
    const Bytes working =
        layer_activation_bytes(m, s, b, e, rt.flash_attention(), Recompute::kNone, tp, par.sequence) * 2.0 + logits;
    if (working < mb.activations) {
      mb.host += mb.activations - working;
      mb.activations = working;
    }
  }
  // The caching allocator's fragmentation applies to what it holds; paged states live outside it.
  const Bytes held = mb.weights + mb.gradients + mb.activations + (t.paged_optimizer ? Bytes(0) : mb.optimizer);
  mb.other = g.memory_reserved + held * g.fragmentation;
  if (t.paged_optimizer && mb.optimizer.value() > 0) {
    // Unified memory keeps resident what the GPU has left at the peak; the driver evicts the rest to
    // the host, and the step pages it back in [bnb-optimizers-docs].
    const Bytes room = mb.capacity - held - mb.other;
    const Bytes resident = std::clamp(room, Bytes(0), mb.optimizer);
    mb.paged = mb.optimizer - resident;
    mb.host += mb.paged;
    mb.optimizer = resident;
    mb.unified = resident;
  }
  return mb;
}

Bytes kv_bytes_per_token(const ModelShape& m, const workload::Inference& inf, const workload::Layout& layout) {
  const double stage_layers = std::ceil(static_cast<double>(m.layers) / layout.pipeline);
  double layers_width = stage_layers * m.cached_kv_width(layout.tensor);
  // A draft model or EAGLE's draft layers keep a KV cache of their own for every token the target
  // holds (Medusa's heads and n-grams keep none).
  if (const workload::Speculative& sp = inf.speculative; sp.on() && sp.proposer && sp.proposer->layers > 0) {
    layers_width += static_cast<double>(sp.proposer->layers) * sp.proposer->cached_kv_width(layout.tensor);
  }
  return Bytes(2.0 * layers_width * inf.kv_bytes);
}

MemoryBreakdown inference_memory(const ModelShape& m, const workload::Inference& inf, const GpuSpec& g,
                                 const workload::Layout& layout, const workload::ServingEngine& engine, double batch) {
  MemoryBreakdown mb;
  mb.capacity = g.memory_capacity;
  const double tp = layout.tensor;
  const double pp = layout.pipeline;
  // Tensor parallelism splits every matrix and the vocabulary-parallel embedding and head;
  // pipeline stages hold their share of the layers.
  mb.weights = Bytes(workload::total_params(m) * inf.weight_bytes / (tp * pp));
  // A speculative proposer's weights sit beside the target's on every GPU of the stage that runs it
  // (split as the target's tensors are; conservatively whole on every pipeline stage).
  mb.weights += Bytes(workload::proposer_params(inf.speculative) * inf.weight_bytes / tp);
  const bool continuous = engine.scheduler == workload::Scheduler::kContinuous;
  // Workspace: one layer's activations for the largest iteration (a continuous engine profiles a
  // forward of its token budget; a static one prefills the whole batch at once) and the fp32
  // logits of the sequences that sample.
  const double prompt = static_cast<double>(inf.prompt_tokens) * (1.0 + inf.load.length_spread);
  const double tokens = continuous ? static_cast<double>(engine.max_batched_tokens) : batch * prompt;
  const double rows = continuous ? static_cast<double>(engine.max_seqs) : batch;
  mb.activations = layer_activation_bytes(m, tokens, 1.0, 2.0, true, Recompute::kNone, tp) +
                   Bytes(4.0 * rows * static_cast<double>(m.vocab) / tp);
  const Bytes per_token = kv_bytes_per_token(m, inf, layout);
  const double context = prompt + static_cast<double>(inf.output_tokens) * (1.0 + inf.load.output_spread);
  if (!continuous) {
    mb.kv_cache = per_token * (context * batch);
    const Bytes live = mb.weights + mb.kv_cache + mb.activations;
    mb.other = g.memory_reserved + live * g.fragmentation;
    return mb;
  }
  // The engine preallocates its pool; one request at its longest context must fit in it.
  mb.other = g.memory_reserved;
  const Bytes fixed = mb.weights + mb.activations + mb.other;
  const Bytes pool = engine.memory_basis == workload::MemoryBasis::kTotal
                         ? g.memory_capacity * engine.memory_fraction - fixed
                         : (g.memory_capacity - fixed) * engine.memory_fraction;
  mb.budget = fixed + (pool.value() > 0 ? pool : Bytes(0));
  const Bytes one_request = per_token * context;
  mb.kv_cache = pool > one_request ? pool : one_request;
  return mb;
}

}  // namespace gpusim::physics
