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
  if (auto v = r.choice("segment", hardware::kSegmentNames, Need::kRequired)) {
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
      g.voltage_knee = *v;
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
  if (auto m = r.table("meta", Need::kOptional)) {
    l.sources = m->string_list("sources");
    m->string_list("assumptions");
    m->finish();
  }
  r.finish();
}

void read_model_keys(Reader& r, workload::ModelShape& m, Need need) {
  auto count = [&](std::string_view key, std::int64_t& out, std::int64_t max) {
    if (auto v = r.integer(key, need, 1, max)) {
      out = *v;
    }
  };
  auto flag = [&](std::string_view key, bool& out) {
    if (auto v = r.boolean(key, need)) {
      out = *v;
    }
  };
  count("layers", m.layers, limits::kLayers);
  count("hidden", m.hidden, limits::kWidth);
  count("heads", m.heads, limits::kWidth);
  // kv_heads and ffn_hidden have defaults in scenarios (docs/scenarios.md); spec files must state them.
  if (auto v = r.integer("kv_heads", need, 1, limits::kWidth)) {
    m.kv_heads = *v;
  }
  if (auto v = r.integer("ffn_hidden", need, 1, limits::kWidth)) {
    m.ffn_hidden = *v;
  }
  if (auto v = r.choice("ffn", workload::kFfnNames, need)) {
    m.ffn = *v;
  }
  count("vocab", m.vocab, limits::kWidth);
  flag("tied_embeddings", m.tied_embeddings);
  flag("causal", m.causal);
  if (auto v = r.choice("norm", workload::kNormNames, need)) {
    m.norm = *v;
  }
  flag("bias", m.bias);
  if (auto v = r.choice("position", workload::kPositionNames, need)) {
    m.position = *v;
  }
  count("max_seq", m.max_seq, limits::kSequence);
  // Optional everywhere: LLM pretraining runs without dropout; BERT-style fine-tuning uses 0.1.
  if (auto v = r.number("dropout", Need::kOptional, Range::kNonNegative)) {
    m.dropout = *v;
    if (*v >= 1) {
      r.error("dropout", "a dropout probability is below 1");
    }
  }
  // [moe] and [mla]: optional in both spec files and scenarios (a scenario's table edits the
  // preset's key by key; a model without one is dense / multi-head).
  if (auto t = r.table("moe", Need::kOptional)) {
    const bool had = m.moe.has_value();
    workload::MoeShape& e = m.moe ? *m.moe : m.moe.emplace();
    const Need first = had ? Need::kOptional : Need::kRequired;
    auto moe_count = [&](std::string_view key, std::int64_t& out, Need n, std::int64_t min, std::int64_t max) {
      if (auto v = t->integer(key, n, min, max)) {
        out = *v;
      }
    };
    moe_count("experts", e.experts, first, 1, limits::kWidth);
    moe_count("top_k", e.top_k, first, 1, limits::kWidth);
    moe_count("expert_ffn_hidden", e.expert_ffn_hidden, first, 1, limits::kWidth);
    moe_count("shared_ffn_hidden", e.shared_ffn_hidden, Need::kOptional, 0, limits::kWidth);
    moe_count("dense_layers", e.dense_layers, Need::kOptional, 0, limits::kLayers);
    moe_count("every", e.every, Need::kOptional, 1, limits::kLayers);
    if (auto v = t->number("capacity_factor", Need::kOptional, Range::kNonNegative, limits::kRatio)) {
      e.capacity_factor = *v;
    }
    t->finish();
  }
  if (auto t = r.table("mla", Need::kOptional)) {
    const bool had = m.mla.has_value();
    workload::MlaShape& a = m.mla ? *m.mla : m.mla.emplace();
    const Need first = had ? Need::kOptional : Need::kRequired;
    auto mla_count = [&](std::string_view key, std::int64_t& out, Need n, std::int64_t min) {
      if (auto v = t->integer(key, n, min, limits::kWidth)) {
        out = *v;
      }
    };
    mla_count("q_lora_rank", a.q_lora_rank, Need::kOptional, 0);
    mla_count("kv_lora_rank", a.kv_lora_rank, first, 1);
    mla_count("qk_nope_head_dim", a.qk_nope_head_dim, first, 1);
    mla_count("qk_rope_head_dim", a.qk_rope_head_dim, first, 1);
    mla_count("v_head_dim", a.v_head_dim, first, 1);
    t->finish();
  }
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

void read_runtime_settings(Reader& r, workload::Runtime& rt, Need need) {
  if (auto v = r.choice("launch", workload::kLaunchNames, need)) {
    rt.cuda_graphs = *v == workload::Launch::kCudaGraphs;
  }
  set_q(r, "dispatch", Dim::kTime, rt.dispatch, need, Range::kNonNegative);
  if (auto v = r.boolean("autocast", need)) {
    rt.autocast = *v;
  }
  if (auto v = r.boolean("composite_ops", need)) {
    rt.composite_ops = *v;
  }
  if (auto v = r.choice("activation_layout", workload::kActivationLayoutNames, need)) {
    rt.activation_layout = *v;
  }
  if (auto v = r.choice("attention", workload::kAttentionNames, need)) {
    rt.attention = *v;
  }
  if (auto v = r.choice("optimizer", workload::kOptimizerImplNames, need)) {
    rt.optimizer = *v;
  }
  // Optional in runtime files too: only runtimes with kernels of their own for packed weights state it.
  if (auto v = r.choice("quantized_matmul", workload::kQuantizedMatmulNames, Need::kOptional)) {
    rt.quantized_matmul = *v;
  }
  if (auto f = r.table("fusion", need)) {
    for (auto [key, out] : {std::pair<const char*, bool*>{"norm_residual", &rt.fusion.norm_residual},
                            {"bias_activation", &rt.fusion.bias_activation},
                            {"rope", &rt.fusion.rope},
                            {"cross_entropy", &rt.fusion.cross_entropy},
                            {"bias_grad", &rt.fusion.bias_grad},
                            {"norm_backward", &rt.fusion.norm_backward}}) {
      if (auto v = f->boolean(key, need)) {
        *out = *v;
      }
    }
    // Optional in runtime files too: only runtimes that keep the matrices apart state it.
    if (auto v = f->boolean("projections", Need::kOptional)) {
      rt.fusion.projections = *v;
    }
    f->finish();
  }
  if (auto o = r.table("overlap", need)) {
    for (auto [key, out] : {std::pair<const char*, double*>{"data_parallel", &rt.overlap.data_parallel},
                            {"parameter_gather", &rt.overlap.parameter_gather},
                            {"tensor_parallel", &rt.overlap.tensor_parallel},
                            {"pipeline", &rt.overlap.pipeline}}) {
      if (auto v = o->number(key, need, Range::kNonNegative)) {
        *out = *v;
        if (*v > 1) {
          o->error(key, "a share of communication hidden behind compute is at most 1");
        }
      }
    }
    // Optional in spec files too: only runtimes that run expert parallelism state it.
    if (auto v = o->number("expert_parallel", Need::kOptional, Range::kNonNegative)) {
      rt.overlap.expert_parallel = *v;
      if (*v > 1) {
        o->error("expert_parallel", "a share of communication hidden behind compute is at most 1");
      }
    }
    o->finish();
  }
  if (auto e = r.table("efficiency", need)) {
    if (auto v = e->number("quantized", need, Range::kFraction)) {
      rt.quantized = *v;
    }
    if (auto v = e->number("remainder", need, Range::kNonNegative)) {
      rt.remainder = *v;
    }
    set_q(*e, "gemv_inflight", Dim::kBytes, rt.gemv_inflight, Need::kOptional, Range::kPositive);
    if (auto v = e->number("mmq", Need::kOptional, Range::kFraction)) {
      rt.mmq = *v;
    }
    for (auto [key, into] : {std::pair{"attention_forward", &rt.attention_forward},
                             std::pair{"attention_backward", &rt.attention_backward}}) {
      if (auto v = e->number(key, Need::kOptional, Range::kFraction)) {
        *into = *v;
      }
    }
    e->finish();
  }
  read_loss_settings(r, rt);
  if (rt.kind == workload::RuntimeKind::kTraining && rt.optimizer == workload::OptimizerImpl::kNone) {
    r.error("optimizer", "a training runtime runs an optimizer: expected fused, foreach or per-tensor");
  }
}

void read_serving_engine(Reader& r, workload::ServingEngine& e, Need need) {
  if (auto v = r.choice("scheduler", workload::kSchedulerNames, need)) {
    e.scheduler = *v;
  }
  if (auto v = r.integer("max_seqs", need, 1, limits::kBatch)) {
    e.max_seqs = *v;
  }
  if (auto v = r.integer("max_batched_tokens", need, 1, limits::kSequence)) {
    e.max_batched_tokens = *v;
  }
  if (auto v = r.boolean("chunked_prefill", need)) {
    e.chunked_prefill = *v;
  }
  if (auto v = r.integer("kv_block", need, 1, limits::kSequence)) {
    e.kv_block = *v;
  }
  if (auto v = r.number("memory_fraction", need, Range::kFraction)) {
    e.memory_fraction = *v;
  }
  if (auto v = r.choice("memory_basis", workload::kMemoryBasisNames, need)) {
    e.memory_basis = *v;
  }
  if (auto v = r.boolean("reserve_output", need)) {
    e.reserve_output = *v;
  }
  set_q(r, "allreduce_max", Dim::kBytes, e.allreduce_max, need, Range::kNonNegative);
  set_q(r, "allreduce_one_shot_max", Dim::kBytes, e.allreduce_one_shot_max, need, Range::kNonNegative);
  set_q(r, "allreduce_latency", Dim::kTime, e.allreduce_latency, need, Range::kNonNegative);
  // Optional in runtime files too: most runtimes publish none of the host costs.
  set_q(r, "step_overhead", Dim::kTime, e.step_overhead, Need::kOptional, Range::kNonNegative);
  set_q(r, "schedule_per_sequence", Dim::kTime, e.schedule_per_sequence, Need::kOptional, Range::kNonNegative);
  set_q(r, "output_per_sequence", Dim::kTime, e.output_per_sequence, Need::kOptional, Range::kNonNegative);
  if (auto v = r.boolean("async_output", Need::kOptional)) {
    e.async_output = *v;
  }
  if (auto v = r.boolean("overlap_scheduler", Need::kOptional)) {
    e.overlap_scheduler = *v;
  }
  if (auto v = r.integer("scheduler_steps", Need::kOptional, 1, limits::kSequence)) {
    e.scheduler_steps = *v;
  }
  if (auto v = r.boolean("mixed_batches", Need::kOptional)) {
    e.mixed_batches = *v;
  }
  set_q(r, "api_latency", Dim::kTime, e.api_latency, Need::kOptional, Range::kNonNegative);
  if (auto v = r.boolean("allreduce_on_amd", Need::kOptional)) {
    e.allreduce_on_amd = *v;
  }
}

void read_runtime(Reader& r, workload::Runtime& rt) {
  r.allow({"base"});
  if (auto v = r.string("name", Need::kRequired)) {
    rt.name = *v;
  }
  if (auto v = r.choice("kind", workload::kRuntimeKindNames, Need::kRequired)) {
    rt.kind = *v;
  }
  read_runtime_settings(r, rt, Need::kRequired);
  if (auto recipe = r.table("recipe", Need::kOptional)) {
    if (rt.kind == workload::RuntimeKind::kTraining) {
      read_recipe(*recipe, rt);
    } else {
      r.error("recipe", "[recipe] holds the defaults of training recipes; this runtime runs inference");
    }
  }
  if (rt.quantized_matmul != workload::QuantizedMatmul::kFused && rt.mmq <= 0) {
    r.error("quantized_matmul",
            "the \"mmq\" and \"dequantize\" paths run MMQ kernels: state [efficiency] mmq, their share of the "
            "int8 mma.sync rate, in (0, 1]");
  }
  if (rt.kind == workload::RuntimeKind::kInference) {
    if (auto s = r.table("serving", Need::kRequired)) {
      read_serving_engine(*s, rt.serving, Need::kRequired);
      s->finish();
    }
  }
  if (auto u = r.table("uncertainty", Need::kRequired)) {
    read_runtime_ranges(*u, rt.ranges, rt.kind);
  }
  if (auto m = r.table("meta", Need::kOptional)) {
    rt.sources = m->string_list("sources");
    rt.assumptions = m->string_list("assumptions");
    m->finish();
  }
  r.finish();
}

void read_resnet_keys(Reader& r, workload::ModelShape& m) {
  m.family = workload::Family::kResNet;
  m.layers = 1;  // lowered as one layer holding every convolution
  workload::ResNet& n = m.resnet;
  auto count = [&](std::string_view key, std::int64_t& out, std::int64_t max) {
    if (auto v = r.integer(key, Need::kRequired, 1, max)) {
      out = *v;
    }
  };
  count("image", n.image, limits::kPixels);
  count("stem_width", n.stem_width, limits::kWidth);
  n.blocks = r.integer_list("blocks", Need::kRequired, 1, limits::kLayers);
  count("width", n.width, limits::kWidth);
  count("expansion", n.expansion, limits::kWidth);
  if (auto v = r.boolean("stride_in_3x3", Need::kRequired)) {
    n.stride_in_3x3 = *v;
  }
  count("classes", n.classes, limits::kWidth);
  // Each stage from the second halves the map: the image must survive the stem, the pool and them.
  const std::int64_t halvings = 2 + static_cast<std::int64_t>(n.blocks.size() > 0 ? n.blocks.size() - 1 : 0);
  if (halvings < 62 && n.image < (std::int64_t{1} << halvings)) {
    r.error("image", "image (" + std::to_string(n.image) + " pixels) is smaller than the network's total stride (" +
                         std::to_string(std::int64_t{1} << halvings) + ")");
  }
  if (n.blocks.size() > 16) {
    r.error("blocks", "at most 16 stages (each doubles the width), got " + std::to_string(n.blocks.size()));
  }
}

void read_vit_keys(Reader& r, workload::ModelShape& m) {
  m.family = workload::Family::kVit;
  if (auto v = r.integer("image", Need::kRequired, 1, limits::kPixels)) {
    m.vit.image = *v;
  }
  if (auto v = r.integer("patch", Need::kRequired, 1, limits::kPixels)) {
    m.vit.patch = *v;
  }
  if (m.vit.image % m.vit.patch != 0) {
    r.error("patch",
            "patch (" + std::to_string(m.vit.patch) + ") must divide image (" + std::to_string(m.vit.image) + ")");
  }
}

void check_vit(Reader& r, const workload::ModelShape& m) {
  const std::int64_t tokens = m.vit.patches() + 1;
  if (m.max_seq != tokens) {
    r.error("max_seq", "max_seq (" + std::to_string(m.max_seq) + ") must be the patches plus the class token, " +
                           std::to_string(tokens));
  }
  if (m.causal) {
    r.error("causal", "a ViT's encoder attends both ways: causal = false");
  }
  if (m.position != workload::PositionKind::kLearned) {
    r.error("position", "a ViT adds learned positions: position = \"learned\"");
  }
}

void check_model(Reader& r, const workload::ModelShape& m) {
  if (m.moe && m.moe->top_k > m.moe->experts) {
    r.error("moe", "top_k (" + std::to_string(m.moe->top_k) + ") exceeds the routed experts (" +
                       std::to_string(m.moe->experts) + ")");
  }
  if (m.moe && m.moe->dense_layers >= m.layers) {
    r.error("moe", "dense_layers (" + std::to_string(m.moe->dense_layers) +
                       ") leaves no mixture-of-experts layer of the " + std::to_string(m.layers));
  }
  if (m.heads > 0 && m.hidden % m.heads != 0) {
    r.error("heads", "heads (" + std::to_string(m.heads) + ") must divide hidden (" + std::to_string(m.hidden) + ")");
  }
  if (m.kv_heads > 0 && m.heads % m.kv_heads != 0) {
    r.error("kv_heads",
            "kv_heads (" + std::to_string(m.kv_heads) + ") must divide heads (" + std::to_string(m.heads) + ")");
  }
}

}  // namespace gpusim::parse
