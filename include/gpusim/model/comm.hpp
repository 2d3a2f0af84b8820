// Collective communication: alpha–beta model per link level (Thakur et al. 2005; NCCL's
// bus-bandwidth convention, nccl-tests doc/PERFORMANCE.md).
//   ring all-reduce over n ranks:   2(n-1)/n · S / B + 2(n-1) · α
//   reduce-scatter / all-gather:     (n-1)/n · S / B +  (n-1) · α
// B is the achievable bus bandwidth of the level: the per-direction link bandwidth times the
// measured efficiency. Multi-node collectives are hierarchical: reduce-scatter inside the node,
// all-reduce of the 1/g shard across nodes over the GPU's share of the NICs, all-gather inside.
// GPUs without PCIe peer-to-peer stage through host memory (staged efficiency and latency).
// Across nodes each GPU uses its share of the node's NICs (rail-optimized), divided by the
// fabric's oversubscription.
#pragma once

#include <string>

#include "gpusim/workload/scenario.hpp"

namespace gpusim {

struct Fabric {
  BytesPerSecond intra_bus;  // achievable bus bandwidth between GPUs of a node
  Seconds intra_alpha;
  BytesPerSecond inter_bus;  // achievable per-GPU bandwidth across nodes
  Seconds inter_alpha;
  int gpus_per_node = 1;
  int nodes = 1;
  std::string intra_desc;  // e.g. "NVLink 4 (450 GB/s per direction)" or "PCIe 4.0 x16, host-staged"
  bool host_staged = false;
};

Fabric make_fabric(const SystemConfig& sys);

// Host-to-device (or back) copy bandwidth of one GPU: PCIe per-direction bandwidth × η_host_link.
// Pageable memory goes through a pinned bounce buffer: assumed half the pinned rate (no measured
// row yet; gpusim-bench measures both).
BytesPerSecond host_copy_bandwidth(const SystemConfig& sys, bool pinned);

Seconds ring_allreduce(Bytes size, int ranks, BytesPerSecond bus, Seconds alpha);
// Double binary tree (NCCL): 2·S/B + 2·⌈log2 n⌉·α; wins for latency-bound sizes.
Seconds tree_allreduce(Bytes size, int ranks, BytesPerSecond bus, Seconds alpha);
Seconds ring_reduce_scatter(Bytes size, int ranks, BytesPerSecond bus, Seconds alpha);

// Collectives over `ranks` GPUs placed densely on nodes of `fabric.gpus_per_node`. Inside a node
// all-reduce rings; across nodes it takes the faster of ring and tree (NCCL "auto").
Seconds allreduce_time(const Fabric& fabric, Bytes size, int ranks);
Seconds reduce_scatter_time(const Fabric& fabric, Bytes size, int ranks);
inline Seconds all_gather_time(const Fabric& fabric, Bytes size, int ranks) {
  return reduce_scatter_time(fabric, size, ranks);
}
// All-to-all of `size` bytes per rank: node peers over NVLink and other nodes over the NICs at once.
Seconds all_to_all_time(const Fabric& fabric, Bytes size, int ranks);
// Pipelined broadcast: S / B of the slowest link + ⌈log2 n⌉·α.
Seconds broadcast_time(const Fabric& fabric, Bytes size, int ranks);
// One point-to-point transfer: S / B + α.
Seconds p2p_time(Bytes size, BytesPerSecond bus, Seconds alpha);

}  // namespace gpusim
