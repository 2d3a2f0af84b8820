// Collective communication: NCCL's per-protocol alpha-beta model [nccl-source], with NCCL's
// bus-bandwidth convention [nccl-tests-performance].
//   ring all-reduce over n ranks, protocol p:  base_p + 2(n-1) · hop_p + 2(n-1)/n · S / B_p
//   reduce-scatter / all-gather:              base_p +  (n-1) · hop_p +  (n-1)/n · S / B_p
//   NVLS all-reduce (NVSwitch reduces):       latency + 2(n-1)/n · S / B_nvls + rounds(S) · τ_round
// and the call takes the fastest, as NCCL picks by minimum modelled time, plus a fixed cost per
// call. B_Simple is the link's per-direction bandwidth times the measured ring efficiency; LL
// carries half of it (capped per architecture), LL128 its payload share, on NVLink only. Across
// nodes a collective is hierarchical: reduce-scatter inside the node, the 1/g shard across nodes
// over the GPU's share of the NICs (the faster of ring and double binary tree [sanders-2009]),
// all-gather inside. GPUs without PCIe peer-to-peer stage through host memory: NCCL's SHM transport,
// used between devices when peer-to-peer cannot happen [nccl-env-docs]; a copy crosses PCIe twice
// (the measured staged efficiency) and host memory twice, so the node's GPUs share the host's
// memory bandwidth: B ≤ B_host·η_host / (2·local).
// An xGMI full mesh (MI250X, MI300X) has no switch: each GPU has one link to each peer, RCCL lays
// its rings over the links among the group [rccl-source], so k GPUs of a node ring at
// B(k) = min(k − 1, links) · B_link · efficiency, and a copy between two GPUs runs over one link.
#include <algorithm>
#include <cmath>

#include "gpusim/physics.hpp"

