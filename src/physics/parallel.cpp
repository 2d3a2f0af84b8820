// Communication of tensor, pipeline and data parallelism in one training step [narayanan-2021].
// Placement: tensor-parallel ranks innermost (inside a node), then data-parallel, then pipeline
// stages outermost, as Megatron-LM orders its process groups.
//   tensor:   per layer and micro-batch, 2 all-reduces of b·s·h elements forward and 2 backward
//             (+2 when the forward is recomputed); with sequence parallelism the same volume as
//             reduce-scatter + all-gather pairs [korthikanti-2022]. What the runtime overlaps with
//             its GEMMs is taken off in the step model.
//   pipeline: per micro-batch and virtual stage, the activation forward and its gradient back,
//             b·s·h/t elements each over the link between stages (scatter-gather optimization).
//   data:     gradients of the rank's N/(t·p) parameters (fp32 under autocast with fp32
//             parameters), all-reduced (ZeRO-1/2: reduce-scatter
//             + all-gather; ZeRO-3: also parameter all-gathers per micro-batch) [rajbhandari-2020]
//             over the d ranks of the same shard, d_node of them per node. With expert
//             parallelism the routed experts' gradients (N_experts/(t·p·ep)) reduce over the d/ep
//             ranks holding the same experts, the rest over all d.
//   expert:   per MoE layer and micro-batch, an all-to-all dispatch and combine of b·s·k rows of h
//             elements forward, the same backward [megatron-core-moe], over the ep ranks
//             (consecutive data-parallel ranks: inside a node first).
#include <algorithm>
#include <cmath>

#include "gpusim/physics.hpp"

