// Collective communication: an alpha-beta model per link level [thakur-2005], with NCCL's
// bus-bandwidth convention [nccl-tests-performance].
//   ring all-reduce over n ranks:   2(n-1)/n · S / B + 2(n-1) · α
//   reduce-scatter / all-gather:     (n-1)/n · S / B +  (n-1) · α
// B is the achievable bus bandwidth of the level: the per-direction link bandwidth times the
// measured efficiency. Multi-node collectives are hierarchical: reduce-scatter inside the node,
// the 1/g shard across nodes over the GPU's share of the NICs (the faster of ring and double
// binary tree [sanders-2009], as NCCL's "auto" picks), all-gather inside. GPUs without PCIe
// peer-to-peer stage through host memory (staged efficiency and latency). Across nodes each GPU
// uses its share of the node's NICs (rail-optimized), divided by the fabric's oversubscription.
#include <algorithm>
#include <cmath>

#include "gpusim/physics.hpp"

namespace gpusim::physics {

using base::strfmt;
using hardware::LinkKind;
using hardware::LinkSpec;

Fabric make_fabric(const hardware::System& sys) {
  Fabric f;
  f.gpus_per_node = sys.gpus_per_node;
  f.nodes = sys.nodes();
  const hardware::GpuSpec& g = sys.gpu;
  const LinkSpec& intra = sys.intra_node;
  // An NVLink bridge joins pairs only; a larger node rings over PCIe.
  const bool bridge_only_pairs = intra.id.find("bridge") != std::string::npos && sys.gpus_per_node > 2;
  if (intra.kind == LinkKind::kNvlink && !bridge_only_pairs) {
    const BytesPerSecond link = g.peer_bandwidth.value() > 0 ? g.peer_bandwidth : intra.bandwidth;
    f.intra_bus = link * g.efficiency.peer_link;
    f.intra_p2p = link * intra.efficiency;
    f.intra_alpha = intra.latency;
    f.intra_desc = strfmt("%s (%.0f GB/s per direction)", intra.name.c_str(), units::to_gigabytes_per_second(link));
  } else {
    // PCIe between GPUs: the intra-node link if it is PCIe, else (bridged pairs in a larger node)
    // the GPU's own host link.
    const LinkSpec& pcie = intra.kind == LinkKind::kPcie ? intra : sys.pcie;
    const BytesPerSecond link = pcie.bandwidth;
    if (g.p2p_over_pcie) {
      f.intra_bus = link * g.efficiency.peer_link;
      f.intra_p2p = link * pcie.efficiency;
      f.intra_alpha = pcie.latency;
      f.intra_desc =
          strfmt("%s peer-to-peer (%.1f GB/s per direction)", pcie.name.c_str(), units::to_gigabytes_per_second(link));
    } else {
      f.host_staged = true;
      f.intra_bus = link * pcie.staged_efficiency;
      f.intra_p2p = f.intra_bus;
      f.intra_alpha = pcie.staged_latency;
      f.intra_desc = strfmt("%s, no P2P: staged through host memory (%.1f GB/s achievable)", pcie.name.c_str(),
                            units::to_gigabytes_per_second(f.intra_bus));
    }
  }
  if (g.efficiency.peer_latency.value() > 0 && !f.host_staged) {
    f.intra_alpha = g.efficiency.peer_latency;  // calibrated from collective measurements
  }
  if (sys.gpus_per_node > 1 && f.intra_bus.value() <= 0) {
    throw InputError(
        {Diagnostic{SourcePos{}, "system.intra_node", "no usable link between the GPUs of a node: " + f.intra_desc}});
  }
  const LinkSpec& nic = sys.inter_node;
  const double share = static_cast<double>(sys.nics_per_node) / static_cast<double>(std::max(1, sys.gpus_per_node));
  // Rail-optimized NICs: each GPU uses its share; a tapered (oversubscribed) core divides it.
  f.inter_bus = nic.bandwidth * (nic.efficiency * share / sys.oversubscription);
  f.inter_alpha = nic.latency;
  return f;
}

BytesPerSecond host_copy_bandwidth(const hardware::System& sys, bool pinned) {
  // Pageable copies go through a pinned bounce buffer [pytorch-cuda-semantics]: assumed half the
  // pinned rate (no measured row yet; gpusim-bench measures both).
  constexpr double kPageableFraction = 0.5;
  return sys.pcie.bandwidth * (sys.gpu.efficiency.host_link * (pinned ? 1.0 : kPageableFraction));
}

RingCost ring_cost(Collective c, int ranks) {
  if (ranks <= 1) {
    return {};
  }
  const double n = ranks;
  const RingCost half{(n - 1.0) / n, n - 1.0};
  return c == Collective::kAllReduce ? RingCost{2.0 * half.bytes_factor, 2.0 * half.steps} : half;
}

Seconds ring_time(Collective c, Bytes size, int ranks, BytesPerSecond bus, Seconds alpha) {
  const RingCost r = ring_cost(c, ranks);
  if (r.steps == 0) {
    return Seconds(0);
  }
  return size * r.bytes_factor / bus + alpha * r.steps;
}

Seconds tree_allreduce(Bytes size, int ranks, BytesPerSecond bus, Seconds alpha) {
  if (ranks <= 1) {
    return Seconds(0);
  }
  return size * 2.0 / bus + alpha * (2.0 * std::ceil(std::log2(static_cast<double>(ranks))));
}

Seconds collective_time(const Fabric& f, Collective c, Bytes size, int ranks) {
  const int local = std::min(ranks, f.gpus_per_node);
  const int nodes = (ranks + local - 1) / local;
  if (nodes <= 1) {  // inside a node NCCL rings (or NVLS) over NVLink/NVSwitch
    return ring_time(c, size, local, f.intra_bus, f.intra_alpha);
  }
  const Bytes shard = size / static_cast<double>(local);
  const Seconds in_node = ring_time(Collective::kReduceScatter, size, local, f.intra_bus, f.intra_alpha);
  if (c != Collective::kAllReduce) {
    return in_node + ring_time(Collective::kReduceScatter, shard, nodes, f.inter_bus, f.inter_alpha);
  }
  const Seconds across = std::min(ring_time(Collective::kAllReduce, shard, nodes, f.inter_bus, f.inter_alpha),
                                  tree_allreduce(shard, nodes, f.inter_bus, f.inter_alpha));
  return in_node + across + in_node;
}

Seconds all_to_all_time(const Fabric& f, Bytes size, int ranks) {
  if (ranks <= 1) {
    return Seconds(0);
  }
  const double n = ranks;
  const double local = std::min(ranks, f.gpus_per_node);
  // Each rank keeps 1/n of its data, sends (local - 1)/n to node peers over the intra-node links
  // and (n - local)/n to other nodes over its NIC share, both at once.
  const Seconds intra = size * ((local - 1.0) / n) / f.intra_bus + f.intra_alpha * (local - 1.0);
  const Seconds inter =
      ranks > local ? size * ((n - local) / n) / f.inter_bus + f.inter_alpha * (n - local) : Seconds(0);
  return std::max(intra, inter);
}

Seconds broadcast_time(const Fabric& f, Bytes size, int ranks) {
  if (ranks <= 1) {
    return Seconds(0);
  }
  // Pipelined along a chain/tree: the bytes cross the slowest link once, plus a latency per level.
  const bool multi_node = ranks > f.gpus_per_node;
  const BytesPerSecond bus = multi_node ? std::min(f.intra_bus, f.inter_bus) : f.intra_bus;
  const Seconds alpha = multi_node ? f.inter_alpha : f.intra_alpha;
  return size / bus + alpha * std::ceil(std::log2(static_cast<double>(ranks)));
}

Seconds p2p_time(Bytes size, BytesPerSecond bus, Seconds alpha) { return size / bus + alpha; }

}  // namespace gpusim::physics