namespace gpusim::physics {

using hardware::LinkKind;
using hardware::LinkSpec;
using hardware::Protocol;

namespace {

// The library's protocols on these links: hop latency by link kind, bus bandwidth by payload
// share and cap [nccl-source].
void add_protocols(Fabric& f, const hardware::System& sys, LinkKind intra_kind) {
  const hardware::CommLibrary& lib = sys.comm;
  const hardware::Efficiency& e = sys.gpu.efficiency;
  for (const auto& [proto, name] : hardware::kProtocolNames) {
    const hardware::ProtocolSpec& p = lib.protocol(proto);
    if (!p.enabled || (p.nvlink_only && intra_kind != LinkKind::kNvlink)) {
      continue;
    }
    ProtocolCost c;
    c.protocol = proto;
    c.base = p.base_latency;
    c.intra_hop = intra_kind == LinkKind::kNvlink ? p.hop_nvlink : p.hop_pcie;
    if (proto == Protocol::kSimple) {
      // Simple hands each slice over with a memory fence and a flag round trip; LL and LL128 carry
      // their flags inline [nccl-source]. The measured extra per step is calibrated per architecture.
      c.intra_hop += e.simple_step;
    }
    c.inter_hop = p.hop_network;
    const double share = proto == Protocol::kLL128 ? e.ll128.value_or(p.payload) : p.payload;
    c.intra_bus = f.intra_bus * share;
    c.inter_bus = f.inter_bus * share;
    if (const auto& cap = p.cap[static_cast<std::size_t>(sys.gpu.arch)]) {
      c.intra_bus = std::min(c.intra_bus, *cap);
    }
    if (p.cap_across_nodes) {
      c.inter_bus = std::min(c.inter_bus, *p.cap_across_nodes);
    }
    f.protocols.push_back(c);
  }
}

// One protocol (or the plain alpha-beta fabric) without the call's fixed cost.
Seconds protocol_time(const Fabric& f, const ProtocolCost& p, Collective c, Bytes size, int ranks) {
  const int local = std::min(ranks, f.gpus_per_node);
  const int nodes = (ranks + local - 1) / local;
  const BytesPerSecond intra_bus = f.host_cap(local, p.intra_bus * f.mesh_share(local));
  if (nodes <= 1) {
    return p.base + ring_time(c, size, local, intra_bus, p.intra_hop);
  }
  const Bytes shard = size / static_cast<double>(local);
  const Seconds in_node = ring_time(Collective::kReduceScatter, size, local, intra_bus, p.intra_hop);
  if (c != Collective::kAllReduce) {
    return p.base + in_node + ring_time(Collective::kReduceScatter, shard, nodes, p.inter_bus, p.inter_hop);
  }
  const Seconds across = std::min(ring_time(Collective::kAllReduce, shard, nodes, p.inter_bus, p.inter_hop),
                                  tree_allreduce(shard, nodes, p.inter_bus, p.inter_hop));
  return p.base + in_node + across + in_node;
}

// The fabric of `sys`, and into `path` (when given) the facts of its intra-node link.
Fabric build_fabric(const hardware::System& sys, IntraPath* path) {
  Fabric f;
  f.gpus_per_node = sys.gpus_per_node;
  f.nodes = sys.nodes();
  f.amd = hardware::is_amd(sys.gpu.arch);
  const hardware::GpuSpec& g = sys.gpu;
  const LinkSpec& intra = sys.intra_node;
  // A link that joins fewer GPUs than the node has (an NVLink bridge joins a pair): the node rings
  // over PCIe.
  const bool too_few = intra.joins > 0 && sys.gpus_per_node > intra.joins;
  const bool nvlink_ring = intra.kind == LinkKind::kNvlink && !too_few;
  if (intra.kind == LinkKind::kXgmi) {
    // The GPU's peer bandwidth is the sum over its mesh links (7 x 64 GB/s on MI300X).
    const BytesPerSecond all = g.peer_bandwidth.value() > 0 ? g.peer_bandwidth : intra.bandwidth;
    const int links = std::max(1, intra.mesh_links);
    f.mesh_links = links;
    f.intra_bus = all * g.efficiency.peer_link;
    f.intra_p2p = all * (intra.efficiency / links);
    f.intra_alpha = intra.latency;
    if (path != nullptr) {
      *path = IntraPath{IntraPath::Kind::kMesh, intra.name, all / static_cast<double>(links), links};
    }
    f.nvlink = true;
  } else if (nvlink_ring) {
    const BytesPerSecond link = g.peer_bandwidth.value() > 0 ? g.peer_bandwidth : intra.bandwidth;
    f.intra_bus = link * g.efficiency.peer_link;
    f.intra_p2p = link * intra.efficiency;
    f.intra_alpha = intra.latency;
    if (path != nullptr) {
      *path = IntraPath{IntraPath::Kind::kNvlink, intra.name, link, 0};
    }
    f.nvlink = true;
  } else {
    // PCIe between GPUs: the intra-node link if it is PCIe, else (a bridge in a larger node) the
    // GPU's own host link.
    const LinkSpec& pcie = intra.kind == LinkKind::kPcie ? intra : sys.pcie;
    const BytesPerSecond link = pcie.bandwidth;
    if (g.p2p_over_pcie) {
      f.intra_bus = link * g.efficiency.peer_link;
      f.intra_p2p = link * pcie.efficiency;
      f.intra_alpha = pcie.latency;
      if (path != nullptr) {
        *path = IntraPath{IntraPath::Kind::kPcieP2p, pcie.name, link, 0};
      }
    } else {
      f.host_staged = true;
      f.staged_host = sys.host.memory_bandwidth * (sys.host.memory_efficiency / 2.0);
      f.overlap_cap = pcie.staged_overlap;
      f.intra_bus = link * pcie.staged_efficiency;
      f.intra_p2p = f.intra_bus;
      f.intra_alpha = pcie.staged_latency;
      if (path != nullptr) {
        *path = IntraPath{IntraPath::Kind::kPcieStaged, pcie.name, f.intra_bus, 0};
      }
    }
  }
  const LinkSpec& nic = sys.inter_node;
  const double share = static_cast<double>(sys.nics_per_node) / static_cast<double>(std::max(1, sys.gpus_per_node));
  // Rail-optimized NICs: each GPU uses its share; a tapered (oversubscribed) core divides it.
  f.inter_bus = nic.bandwidth * (nic.efficiency * share / sys.oversubscription);
  f.inter_alpha = nic.latency;
  f.call = g.efficiency.collective_call;
  // RCCL classes xGMI links with NVLink (LINK_NVL) and takes their latencies [rccl-source].
  add_protocols(f, sys, nvlink_ring || f.mesh_links > 0 ? LinkKind::kNvlink : LinkKind::kPcie);
  // NVLS: an NVSwitch with NVLink SHARP reduces in the switch; NCCL uses it for all-reduce inside
  // a node of more than two GPUs [nccl-source].
  const int nvls_channels = sys.comm.nvls_channels[static_cast<std::size_t>(g.arch)];
  if (nvlink_ring && intra.in_switch_reduction && g.efficiency.nvls > 0 && sys.gpus_per_node > 2 && nvls_channels > 0) {
    f.nvls_bus = (g.peer_bandwidth.value() > 0 ? g.peer_bandwidth : intra.bandwidth) * g.efficiency.nvls;
    f.nvls_latency = sys.comm.nvls_latency;
    f.nvls_round = g.efficiency.nvls_round;
    f.nvls_chunk = sys.comm.nvls_chunk;
    f.nvls_channels = nvls_channels;
  }
  return f;
}

}  // namespace

Fabric make_fabric(const hardware::System& sys) {
  Fabric f = build_fabric(sys, nullptr);
  if (sys.gpus_per_node > 1 && f.intra_bus.value() <= 0) {
    throw InputError({Diagnostic{
        SourcePos{}, "system.intra_node",
        "no usable link between the GPUs of a node: " + intra_path(sys).link + " gives them no bandwidth"}});
  }
  return f;
}

IntraPath intra_path(const hardware::System& sys) {
  IntraPath path;
  build_fabric(sys, &path);
  return path;
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

double nvls_rounds(const Fabric& f, Bytes size, int ranks) {
  // calcCollChunking (src/enqueue.cc) [nccl-source]: with ops = channels x GPUs chunks in flight,
  // the chunk drops to 64 KiB below 64 rounds of the largest chunk, to 32 KiB below 8 rounds and
  // to 16 KiB below 2 rounds, so mid-size messages pay for more, smaller chunks.
  const double ops = static_cast<double>(f.nvls_channels) * ranks;
  double chunk = f.nvls_chunk.value();
  for (const auto& [rounds, smaller] : {std::pair{64.0, 65536.0}, {8.0, 32768.0}, {2.0, 16384.0}}) {
    if (size.value() < rounds * ops * chunk && chunk > smaller) {
      chunk = smaller;
    }
  }
  return ops > 0 && chunk > 0 ? size.value() / (ops * chunk) : 0.0;
}

CollectiveCost collective_cost(const Fabric& f, Collective c, Bytes size, int ranks, Algorithm algorithm) {
  if (ranks <= 1) {
    return {};
  }
  const bool one_node = ranks <= f.gpus_per_node;
  const bool nvls =
      c == Collective::kAllReduce && one_node && ranks > 2 && f.nvls_bus.value() > 0 && algorithm != Algorithm::kRing;
  const Seconds nvls_time = nvls ? f.nvls_latency + size * ring_cost(c, ranks).bytes_factor / f.nvls_bus +
                                       f.nvls_round * nvls_rounds(f, size, ranks)
                                 : Seconds(0);
  if (nvls && algorithm == Algorithm::kNvls) {
    return {nvls_time + f.call, Route::kNvls};
  }
  if (f.protocols.empty()) {
    return {protocol_time(
                f, ProtocolCost{Protocol::kSimple, Seconds(0), f.intra_alpha, f.inter_alpha, f.intra_bus, f.inter_bus},
                c, size, ranks),
            Route::kRing, Protocol::kSimple};
  }
  CollectiveCost best;
  for (const ProtocolCost& p : f.protocols) {
    const Seconds t = protocol_time(f, p, c, size, ranks);
    if (best.route == Route::kNone || t < best.time) {
      best = {t, Route::kRing, p.protocol};
    }
  }
  if (nvls && nvls_time < best.time) {
    best = {nvls_time, Route::kNvls};
  }
  best.time += f.call;
  return best;
}

Seconds collective_time(const Fabric& f, Collective c, Bytes size, int ranks) {
  return collective_cost(f, c, size, ranks).time;
}

Seconds serving_allreduce_time(const Fabric& f, const workload::ServingEngine& e, Bytes size, int ranks) {
  if (ranks <= 1) {
    return Seconds(0);
  }
  const double n = ranks;
  // Peer memory inside one node: every pair over NVLink, or a lone pair with peer access.
  const bool peers = ranks <= f.gpus_per_node && !f.host_staged && (f.nvlink || ranks == 2);
  // Some builds leave the custom kernel out on ROCm (upstream vLLM V0 disables it on AMD GPUs).
  const bool built = e.allreduce_on_amd || !f.amd;
  if (!peers || !built || e.allreduce_max.value() <= 0 || size > e.allreduce_max) {
    return collective_time(f, Collective::kAllReduce, size, ranks);
  }
  // The one-shot threshold is stated for 8 GPUs; fewer GPUs read fewer peers, so it scales with
  // 8 / n (vLLM: 256 KiB at 8 GPUs, 512 KiB at 4, one-shot always at 2) [vllm-custom-allreduce].
  const Bytes one_shot_max = e.allreduce_one_shot_max * (8.0 / n);
  if (ranks == 2 || size < one_shot_max) {
    return e.allreduce_latency + size * (n - 1.0) / f.peers_bandwidth(ranks - 1);
  }
  return e.allreduce_latency * 2.0 + size * (2.0 * (n - 1.0) / n) / f.peers_bandwidth(ranks - 1);
}

Seconds all_to_all_time(const Fabric& f, Bytes size, int ranks) {
  if (ranks <= 1) {
    return Seconds(0);
  }
  const double n = ranks;
  const double local = std::min(ranks, f.gpus_per_node);
  // Each rank keeps 1/n of its data, sends (local - 1)/n to node peers over the intra-node links
  // and (n - local)/n to other nodes over its NIC share, both at once.
  const Seconds intra =
      size * ((local - 1.0) / n) / f.ring_bus(static_cast<int>(local)) + f.intra_alpha * (local - 1.0);
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
  const BytesPerSecond in_node = f.ring_bus(std::min(ranks, f.gpus_per_node));
  const BytesPerSecond bus = multi_node ? std::min(in_node, f.inter_bus) : in_node;
  const Seconds alpha = multi_node ? f.inter_alpha : f.intra_alpha;
  return size / bus + alpha * std::ceil(std::log2(static_cast<double>(ranks)));
}

Seconds p2p_time(Bytes size, BytesPerSecond bus, Seconds alpha) { return size / bus + alpha; }

}  // namespace gpusim::physics
