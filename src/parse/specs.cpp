// Readers of GPU, link and model-shape tables (formats in specs/README.md).
#include "parse/parse.hpp"

namespace gpusim::parse {

using hardware::LinkKind;
using units::Dim;

namespace {

template <class Q>
void set_q(Reader& r, std::string_view key, Dim dim, Q& out, Need need = Need::kRequired,
           Range range = Range::kPositive) {
  if (auto v = r.quantity(key, dim, need, range)) {
    out = Q(*v);
  }
}

void read_efficiency(Reader& r, hardware::Efficiency& e) {
  auto frac = [&r](std::string_view key, double& out, Range range = Range::kFraction) {
    if (auto v = r.number(key, Need::kRequired, range)) {
      out = *v;
    }
  };
  frac("gemm", e.gemm, Range::kPositive);  // may exceed 1: boost clocks above the spec clock (B10, B11)
  frac("attention", e.attention);
  frac("dram", e.dram);
  frac("l2", e.l2);
  frac("host_link", e.host_link);
  frac("peer_link", e.peer_link, Range::kPositive);  // may exceed 1 with in-switch reduction (NVLS, C04)
  if (auto v = r.number("comm_overlap", Need::kRequired, Range::kNonNegative)) {
    e.comm_overlap = *v;
    if (*v > 1) {
      r.error("comm_overlap", "must be a fraction in [0, 1]");
    }
  }
  if (auto v = r.number("training_overhead", Need::kRequired, Range::kNonNegative)) {
    e.training_overhead = *v;
  }
  set_q(r, "kernel_overhead", Dim::kTime, e.kernel_overhead, Need::kRequired, Range::kNonNegative);
  set_q(r, "launch_eager", Dim::kTime, e.launch_eager, Need::kRequired, Range::kNonNegative);
  set_q(r, "launch_graph", Dim::kTime, e.launch_graph, Need::kRequired, Range::kNonNegative);
  set_q(r, "gemv_inflight_per_sm", Dim::kBytes, e.gemv_inflight_per_sm, Need::kRequired);
  set_q(r, "peer_latency", Dim::kTime, e.peer_latency, Need::kOptional, Range::kNonNegative);
  set_q(r, "gemm_latency", Dim::kTime, e.gemm_latency, Need::kOptional, Range::kNonNegative);
  e.gemm_fp8 = r.number("gemm_fp8", Need::kOptional, Range::kPositive);
  e.gemm_tile_m = static_cast<int>(r.integer("gemm_tile_m", Need::kRequired).value_or(128));
  e.gemm_tile_n = static_cast<int>(r.integer("gemm_tile_n", Need::kRequired).value_or(128));
  r.finish();
}

}  // namespace

void read_gpu(Reader& r, hardware::GpuSpec& g) {
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
  if (auto v = r.integer("sm_count", Need::kRequired)) {
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
    if (auto v = h->integer("pcie_gen", Need::kRequired, 3)) {
      g.pcie_gen = static_cast<int>(*v);
      if (*v > 6) {
        h->error("pcie_gen", "expected 3, 4, 5 or 6, got " + std::to_string(*v));
      }
    }
    if (auto v = h->integer("lanes", Need::kRequired)) {
      g.pcie_lanes = static_cast<int>(*v);
    }
    h->finish();
  }
  if (auto p = r.table("peer_link", Need::kRequired)) {
    if (auto v = p->string("link", Need::kRequired)) {
      g.peer_link = *v;
    }
    const Range range = g.peer_link == "none" ? Range::kNonNegative : Range::kPositive;
    set_q(*p, "bandwidth", Dim::kBandwidth, g.peer_bandwidth, Need::kRequired, range);
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
      if (auto v = p->number(key, Need::kRequired, Range::kFraction)) {
        *out = *v;
      }
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
  if (auto m = r.table("meta", Need::kOptional)) {
    g.sources = m->string_list("sources");
    g.assumptions = m->string_list("assumptions");
    m->allow({"efficiency_sources"});
    m->finish();
  }
  r.finish();
}

void read_link(Reader& r, hardware::LinkSpec& l) {
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
  if (auto m = r.table("meta", Need::kOptional)) {
    l.sources = m->string_list("sources");
    m->string_list("assumptions");
    m->finish();
  }
  r.finish();
}

void read_model_keys(Reader& r, workload::ModelShape& m, Need need) {
  auto count = [&](std::string_view key, std::int64_t& out) {
    if (auto v = r.integer(key, need)) {
      out = *v;
    }
  };
  auto flag = [&](std::string_view key, bool& out) {
    if (auto v = r.boolean(key, need)) {
      out = *v;
    }
  };
  count("layers", m.layers);
  count("hidden", m.hidden);
  count("heads", m.heads);
  // kv_heads and ffn_hidden have defaults in scenarios (docs/scenarios.md); spec files must state them.
  if (auto v = r.integer("kv_heads", need)) {
    m.kv_heads = *v;
  }
  if (auto v = r.integer("ffn_hidden", need)) {
    m.ffn_hidden = *v;
  }
  if (auto v = r.choice("ffn", workload::kFfnNames, need)) {
    m.ffn = *v;
  }
  count("vocab", m.vocab);
  flag("tied_embeddings", m.tied_embeddings);
  flag("causal", m.causal);
  if (auto v = r.choice("norm", workload::kNormNames, need)) {
    m.norm = *v;
  }
  flag("bias", m.bias);
  if (auto v = r.choice("position", workload::kPositionNames, need)) {
    m.position = *v;
  }
  count("max_seq", m.max_seq);
}

void check_model(Reader& r, const workload::ModelShape& m) {
  if (m.heads > 0 && m.hidden % m.heads != 0) {
    r.error("heads", "heads (" + std::to_string(m.heads) + ") must divide hidden (" + std::to_string(m.hidden) + ")");
  }
  if (m.kv_heads > 0 && m.heads % m.kv_heads != 0) {
    r.error("kv_heads",
            "kv_heads (" + std::to_string(m.kv_heads) + ") must divide heads (" + std::to_string(m.heads) + ")");
  }
}

}  // namespace gpusim::parse
