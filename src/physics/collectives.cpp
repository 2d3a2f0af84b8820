// Alpha–beta collectives over a two-level fabric (equations in comm.hpp).
#include "gpusim/model/comm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gpusim/spec/diagnostics.hpp"

namespace gpusim {

Fabric make_fabric(const SystemConfig& sys) {
  Fabric f;
  f.gpus_per_node = sys.gpus_per_node;
  f.nodes = sys.nodes();
  const GpuSpec& g = sys.gpu;
  const LinkSpec& intra = sys.intra_node;
  // An NVLink bridge joins pairs only; a larger node rings over PCIe.
  const bool bridge_only_pairs = intra.id.find("bridge") != std::string::npos && sys.gpus_per_node > 2;
  char buf[160];
  if (intra.kind == LinkKind::kNvlink && !bridge_only_pairs) {
    const BytesPerSecond link = g.peer_bandwidth.value() > 0 ? g.peer_bandwidth : intra.bandwidth;
    f.intra_bus = link * g.efficiency.peer_link;
    f.intra_alpha = intra.latency;
    std::snprintf(buf, sizeof buf, "%s (%.0f GB/s per direction)", intra.name.c_str(),
                  units::to_gigabytes_per_second(link));
  } else {
    // PCIe between GPUs: the intra-node link if it is PCIe, else (bridged pairs in a larger node)
    // the GPU's own host link.
    const LinkSpec& pcie = intra.kind == LinkKind::kPcie ? intra : sys.pcie;
    const BytesPerSecond link = pcie.bandwidth;
    if (g.p2p_over_pcie) {
      f.intra_bus = link * g.efficiency.peer_link;
      f.intra_alpha = pcie.latency;
      std::snprintf(buf, sizeof buf, "%s peer-to-peer (%.1f GB/s per direction)", pcie.name.c_str(),
                    units::to_gigabytes_per_second(link));
    } else {
      f.host_staged = true;
      f.intra_bus = link * pcie.staged_efficiency;
      f.intra_alpha = pcie.staged_latency;
      std::snprintf(buf, sizeof buf, "%s, no P2P: staged through host memory (%.1f GB/s achievable)", pcie.name.c_str(),
                    units::to_gigabytes_per_second(f.intra_bus));
    }
  }
  f.intra_desc = buf;
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

BytesPerSecond host_copy_bandwidth(const SystemConfig& sys, bool pinned) {
  constexpr double kPageableFraction = 0.5;  // assumption, see comm.hpp
  return sys.pcie.bandwidth * (sys.gpu.efficiency.host_link * (pinned ? 1.0 : kPageableFraction));
}

Seconds ring_allreduce(Bytes size, int ranks, BytesPerSecond bus, Seconds alpha) {
  if (ranks <= 1) {
    return Seconds(0);
  }
  const double n = ranks;
  return size * (2.0 * (n - 1.0) / n) / bus + alpha * (2.0 * (n - 1.0));
}

Seconds ring_reduce_scatter(Bytes size, int ranks, BytesPerSecond bus, Seconds alpha) {
  if (ranks <= 1) {
    return Seconds(0);
  }
  const double n = ranks;
  return size * ((n - 1.0) / n) / bus + alpha * (n - 1.0);
}

Seconds tree_allreduce(Bytes size, int ranks, BytesPerSecond bus, Seconds alpha) {
  if (ranks <= 1) {
    return Seconds(0);
  }
  return size * 2.0 / bus + alpha * (2.0 * std::ceil(std::log2(static_cast<double>(ranks))));
}

namespace {
// NCCL's "auto" across nodes: the faster of ring and tree for the size (Sanders et al. 2009 double
// binary tree).
Seconds best_allreduce(Bytes size, int ranks, BytesPerSecond bus, Seconds alpha) {
  return std::min(ring_allreduce(size, ranks, bus, alpha), tree_allreduce(size, ranks, bus, alpha));
}
}  // namespace

Seconds allreduce_time(const Fabric& f, Bytes size, int ranks) {
  const int local = std::min(ranks, f.gpus_per_node);
  const int nodes = (ranks + local - 1) / local;
  if (nodes <= 1) {  // inside a node NCCL rings (or NVLS) over NVLink/NVSwitch
    return ring_allreduce(size, local, f.intra_bus, f.intra_alpha);
  }
  const Bytes shard = size / static_cast<double>(local);
  return ring_reduce_scatter(size, local, f.intra_bus, f.intra_alpha) +
         best_allreduce(shard, nodes, f.inter_bus, f.inter_alpha) +
         ring_reduce_scatter(size, local, f.intra_bus, f.intra_alpha);
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

Seconds reduce_scatter_time(const Fabric& f, Bytes size, int ranks) {
  const int local = std::min(ranks, f.gpus_per_node);
  const int nodes = (ranks + local - 1) / local;
  if (nodes <= 1) {
    return ring_reduce_scatter(size, local, f.intra_bus, f.intra_alpha);
  }
  const Bytes shard = size / static_cast<double>(local);
  return ring_reduce_scatter(size, local, f.intra_bus, f.intra_alpha) +
         ring_reduce_scatter(shard, nodes, f.inter_bus, f.inter_alpha);
}

}  // namespace gpusim
