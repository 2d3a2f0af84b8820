// Readers of the hardware spec tables: GPU (with its efficiency table), host, link and collective
// library (formats in specs/README.md). The runtime and model-shape readers are in
// runtime_specs.cpp and model_specs.cpp.
#include "parse/internal.hpp"

namespace gpusim::parse {

using hardware::LinkKind;
using units::Dim;

namespace {

void read_efficiency(Reader& r, hardware::Efficiency& e) {
  auto frac = [&r](std::string_view key, double& out, Range range = Range::kFraction, double max = limits::kRatio) {
    if (auto v = r.number(key, Need::kRequired, range, max)) {
      out = *v;
    }
  };
  // May exceed 1: boost clocks above the spec clock (B10, B11); never twice the peak
  // (docs/scenarios.md#ranges), which no clock reaches.
  constexpr double kAbovePeak = 2.0;
  frac("gemm", e.gemm, Range::kPositive, kAbovePeak);
  frac("attention", e.attention);
  frac("dram", e.dram);
  frac("l2", e.l2);
  frac("host_link", e.host_link);
  frac("peer_link", e.peer_link);
  // NVLS all-reduce bus bandwidth exceeds the link's: the switch does the reduction (C04).
  // Bounded at 4 (docs/scenarios.md#ranges): a typo guard far above the 1.27 measured on NVSwitch (C04).
  constexpr double kNvlsGain = 4.0;
  if (auto v = r.number("nvls", Need::kOptional, Range::kPositive, kNvlsGain)) {
    e.nvls = *v;
  }
  e.ll128 = r.number("ll128", Need::kOptional, Range::kFraction);
  set_q(r, "collective_call", Dim::kTime, e.collective_call, Need::kRequired, Range::kNonNegative);
  set_q(r, "simple_step", Dim::kTime, e.simple_step, Need::kOptional, Range::kNonNegative);
  set_q(r, "nvls_round", Dim::kTime, e.nvls_round, Need::kOptional, Range::kNonNegative);
  set_q(r, "kernel_overhead", Dim::kTime, e.kernel_overhead, Need::kRequired, Range::kNonNegative);
  set_q(r, "launch_eager", Dim::kTime, e.launch_eager, Need::kRequired, Range::kNonNegative);
  set_q(r, "launch_graph", Dim::kTime, e.launch_graph, Need::kRequired, Range::kNonNegative);
  set_q(r, "gemv_inflight_per_sm", Dim::kBytes, e.gemv_inflight_per_sm, Need::kRequired);
  set_q(r, "gemm_latency", Dim::kTime, e.gemm_latency, Need::kOptional, Range::kNonNegative);
  set_q(r, "gemm_tile_cycles", Dim::kCycles, e.gemm_tile_cycles, Need::kOptional, Range::kNonNegative);
  if (auto v = r.number("gemm_staging_rate", Need::kOptional, Range::kPositive, limits::kRatio)) {
    e.gemm_staging_rate = *v;
  }
  e.gemm_fp8 = r.number("gemm_fp8", Need::kOptional, Range::kPositive, kAbovePeak);
  e.gemm_fp4 = r.number("gemm_fp4", Need::kOptional, Range::kPositive, kAbovePeak);
  e.attention_flash3 = r.number("attention_flash3", Need::kOptional, Range::kFraction);
  if (auto v = r.number("mma_sync", Need::kOptional, Range::kFraction)) {
    e.mma_sync = *v;
  }
  e.gemm_tile_m = static_cast<int>(r.integer("gemm_tile_m", Need::kRequired, 1, limits::kTile).value_or(128));
  e.gemm_tile_n = static_cast<int>(r.integer("gemm_tile_n", Need::kRequired, 1, limits::kTile).value_or(128));
  r.finish();
}

}  // namespace

void read_gpu(Reader& r, hardware::GpuSpec& g) {
  r.set_ranges(key_ranges("gpus"));
  r.allow({"base", "meta"});
  if (auto v = r.string("name", Need::kRequired)) {
    g.name = *v;
  }
  if (auto v = r.choice("architecture", hardware::kArchNames, Need::kRequired)) {
    g.arch = *v;
  }
  if (auto v = r.choice("form_factor", hardware::kFormFactorNames, Need::kRequired)) {
    g.form_factor = *v;
  }
  // SXM and OAM modules are sold only in servers (NVIDIA's HGX/DGX boards, AMD's OAM platforms):
  // their segment is the data centre's, and a file may leave it out. A PCIe card may be any of the
  // three, so its file must say which.
  const Need segment_need = g.form_factor == hardware::FormFactor::kSxm ? Need::kOptional : Need::kRequired;
  if (g.form_factor == hardware::FormFactor::kSxm) {
    g.segment = hardware::Segment::kDatacenter;
  }
  if (auto v = r.choice("segment", hardware::kSegmentNames, segment_need)) {
    g.segment = *v;
  }
  if (auto v = r.integer("sm_count", Need::kRequired, 1, limits::kSms)) {
    g.sm_count = static_cast<int>(*v);
  }
  set_q(r, "boost_clock", Dim::kFrequency, g.boost_clock);

  if (auto c = r.table("compute", Need::kRequired)) {
    for (const auto& [dt, key] : units::kDTypeNames) {
      const Need need = (dt == DType::kFp32 || dt == DType::kFp16) ? Need::kRequired : Need::kOptional;
      if (auto v = c->quantity(key, Dim::kFlopRate, need)) {
        g.peak[static_cast<std::size_t>(dt)] = FlopPerSecond(*v);
      }
    }
    c->finish();
  }
  if (auto m = r.table("memory", Need::kRequired)) {
    if (auto v = m->string("type", Need::kRequired)) {
      g.memory_type = *v;
    }
    set_q(*m, "capacity", Dim::kBytes, g.memory_capacity);
    set_q(*m, "bandwidth", Dim::kBandwidth, g.memory_bandwidth);
    set_q(*m, "reserved", Dim::kBytes, g.memory_reserved, Need::kRequired, Range::kNonNegative);
    if (auto v = m->number("fragmentation", Need::kRequired, Range::kNonNegative)) {
      g.fragmentation = *v;
    }
    if (auto v = m->latency_seconds("latency", g.boost_clock.value(), Need::kRequired)) {
      g.memory_latency = Seconds(*v);
    }
    m->finish();
  }
  if (auto c = r.table("cache", Need::kRequired)) {
    set_q(*c, "l2_size", Dim::kBytes, g.l2_size);
    set_q(*c, "l2_bandwidth", Dim::kBandwidth, g.l2_bandwidth);
    if (auto v = c->latency_seconds("l2_latency", g.boost_clock.value(), Need::kRequired)) {
      g.l2_latency = Seconds(*v);
    }
    set_q(*c, "l1_size_per_sm", Dim::kBytes, g.l1_per_sm);
    if (auto v = c->latency_seconds("l1_latency", g.boost_clock.value(), Need::kRequired)) {
      g.l1_latency = Seconds(*v);
    }
    set_q(*c, "shared_per_sm", Dim::kBytes, g.shared_per_sm);
    set_q(*c, "registers_per_sm", Dim::kBytes, g.registers_per_sm);
    c->finish();
  }
  if (auto h = r.table("host_link", Need::kRequired)) {
    if (auto v = h->integer("pcie_gen", Need::kRequired, 3, 6)) {
      g.pcie_gen = static_cast<int>(*v);
    }
    if (auto v = h->integer("lanes", Need::kRequired, 1, 16)) {
      g.pcie_lanes = static_cast<int>(*v);
    }
    if (auto v = h->string("host", Need::kOptional)) {
      g.host = *v;
    }
    h->finish();
  }
  if (auto p = r.table("peer_link", Need::kRequired)) {
    if (auto v = p->string("link", Need::kRequired)) {
      g.peer_link = *v;
    }
    const Range range = g.peer_link == "none" ? Range::kNonNegative : Range::kPositive;
    set_q(*p, "bandwidth", Dim::kBandwidth, g.peer_bandwidth, Need::kRequired, range);
    if (auto v = p->integer("domain", Need::kOptional, 1, limits::kDevices)) {
      g.peer_domain = static_cast<int>(*v);
    }
    if (auto v = p->boolean("p2p_over_pcie", Need::kRequired)) {
      g.p2p_over_pcie = *v;
    }
    p->finish();
  }
  if (auto p = r.table("power", Need::kRequired)) {
    set_q(*p, "tdp", Dim::kPower, g.tdp);
    set_q(*p, "idle", Dim::kPower, g.idle_power);
    for (auto [key, out] : {std::pair<const char*, double*>{"gemm_activity", &g.activity.gemm},
                            {"memory_activity", &g.activity.memory},
                            {"simt_activity", &g.activity.simt},
                            {"idle_activity", &g.activity.idle}}) {
      if (auto v = p->number(key, Need::kRequired, Range::kPositive)) {
        *out = *v;
      }
    }
    set_q(*p, "busy_floor", Dim::kPower, g.busy_floor);
    if (g.busy_floor < g.idle_power || (g.busy_floor >= g.tdp && g.tdp.value() > 0)) {
      p->error("busy_floor", "the busy floor lies between the idle power and the TDP");
    }
    g.max_clock = g.boost_clock;
    set_q(*p, "max_clock", Dim::kFrequency, g.max_clock, Need::kOptional);
    if (g.max_clock < g.boost_clock) {
      p->error("max_clock", "the highest clock cannot be below the rated boost clock");
    }
    if (auto v = p->number("voltage_knee", Need::kRequired, Range::kFraction)) {
      g.voltage_knee = g.max_clock * *v;
    }
    if (auto v = p->quantity("dram_energy_per_bit", Dim::kEnergy, Need::kRequired)) {
      g.dram_energy_per_bit = *v;
    }
    if (g.idle_power.value() >= g.tdp.value() && g.tdp.value() > 0) {
      p->error("idle", "idle power must be below the TDP");
    }
    p->finish();
  }
  if (auto p = r.table("price", Need::kRequired)) {
    set_q(*p, "purchase", Dim::kMoney, g.purchase);
    if (auto v = p->string("purchase_date", Need::kRequired)) {
      g.purchase_date = *v;
    }
    set_q(*p, "cloud_rate", Dim::kMoneyPerTime, g.cloud_rate);
    if (auto v = p->string("cloud_date", Need::kRequired)) {
      g.cloud_date = *v;
    }
    p->finish();
  }
  if (auto e = r.table("efficiency", Need::kRequired)) {
    read_efficiency(*e, g.efficiency);
  }
  if (auto u = r.table("uncertainty", Need::kRequired)) {
    read_efficiency_ranges(*u, g.ranges);
  }
  if (auto m = r.table("meta", Need::kOptional)) {
    g.sources = m->string_list("sources");
    g.assumptions = m->string_list("assumptions");
    m->allow({"efficiency_sources"});
    m->finish();
  }
  r.finish();
}

void read_host(Reader& r, hardware::HostSpec& h) {
  r.set_ranges(key_ranges("hosts"));
  if (auto v = r.string("name", Need::kRequired)) {
    h.name = *v;
  }
  if (auto v = r.integer("cores", Need::kRequired, 1, limits::kWorkers)) {
    h.cores = static_cast<int>(*v);
  }
  set_q(r, "memory", Dim::kBytes, h.memory);
  set_q(r, "memory_bandwidth", Dim::kBandwidth, h.memory_bandwidth);
  if (auto v = r.number("memory_efficiency", Need::kRequired, Range::kFraction)) {
    h.memory_efficiency = *v;
    if (*v <= 0) {
      r.error("memory_efficiency", "the sustained share of the memory bandwidth must be above 0");
    }
  }
  set_q(r, "nvme_bandwidth", Dim::kBandwidth, h.nvme_bandwidth);
  if (auto m = r.table("meta", Need::kOptional)) {
    h.sources = m->string_list("sources");
    h.assumptions = m->string_list("assumptions");
    m->finish();
  }
  r.finish();
}

void read_link(Reader& r, hardware::LinkSpec& l) {
  r.set_ranges(key_ranges("links"));
  if (auto v = r.string("name", Need::kRequired)) {
    l.name = *v;
  }
  if (auto v = r.choice("kind", hardware::kLinkKindNames, Need::kRequired)) {
    l.kind = *v;
  }
  set_q(r, "bandwidth", Dim::kBandwidth, l.bandwidth);
  set_q(r, "latency", Dim::kTime, l.latency);
  if (auto v = r.number("efficiency", Need::kRequired, Range::kFraction)) {
    l.efficiency = *v;
  }
  const Need staged = l.kind == LinkKind::kPcie ? Need::kRequired : Need::kOptional;
  if (auto v = r.number("staged_efficiency", staged, Range::kFraction)) {
    l.staged_efficiency = *v;
  }
  set_q(r, "staged_latency", Dim::kTime, l.staged_latency, staged);
  if (auto v = r.number("staged_overlap", staged, Range::kNonNegative)) {
    l.staged_overlap = *v;
    if (*v > 1) {
      r.error("staged_overlap", "a share of communication hidden behind compute is at most 1");
    }
  }
  if (auto v = r.boolean("in_switch_reduction", Need::kOptional)) {
    l.in_switch_reduction = *v;
    if (*v && l.kind != LinkKind::kNvlink) {
      r.error("in_switch_reduction", "only an NVLink switch reduces in the switch (NVLS)");
    }
  }
  // An xGMI mesh states its links per GPU; the bandwidth is their per-direction sum.
  const Need mesh = l.kind == LinkKind::kXgmi ? Need::kRequired : Need::kOptional;
  if (auto v = r.integer("mesh_links", mesh, 1, limits::kMeshLinks)) {
    l.mesh_links = static_cast<int>(*v);
    if (l.kind != LinkKind::kXgmi) {
      r.error("mesh_links", "only an xGMI (Infinity Fabric) full mesh has mesh_links");
    }
  }
  // A bridge joins a pair of cards: a node of more GPUs rings over PCIe.
  if (auto v = r.integer("joins", Need::kOptional, 2, limits::kDevices)) {
    l.joins = static_cast<int>(*v);
  }
  if (auto m = r.table("meta", Need::kOptional)) {
    l.sources = m->string_list("sources");
    m->string_list("assumptions");
    m->finish();
  }
  r.finish();
}

void read_comm(Reader& r, hardware::CommLibrary& c) {
  if (auto v = r.string("name", Need::kRequired)) {
    c.name = *v;
  }
  for (const auto& [proto, key] : hardware::kProtocolNames) {
    auto t = r.table(key, Need::kRequired);
    if (!t) {
      continue;
    }
    hardware::ProtocolSpec& p = c.protocols[static_cast<std::size_t>(proto)];
    set_q(*t, "base_latency", Dim::kTime, p.base_latency, Need::kRequired, Range::kNonNegative);
    if (auto hop = t->table("hop_latency", Need::kRequired)) {
      set_q(*hop, "nvlink", Dim::kTime, p.hop_nvlink, Need::kRequired, Range::kNonNegative);
      set_q(*hop, "pcie", Dim::kTime, p.hop_pcie, Need::kRequired, Range::kNonNegative);
      set_q(*hop, "network", Dim::kTime, p.hop_network, Need::kRequired, Range::kNonNegative);
      hop->finish();
    }
    if (auto v = t->number("payload", Need::kRequired, Range::kFraction)) {
      p.payload = *v;
    }
    if (auto v = t->boolean("nvlink_only", Need::kOptional)) {
      p.nvlink_only = *v;
    }
    if (auto v = t->boolean("enabled", Need::kOptional)) {
      p.enabled = *v;
    }
    if (auto cap = t->table("bandwidth_cap", Need::kOptional)) {
      for (const auto& [arch, name] : hardware::kArchNames) {
        if (auto v = cap->quantity(name, Dim::kBandwidth, Need::kOptional)) {
          p.cap[static_cast<std::size_t>(arch)] = BytesPerSecond(*v);
        }
      }
      if (auto v = cap->quantity("across_nodes", Dim::kBandwidth, Need::kOptional)) {
        p.cap_across_nodes = BytesPerSecond(*v);
      }
      cap->finish();
    }
    t->finish();
  }
  if (auto n = r.table("nvls", Need::kRequired)) {
    set_q(*n, "latency", Dim::kTime, c.nvls_latency, Need::kRequired, Range::kNonNegative);
    set_q(*n, "chunk", Dim::kBytes, c.nvls_chunk, Need::kRequired);
    if (auto ch = n->table("channels", Need::kRequired)) {
      for (const auto& [arch, name] : hardware::kArchNames) {
        if (auto v = ch->integer(name, Need::kOptional, 1, limits::kChannels)) {
          c.nvls_channels[static_cast<std::size_t>(arch)] = static_cast<int>(*v);
        }
      }
      ch->finish();
    }
    n->finish();
  }
  if (auto m = r.table("meta", Need::kOptional)) {
    c.sources = m->string_list("sources");
    c.assumptions = m->string_list("assumptions");
    m->finish();
  }
  r.finish();
}

}  // namespace gpusim::parse
