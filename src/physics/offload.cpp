// Offload of a training step to the host [ren-zero-offload-2021, rajbhandari-zero-infinity-2021].
// ZeRO-Offload keeps the optimizer states, the fp32 master weights and fp32 gradients in host
// memory and runs the optimizer on the CPU: each micro-batch streams the rank's 16-bit gradient
// shard to the host over PCIe (behind the backward pass), the CPU updates its N_s parameters, and the
// updated 16-bit parameters return over PCIe before the next step (no delayed parameter update).
// The CPU optimizer is bound by host memory bandwidth, shared by the node's GPUs:
//   t_cpu = N_s · (2·S + 4 + 2 + 6) / (B_host · η_host / gpus_per_node)
// with S the optimizer state bytes per parameter (read and written), 4 the fp32 gradient read, 2 the
// 16-bit parameter written, 6 the gradient's fp16 → fp32 conversion on arrival. DeepSpeed's CPU Adam
// is vectorised (AVX-512/AVX2) and multi-threaded, so a step of ~10-20 FLOPs per parameter stays
// below the memory time on the hosts in specs/hosts. On NVMe the states are read and written every
// step, pipelined with the CPU work: t = max(t_cpu, 2·N_s·S / (B_nvme / gpus_per_node)).
// ZeRO-Infinity's parameter offload fetches the rank's parameter shard for the forward and again for
// the backward of every micro-batch, prefetched behind compute.
// Activation offload copies each saved activation out during the forward and back before its
// backward, on a copy stream beside compute [torchtune-activation-offload].
// A paged optimizer's evicted states are prefetched to the GPU for the step and evicted again when
// the next forward needs the memory [bnb-optimizers-docs]: t = 2·S_paged / B_host_copy per step,
// bulk migrations at the pinned copy rate, waited for (the allocations that evict them block).
#include <algorithm>
#include <cmath>

#include "gpusim/physics.hpp"

namespace gpusim::physics {

OffloadCost offload_cost(const hardware::System& sys, const workload::ModelShape& m, const workload::Training& t,
                         const workload::Layout& layout, const workload::Runtime& rt) {
  return offload_cost(sys, m, t, workload::model_counts(m, t), layout, rt);
}

OffloadCost offload_cost(const hardware::System& sys, const workload::ModelShape& m, const workload::Training& t,
                         const workload::ModelCounts& counts, const workload::Layout& layout,
                         const workload::Runtime& rt) {
  OffloadCost c;
  const double split = static_cast<double>(layout.tensor) * layout.pipeline;
  const double dp = layout.replicas();
  const workload::ParamRoles& roles = counts.roles;
  const BytesPerSecond pcie = host_copy_bandwidth(sys, true);
  const double sharing = std::max(1, sys.gpus_per_node);
  if (t.offload_optimizer != workload::Offload::kNone) {
    const double n = roles.trainable / split / (layout.zero >= 1 ? dp : 1.0);
    const double state = workload::precision_policy(t, layout, rt).optimizer();
    const BytesPerSecond host_bw = sys.host.memory_bandwidth * (sys.host.memory_efficiency / sharing);
    c.gradients_out = Bytes(n * 2.0) / pcie;
    c.optimizer = Bytes(n * (2.0 * state + 4.0 + 2.0 + 6.0)) / host_bw;
    if (t.offload_optimizer == workload::Offload::kNvme) {
      c.optimizer = std::max(c.optimizer, Bytes(2.0 * n * state) / (sys.host.nvme_bandwidth / sharing));
    }
    c.parameters_in = Bytes(n * 2.0) / pcie;
  }
  if (t.offload_params != workload::Offload::kNone) {
    // The rank's shard of all parameters, 16-bit (QLoRA's frozen matrices packed).
    const double frozen_linear = t.method == workload::Method::kQlora ? workload::kNf4BytesPerParam : 2.0;
    const Bytes shard((roles.trainable * 2.0 + roles.frozen_linear * frozen_linear + roles.frozen_other * 2.0) / split /
                      dp);
    BytesPerSecond source = pcie;
    if (t.offload_params == workload::Offload::kNvme) {
      source = std::min(pcie, sys.host.nvme_bandwidth / sharing);
    }
    c.parameter_fetch = shard * 2.0 / source;
  }
  if (t.paged_optimizer) {
    const MemoryBreakdown mb = training_memory(m, t, counts, layout, rt, sys.gpu);
    c.optimizer_paging = mb.paged * 2.0 / pcie;
  }
  if (t.offload_activations) {
    const double e = units::is_wide(t.precision) ? 4.0 : 2.0;
    const double layers = std::ceil(static_cast<double>(m.layers) / layout.pipeline);
    const Bytes per_layer = layer_activation_bytes(m, static_cast<double>(t.seq_len) / layout.context,
                                                   static_cast<double>(layout.micro_batch), e, rt.flash_attention(),
                                                   layout.recompute, layout.tensor, layout.sequence);
    c.activations_each_way = per_layer * std::max(0.0, layers - 2.0) / pcie;
  }
  return c;
}

}  // namespace gpusim::physics
