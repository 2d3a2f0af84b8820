// Each measured row predicted under its conditions by the functions the step model uses for that
// kind of work:
//   stream / L2:      physics::kernel_time of a bandwidth-bound kernel over the working set
//   latency:          the spec's pointer-chase latency per level
//   GEMM:             physics::kernel_time of the benchmark GEMM + one kernel gap per launch
//   attention:        the flash-attention forward and backward kernels of the lowering
//   host link:        physics::host_copy_bandwidth
//   p2p:              physics::p2p_time over the fabric's point-to-point bandwidth
//   collectives:      physics::collective_time, as bus bandwidth S·f(n) / t [nccl-tests-performance]
//   power:            physics::board_power of a compute- or bandwidth-bound kernel (by ridge point)
//   launch overhead:  physics::launch_cost, eager or from a CUDA graph
//   scenario:         the estimate of the named scenario, the named report key, with its band
#include <algorithm>
#include <cmath>
#include <map>
#include <variant>

#include "validation/internal.hpp"

namespace gpusim::validation {

std::pair<lowering::Op, lowering::Op> attention_ops(const Measurement& m) {
  const DType dt = m.dtype.value_or(DType::kBf16);
  const double h = m.heads * m.head_dim;
  // 16-bit inputs; multi-head attention (K and V as wide as Q).
  const lowering::AttentionShape shape{m.batch, m.seq_len, m.seq_len, h, h, m.causal ? 0.5 : 1.0, 2.0, 2.0};
  return {lowering::flash_attention_op(shape, lowering::Phase::kForward, dt),
          lowering::flash_attention_op(shape, lowering::Phase::kBackward, dt)};
}

physics::Algorithm algorithm_of(const Measurement& m) {
  return m.algorithm == ForcedAlgorithm::kRing   ? physics::Algorithm::kRing
         : m.algorithm == ForcedAlgorithm::kNvls ? physics::Algorithm::kNvls
                                                 : physics::Algorithm::kAuto;
}

physics::Collective collective_of(Benchmark b) {
  return b == Benchmark::kAllreduce       ? physics::Collective::kAllReduce
         : b == Benchmark::kReduceScatter ? physics::Collective::kReduceScatter
                                          : physics::Collective::kAllGather;
}

namespace {

using hardware::GpuSpec;
using hardware::System;

Prediction value(double v) { return Prediction{v, {}, std::nullopt}; }
Prediction none(std::string why) { return Prediction{std::nullopt, std::move(why), std::nullopt}; }

Prediction latency(const Measurement& m, const GpuSpec& g) {
  const Seconds t = m.benchmark == Benchmark::kLatencyL1   ? g.l1_latency
                    : m.benchmark == Benchmark::kLatencyL2 ? g.l2_latency
                                                           : g.memory_latency;
  return value(m.value_in_cycles ? t.value() * g.boost_clock.value() : t.value());
}

// A copy kernel over `bytes` of working set (both directions counted, as STREAM does): L2-resident
// when it fits.
Prediction stream(const Measurement& m, const GpuSpec& g) {
  lowering::Op op;
  op.kind = lowering::OpKind::kMemoryBound;
  // Without a stated size a stream row is a DRAM figure, an L2 row an L2-resident one.
  const Bytes fallback = m.benchmark == Benchmark::kL2Bandwidth ? g.l2_size * 0.5 : g.l2_size * 4.0;
  op.bytes = m.bytes.value_or(fallback);
  // What the benchmark writes: copy half its traffic, triad a third, reads nothing.
  op.write_share = m.benchmark == Benchmark::kStreamCopy    ? 0.5
                   : m.benchmark == Benchmark::kStreamTriad ? 1.0 / 3.0
                                                            : 0.0;
  return value((op.bytes / physics::kernel_time(op, g).time).value());
}

Prediction gemm(const Measurement& m, const GpuSpec& g) {
  const DType dt = m.dtype.value_or(DType::kBf16);
  if (!g.supports(dt)) {
    return none(std::string("the ") + g.name + " has no " + units::to_string(dt));
  }
  const lowering::Op op = lowering::benchmark_gemm(dt, m.m, m.n, m.k);
  // Back-to-back GEMMs run at the clock their power allows under the default limit.
  const Seconds t =
      physics::kernel_time(op, g, physics::kernel_clock(op, g, g.tdp)).time + g.efficiency.kernel_overhead;
  return value((op.flops / t).value());
}

Prediction attention(const Measurement& m, const GpuSpec& g) {
  const auto [fwd, bwd] = attention_ops(m);
  const Seconds t = physics::kernel_time(fwd, g, physics::kernel_clock(fwd, g, g.tdp)).time +
                    physics::kernel_time(bwd, g, physics::kernel_clock(bwd, g, g.tdp)).time +
                    g.efficiency.kernel_overhead * 2.0;
  return value(((fwd.flops + bwd.flops) / t).value());
}

Prediction p2p(const Measurement& m, const System& sys) {
  const physics::Fabric f = physics::make_fabric(sys);
  const double one_way =
      m.bytes ? (*m.bytes / physics::p2p_time(*m.bytes, f.intra_p2p, f.intra_alpha)).value() : f.intra_p2p.value();
  return value(m.bidirectional ? 2.0 * one_way : one_way);
}

Prediction collective(const Measurement& m, const System& sys) {
  const physics::Fabric f = physics::make_fabric(sys);
  if (!m.bytes) {  // a large-message plateau: latency terms vanish, bus bandwidth is the best algorithm's
    if (f.nodes > 1) {
      return none("a multi-node plateau needs the message size");
    }
    const bool nvls = m.benchmark == Benchmark::kAllreduce && m.gpus > 2 && f.nvls_bus > f.intra_bus &&
                      m.algorithm != ForcedAlgorithm::kRing;
    return value((nvls ? f.nvls_bus : f.ring_bus(m.gpus)).value());
  }
  const physics::Collective c = collective_of(m.benchmark);
  const Seconds t = physics::collective_cost(f, c, *m.bytes, m.gpus, algorithm_of(m)).time;
  return value(m.bytes->value() * physics::ring_cost(c, m.gpus).bytes_factor / t.value());
}

// An all-to-all's bandwidth as DeepEP reports it [deepseek-deepep]: the bytes each rank sends over
// its bottleneck link (NVLink inside one node, its NIC share across nodes) over the time, from
// physics::all_to_all_time; without a message size, that link's achievable bandwidth.
Prediction all_to_all(const Measurement& m, const System& sys) {
  const physics::Fabric f = physics::make_fabric(sys);
  const int local = std::min(m.gpus, f.gpus_per_node);
  const bool across = m.gpus > local;
  if (!m.bytes) {
    return value((across ? f.inter_bus : f.intra_bus).value());
  }
  const double n = m.gpus;
  const double share = across ? (n - local) / n : (local - 1.0) / n;
  return value(m.bytes->value() * share / physics::all_to_all_time(f, *m.bytes, m.gpus).value());
}

Prediction power(const Measurement& m, const System& sys) {
  if (!m.intensity) {
    return none("no arithmetic intensity given");
  }
  const GpuSpec& g = sys.gpu;
  const physics::PowerClock pc =
      physics::intensity_power(g, *m.intensity, m.kernel.find("gemm") != std::string::npos, sys.power_limit);
  return value(std::min(sys.power_limit, pc.power).value());
}

// The row's figure off the estimate of its scenario.
Prediction figure_of(const Measurement& m, const answer::Estimate& e) {
  if (auto v = answer::report_metric(e, m.metric)) {
    Prediction p = value(*v);
    p.band = answer::band_of(e, m.metric);  // the band of the figure, where it has one
    return p;
  }
  return none("the report has no value for " + m.metric);
}

std::string cannot_estimate(const InputError& e) {
  return "the scenario cannot be estimated: " + std::string(e.what());
}

// The estimate of a scenario row: no advice and no per-op shares (a row's figure is a report key).
answer::Options row_estimate(bool band, step::TableCache* tables) {
  answer::Options o;
  o.advice = false;
  o.uncertainty = band;
  o.tables = tables;
  o.op_shares = false;
  return o;
}

Prediction scenario_row(const Measurement& m, const scenario::Scenario& sc, bool band, step::TableCache* tables) {
  try {
    return figure_of(m, answer::estimate(sc, row_estimate(band, tables)));
  } catch (const InputError& e) {
    return none(cannot_estimate(e));
  }
}

// The workload at the cap against the same workload at the GPU's TDP: throughput, or GPU energy
// per unit of work (board power × step time / work per step).
Prediction power_limit_row(const Measurement& m, const scenario::Scenario& sc) {
  const hardware::GpuSpec& g = sc.system.gpu;
  if (*m.power_limit > g.tdp || *m.power_limit <= g.busy_floor) {
    return none(base::strfmt("the cap %.0f W is outside the modelled range (busy floor %.0f W, TDP %.0f W)",
                             m.power_limit->value(), g.busy_floor.value(), g.tdp.value()));
  }
  scenario::Scenario full = sc;
  full.system.power_limit = g.tdp;
  scenario::Scenario capped = sc;
  capped.system.power_limit = *m.power_limit;
  try {
    const step::Evaluation a = step::evaluate(full);
    const step::Evaluation b = step::evaluate(capped);
    if (m.metric == "speed") {
      return value(b.tokens_per_s / a.tokens_per_s);
    }
    const auto energy_per_token = [](const step::Evaluation& e) {
      return (e.gpu_avg_power * e.step.time).value() / e.tokens_per_step;
    };
    return value(energy_per_token(b) / energy_per_token(a));
  } catch (const InputError& e) {
    return none(std::string("the scenario cannot be estimated: ") + e.what());
  }
}

}  // namespace

std::vector<Subject> resolve(const std::vector<Measurement>& rows, const catalog::Catalog& catalog) {
  std::vector<Subject> out;
  out.reserve(rows.size());
  for (const Measurement& m : rows) {
    Subject s;
    s.row = &m;
    try {
      if (uses_scenario(m.benchmark)) {
        if (m.scored) {
          s.scenario =
              m.parsed ? scenario::resolve(catalog, *m.parsed) : scenario::load_scenario_file(catalog, m.scenario);
        }
      } else {
        s.system = scenario::make_system(catalog, m.gpu, std::max(1, m.gpus), box_size(m.gpus));
      }
    } catch (const InputError& e) {
      s.problem = (uses_scenario(m.benchmark) ? "the scenario cannot be loaded: " : "cannot build the system: ") +
                  std::string(e.what());
    }
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

Prediction predict_row(const Subject& s, bool band, step::TableCache* tables) {
  const Measurement& m = *s.row;
  if (!m.scored) {
    return none(m.note.empty() ? "not scored" : m.note);
  }
  if (!s.problem.empty()) {
    return none(s.problem);
  }
  if (m.benchmark == Benchmark::kScenario) {
    return scenario_row(m, *s.scenario, band, tables);
  }
  if (m.benchmark == Benchmark::kPowerLimit) {
    return power_limit_row(m, *s.scenario);
  }
  const System& sys = *s.system;
  const GpuSpec& g = sys.gpu;
  try {
    switch (m.benchmark) {
      case Benchmark::kStreamCopy:
      case Benchmark::kStreamTriad:
      case Benchmark::kStreamRead:
      case Benchmark::kL2Bandwidth:
        return stream(m, g);
      case Benchmark::kLatencyL1:
      case Benchmark::kLatencyL2:
      case Benchmark::kLatencyDram:
        return latency(m, g);
      case Benchmark::kGemm:
        return gemm(m, g);
      case Benchmark::kAttention:
        return attention(m, g);
      case Benchmark::kLaunchOverhead:
        return value((m.graph ? g.efficiency.launch_graph : g.efficiency.launch_eager).value());
      case Benchmark::kH2d:
      case Benchmark::kD2h:
        return value(physics::host_copy_bandwidth(sys, m.pinned).value());
      case Benchmark::kP2p:
        return p2p(m, sys);
      case Benchmark::kAllreduce:
      case Benchmark::kReduceScatter:
      case Benchmark::kAllGather:
        if (m.gpus < 2) {
          return none("a collective needs at least 2 GPUs");
        }
        return collective(m, sys);
      case Benchmark::kAllToAll:
        if (m.gpus < 2) {
          return none("an all-to-all needs at least 2 GPUs");
        }
        return all_to_all(m, sys);
      case Benchmark::kPower:
        return power(m, sys);
      case Benchmark::kScenario:
      case Benchmark::kPowerLimit:
        break;
    }
  } catch (const InputError& e) {
    return none(e.what());
  }
  return none("not predicted");
}

}  // namespace

Prediction predict(const Subject& s, step::TableCache* tables) { return predict_row(s, false, tables); }

std::vector<Prediction> predict_all(const std::vector<Subject>& subjects, bool band) {
  // Scenario rows by their scenario file: rows resolved together share one catalog, so one path
  // is one scenario, estimated once however many of its figures were measured. The estimates and
  // the other rows are independent: each is made on any thread into its own slot.
  auto by_scenario = [](const Subject& s) {
    return s.row->benchmark == Benchmark::kScenario && s.row->scored && s.problem.empty();
  };
  std::map<std::string, std::size_t> slot_of;  // scenario path -> its slot in `estimates`
  std::vector<const Subject*> first;           // the subject that estimates each slot
  for (const Subject& s : subjects) {
    if (by_scenario(s) && slot_of.emplace(s.row->scenario, first.size()).second) {
      first.push_back(&s);
    }
  }
  std::vector<std::variant<answer::Estimate, std::string>> estimates(first.size());
  std::vector<Prediction> out(subjects.size());
  const std::size_t work = first.size() + subjects.size();
  base::parallel_for(work, 0, [&](std::size_t k) {
    if (k < first.size()) {
      try {
        estimates[k] = answer::estimate(*first[k]->scenario, row_estimate(band, nullptr));
      } catch (const InputError& e) {
        estimates[k] = cannot_estimate(e);
      }
    } else if (const Subject& s = subjects[k - first.size()]; !by_scenario(s)) {
      out[k - first.size()] = predict_row(s, band, nullptr);
    }
  });
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    const Subject& s = subjects[i];
    if (by_scenario(s)) {
      const auto& e = estimates[slot_of.at(s.row->scenario)];
      const auto* estimate = std::get_if<answer::Estimate>(&e);
      out[i] = estimate != nullptr ? figure_of(*s.row, *estimate) : none(std::get<std::string>(e));
    }
  }
  return out;
}

Prediction predict_with_band(const Subject& s) { return predict_row(s, true, nullptr); }

}  // namespace gpusim::validation