namespace gpusim::physics {

double parameter_bytes(const workload::Training& t, const workload::Layout& layout, const workload::Runtime& rt) {
  return workload::precision_policy(t, layout, rt).weight;
}

Fabric data_parallel_fabric(const Fabric& node, int gpus_per_node, const workload::Layout& p) {
  Fabric f = node;
  const int per_node = std::max(1, gpus_per_node / p.tensor);
  f.gpus_per_node = std::min(per_node, p.replicas());
  f.nodes = (p.replicas() + f.gpus_per_node - 1) / f.gpus_per_node;
  return f;
}

Fabric strided_fabric(const Fabric& node, int gpus_per_node, const workload::Layout& p, int ranks, int stride) {
  Fabric f = node;
  const int per_node = std::max(1, gpus_per_node / p.tensor);
  f.gpus_per_node = std::max(1, std::min(per_node / stride, ranks));
  f.nodes = (ranks + f.gpus_per_node - 1) / f.gpus_per_node;
  return f;
}

Seconds expert_alltoall(const Fabric& node, int gpus_per_node, const workload::ModelShape& m,
                        const workload::Training& t, const workload::Layout& p) {
  if (p.expert <= 1 || m.moe_share() <= 0) {
    return Seconds(0);
  }
  const double e = units::is_wide(t.precision) ? 4.0 : 2.0;
  const double load = m.moe->capacity_factor > 0 ? m.moe->capacity_factor : p.expert_imbalance;
  const Bytes rows(static_cast<double>(p.micro_batch) * static_cast<double>(t.seq_len) *
                   static_cast<double>(m.moe->top_k) * load * static_cast<double>(m.hidden) * e);
  const double layers = std::ceil(static_cast<double>(m.layers) / p.pipeline) * m.moe_share();
  const double per_layer = 4.0 + (p.recompute == workload::Recompute::kFull ? 2.0 : 0.0);
  return all_to_all_time(strided_fabric(node, gpus_per_node, p, p.expert, 1), rows, p.expert) * (per_layer * layers);
}

ParallelComm parallel_comm(const Fabric& node, int gpus_per_node, const workload::ModelShape& m,
                           const workload::Training& t, const workload::Layout& p, const workload::Runtime& rt) {
  return parallel_comm(node, gpus_per_node, m, t, workload::model_counts(m, t), p, rt);
}

ParallelComm parallel_comm(const Fabric& node, int gpus_per_node, const workload::ModelShape& m,
                           const workload::Training& t, const workload::ModelCounts& counts, const workload::Layout& p,
                           const workload::Runtime& rt) {
  ParallelComm c = micro_batch_comm(node, gpus_per_node, m, t, p);
  add_data_comm(node, gpus_per_node, t, counts, p, rt, c);
  return c;
}

namespace {
// A rank's share of a micro-batch's activations: context parallelism splits the sequence.
double activation_bytes(const workload::ModelShape& m, const workload::Training& t, const workload::Layout& p) {
  const double e = units::is_wide(t.precision) ? 4.0 : 2.0;
  return static_cast<double>(p.micro_batch) * static_cast<double>(t.seq_len) / p.context *
         static_cast<double>(m.hidden) * e;
}
}  // namespace

Seconds tensor_collective(const Fabric& node, const workload::ModelShape& m, const workload::Training& t,
                          const workload::Layout& p) {
  if (p.tensor <= 1) {
    return Seconds(0);
  }
  // A tensor group larger than a node spans nodes: the hierarchical collective. Sequence
  // parallelism issues each all-reduce as its reduce-scatter and all-gather halves, which NCCL runs
  // as rings (its NVLS path serves all-reduce only in this model).
  const Bytes activation(activation_bytes(m, t, p));
  return p.sequence ? collective_time(node, Collective::kReduceScatter, activation, p.tensor) +
                          collective_time(node, Collective::kAllGather, activation, p.tensor)
                    : collective_time(node, Collective::kAllReduce, activation, p.tensor);
}

ParallelComm micro_batch_comm(const Fabric& node, int gpus_per_node, const workload::ModelShape& m,
                              const workload::Training& t, const workload::Layout& p) {
  return micro_batch_comm(node, gpus_per_node, m, t, p, tensor_collective(node, m, t, p));
}

ParallelComm micro_batch_comm(const Fabric& node, int gpus_per_node, const workload::ModelShape& m,
                              const workload::Training& t, const workload::Layout& p, Seconds one) {
  ParallelComm c;
  const double e = units::is_wide(t.precision) ? 4.0 : 2.0;
  const double activation = activation_bytes(m, t, p);
  const double layers = std::ceil(static_cast<double>(m.layers) / p.pipeline);

  if (p.tensor > 1) {
    // A recomputed forward repeats its two all-reduces (per-op recompute: the half of the matmuls
    // it redoes, one of them on average).
    const double per_layer = 4.0 + (p.recompute == workload::Recompute::kFull ? 2.0
                                    : p.recompute == workload::Recompute::kOp ? 1.0
                                                                              : 0.0);
    c.tensor_per_microbatch = one * (per_layer * layers);
  }
  if (p.pipeline > 1) {
    // Neighbouring stages sit in different nodes once a stage fills a node (pipeline outermost).
    const bool across_nodes = p.tensor * p.data * p.context >= gpus_per_node;
    const BytesPerSecond bw = across_nodes ? node.inter_bus : node.intra_p2p;
    const Seconds alpha = across_nodes ? node.inter_alpha : node.intra_alpha;
    const Bytes send(activation / p.tensor);
    c.pipeline_per_microbatch = p2p_time(send, bw, alpha) * (2.0 * p.virtual_stages);
  }
  c.expert_per_microbatch = expert_alltoall(node, gpus_per_node, m, t, p);
  if (p.context > 1) {
    // Ring attention [megatron-context-parallel]: each layer's forward passes every rank's K/V
    // chunk (b·s/c tokens of 2·kv_dim/t) around the c ranks of the context group, c − 1 hops; the
    // backward passes K/V again and their gradients back: 3·(c − 1) hops per layer, recomputed
    // forwards once more. The group sits next to the tensor ranks, inside a node while t·c fits.
    const double kv = m.kv_width_per_rank(static_cast<double>(m.kv_dim()), p.tensor);
    const Bytes chunk(static_cast<double>(p.micro_batch) * static_cast<double>(t.seq_len) / p.context * 2.0 * kv * e);
    const bool across_nodes = p.tensor * p.context > gpus_per_node;
    const BytesPerSecond bw = across_nodes ? node.inter_bus : node.intra_p2p;
    const Seconds alpha = across_nodes ? node.inter_alpha : node.intra_alpha;
    const double passes = 3.0 + (p.recompute == workload::Recompute::kFull ? 1.0 : 0.0);
    c.context_per_microbatch = p2p_time(chunk, bw, alpha) * (passes * (p.context - 1) * layers);
  }
  return c;
}

void add_data_comm(const Fabric& node, int gpus_per_node, const workload::Training& t,
                   const workload::ModelCounts& counts, const workload::Layout& p, const workload::Runtime& rt,
                   ParallelComm& c) {
  const int dp_ranks = p.replicas();
  if (dp_ranks > 1) {
    const Fabric f = data_parallel_fabric(node, gpus_per_node, p);
    c.overlap_cap = f.overlap_cap;
    // Only updated parameters have gradients (LoRA: the adapters); ZeRO-3 gathers every parameter,
    // frozen ones in their stored width. The routed experts' gradients reduce over the data / ep
    // ranks that hold the same experts.
    const double split = static_cast<double>(p.tensor) * p.pipeline;
    const workload::ParamRoles& roles = counts.roles;
    const double pbytes = parameter_bytes(t, p, rt);
    const double experts = p.expert > 1 && !t.adapters() ? counts.experts : 0.0;
    const Bytes grads((roles.trainable - experts) / split * pbytes);
    const double frozen_linear = t.method == workload::Method::kQlora ? workload::kNf4BytesPerParam : 2.0;
    const Bytes params(
        t.adapters()
            ? (roles.trainable * pbytes + roles.frozen_linear * frozen_linear + roles.frozen_other * 2.0) / split
            : grads.value());
    const int expert_data = p.data / p.expert;
    const Fabric fe = strided_fabric(node, gpus_per_node, p, expert_data, p.expert);
    const Bytes expert_grads(experts / (split * p.expert) * pbytes);
    auto reduce = [&](Collective kind, Bytes bytes) {
      Seconds time = collective_time(f, kind, bytes, dp_ranks);
      if (experts > 0 && expert_data > 1) {
        time += collective_time(fe, kind, expert_grads, expert_data);
      }
      return time;
    };
    switch (p.zero) {
      case 0:
        c.data_total = reduce(Collective::kAllReduce, grads);
        c.data_overlappable = c.data_total;
        break;
      case 1:
      case 2:
        // Reduce-scatter overlaps the last backward; the all-gather of updated weights follows the
        // optimizer step and is exposed (DeepSpeed ZeRO-1/2 schedule).
        c.data_overlappable = reduce(Collective::kReduceScatter, grads);
        c.data_total = c.data_overlappable + reduce(Collective::kAllGather, grads);
        break;
      default: {
        // ZeRO-3 / FSDP: gather weights for forward and backward, reduce-scatter gradients, per micro-batch.
        // A recomputed forward reuses the backward's gather: FSDP2 skips its pre-forward unshard
        // while the pre-backward hook holds the layer [pytorch-fsdp2-source], and FSDP1 with the
        // checkpoint inside each unit recomputes after the unit's pre-backward unshard [fsdp-qlora-script].
        const double micro = static_cast<double>(t.global_batch) / (static_cast<double>(p.micro_batch) * p.data);
        c.data_total =
            (reduce(Collective::kAllGather, params) * 2.0 + reduce(Collective::kReduceScatter, grads)) * micro;
        c.data_overlappable = c.data_total;
        c.data_hides_behind_all = true;
        break;
      }
    }
  }
}

}  // namespace gpusim::physics
