// Prediction of each benchmark under its measured conditions, by the models `estimate` uses:
//   stream / L2:      BW_spec · η_dram (or l2_bandwidth · η_l2 when the working set fits in L2)
//   latency:          the spec's pointer-chase latency per level
//   GEMM:             kernel model (roofline + wave quantization) + one kernel gap per launch
//   attention:        flash-attention forward + backward (3.5x forward FLOPs, Dao 2023)
//   host link:        host_copy_bandwidth (comm.hpp)
//   p2p:              peer link per direction · link efficiency, or PCIe (staged without P2P)
//   collectives:      bus bandwidth S·f(n) / t from the alpha–beta model (nccl-tests convention)
//   power:            idle + (TDP − idle) · activity of a compute- or memory-bound kernel
//   launch overhead:  host launch cost per kernel, eager or from a CUDA graph
//   scenario:         `estimate` of the named scenario, the named report key
#include <cmath>

#include "gpusim/model/comm.hpp"
#include "gpusim/model/estimate.hpp"
#include "gpusim/model/kernel.hpp"
#include "gpusim/report/report.hpp"
#include "gpusim/validate/validate.hpp"

namespace gpusim {
namespace {

Prediction value(double v) { return Prediction{v, {}}; }
Prediction none(std::string why) { return Prediction{std::nullopt, std::move(why)}; }

Prediction latency(const Measurement& m, const GpuSpec& g) {
  const Seconds t = m.benchmark == Benchmark::kLatencyL1   ? g.l1_latency
                    : m.benchmark == Benchmark::kLatencyL2 ? g.l2_latency
                                                           : g.memory_latency;
  return value(m.value_in_cycles ? t.value() * g.boost_clock.value() : t.value());
}

Prediction gemm(const Measurement& m, const GpuSpec& g) {
  const DType dt = m.dtype.value_or(DType::kBf16);
  if (!g.supports(dt)) {
    return none(std::string("the ") + g.name + " has no " + to_string(dt));
  }
  const Op op = benchmark_gemm(dt, m.m, m.n, m.k);
  const Seconds t = kernel_time(op, g).time + g.efficiency.kernel_overhead;
  return value((op.flops / t).value());
}

Prediction attention(const Measurement& m, const GpuSpec& g) {
  const DType dt = m.dtype.value_or(DType::kBf16);
  const double h = m.heads * m.head_dim;
  const double fwd_flops = 4.0 * m.batch * m.seq_len * m.seq_len * h * (m.causal ? 0.5 : 1.0);
  const double tokens = m.batch * m.seq_len;
  Op fwd;
  fwd.kind = OpKind::kAttention;
  fwd.dtype = dt;
  fwd.flops = Flop(fwd_flops);
  fwd.bytes = Bytes(4.0 * tokens * h * 2.0);  // read Q, K, V, write O in 16-bit
  Op bwd = fwd;
  bwd.flops = Flop(2.5 * fwd_flops);
  bwd.bytes = Bytes(8.0 * tokens * h * 2.0);
  const Seconds t = kernel_time(fwd, g).time + kernel_time(bwd, g).time + g.efficiency.kernel_overhead * 2.0;
  return value(3.5 * fwd_flops / t.value());
}

Prediction p2p(const Measurement& m, const SystemConfig& sys) {
  const GpuSpec& g = sys.gpu;
  double bw = 0;
  if (sys.intra_node.kind == LinkKind::kNvlink) {
    bw = g.peer_bandwidth.value() * sys.intra_node.efficiency;
  } else if (g.p2p_over_pcie) {
    bw = sys.pcie.bandwidth.value() * sys.pcie.efficiency;
  } else {
    bw = sys.pcie.bandwidth.value() * sys.pcie.staged_efficiency;
  }
  return value(m.bidirectional ? 2.0 * bw : bw);
}

Prediction collective(const Measurement& m, const SystemConfig& sys) {
  const Fabric f = make_fabric(sys);
  if (!m.bytes) {  // a large-message plateau: latency terms vanish, bus bandwidth is the link's
    if (f.nodes > 1) {
      return none("a multi-node plateau needs the message size");
    }
    return value(f.intra_bus.value());
  }
  const double n = m.gpus;
  const Bytes s = *m.bytes;
  if (m.benchmark == Benchmark::kAllreduce) {
    const Seconds t = allreduce_time(f, s, m.gpus);
    return value(s.value() * 2.0 * (n - 1.0) / n / t.value());
  }
  const Seconds t = reduce_scatter_time(f, s, m.gpus);
  return value(s.value() * (n - 1.0) / n / t.value());
}

Prediction power(const Measurement& m, const GpuSpec& g) {
  if (!m.intensity) {
    return none("no arithmetic intensity given");
  }
  // Compute-bound when the kernel's FLOP per byte exceeds the ridge of its datatype.
  const bool tensor = m.kernel.find("gemm") != std::string::npos;
  const FlopPerSecond peak = g.peak_for(tensor ? DType::kBf16 : DType::kFp32) * g.efficiency.gemm;
  const double ridge = peak.value() / (g.memory_bandwidth.value() * g.efficiency.dram);
  const double activity = *m.intensity < ridge ? g.activity.memory : (tensor ? g.activity.gemm : g.activity.simt);
  return value((g.idle_power + (g.tdp - g.idle_power) * activity).value());
}

Prediction scenario(const Measurement& m, const Catalog& cat) {
  try {
    const Scenario sc = load_scenario_file(cat, m.scenario);
    const Estimate e = estimate(sc, cat);
    if (auto v = report_metric(e, m.metric)) {
      return value(*v);
    }
    return none("the report has no value for " + m.metric);
  } catch (const InputError& e) {
    return none("the scenario cannot be estimated: " + std::string(e.what()));
  }
}

}  // namespace

Prediction predict(const Measurement& m, const Catalog& cat) {
  if (!m.scored) {
    return none(m.note.empty() ? "not scored" : m.note);
  }
  if (m.benchmark == Benchmark::kScenario) {
    return scenario(m, cat);
  }
  SystemConfig sys;
  try {
    sys = make_system(cat, m.gpu, std::max(1, m.gpus), box_size(m.gpus));
  } catch (const InputError& e) {
    return none(std::string("cannot build the system: ") + e.what());
  }
  const GpuSpec& g = sys.gpu;
  switch (m.benchmark) {
    case Benchmark::kStreamCopy:
    case Benchmark::kStreamTriad:
    case Benchmark::kStreamRead:
      if (m.bytes && *m.bytes < g.l2_size) {
        return value(g.l2_bandwidth.value() * g.efficiency.l2);
      }
      return value(g.memory_bandwidth.value() * g.efficiency.dram);
    case Benchmark::kL2Bandwidth:
      return value(g.l2_bandwidth.value() * g.efficiency.l2);
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
      return value(host_copy_bandwidth(sys, m.pinned).value());
    case Benchmark::kP2p:
      return p2p(m, sys);
    case Benchmark::kAllreduce:
    case Benchmark::kReduceScatter:
    case Benchmark::kAllGather:
      if (m.gpus < 2) {
        return none("a collective needs at least 2 GPUs");
      }
      return collective(m, sys);
    case Benchmark::kPower:
      return power(m, g);
    case Benchmark::kScenario:
      break;
  }
  return none("not predicted");
}

}  // namespace gpusim
