// Least-squares calibration (equations in include/gpusim/validation.hpp). Every coefficient comes
// from the prediction's own functions evaluated with the unknown set to 1, so a fitted value means
// exactly what the step model does with it.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "validation/internal.hpp"

namespace gpusim::validation {

using base::strfmt;
using hardware::GpuSpec;

namespace {

// One equation of a fit: coefficients times unknowns = rhs.
struct Equation {
  std::vector<double> a;
  double rhs = 0;
  const Measurement* row = nullptr;
};

// Least squares A x = b by column-pivoted QR; nullopt when A is rank deficient. With `relative`,
// each equation is divided by its right-hand side, so a 34 ms GEMM and an 18 us one weigh alike
// (errors are judged relative to the measurement everywhere else too).
std::optional<Eigen::VectorXd> solve(const std::vector<Equation>& eqs, std::size_t unknowns, bool relative = false) {
  if (eqs.size() < unknowns) {
    return std::nullopt;
  }
  Eigen::MatrixXd a(static_cast<Eigen::Index>(eqs.size()), static_cast<Eigen::Index>(unknowns));
  Eigen::VectorXd b(static_cast<Eigen::Index>(eqs.size()));
  for (std::size_t i = 0; i < eqs.size(); ++i) {
    const double w = relative && eqs[i].rhs != 0 ? 1.0 / eqs[i].rhs : 1.0;
    for (std::size_t j = 0; j < unknowns; ++j) {
      a(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = eqs[i].a[j] * w;
    }
    b(static_cast<Eigen::Index>(i)) = eqs[i].rhs * w;
  }
  // Scale columns so a time column in microseconds and one in seconds are conditioned alike.
  Eigen::VectorXd scale = a.colwise().norm().transpose();
  for (Eigen::Index j = 0; j < scale.size(); ++j) {
    if (scale(j) == 0) {
      return std::nullopt;
    }
    a.col(j) /= scale(j);
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  qr.setThreshold(1e-10);
  if (qr.rank() < static_cast<Eigen::Index>(unknowns)) {
    return std::nullopt;
  }
  Eigen::VectorXd x = qr.solve(b);
  return Eigen::VectorXd(x.cwiseQuotient(scale));
}

struct Fitter {
  CalibrationResult& out;
  std::string scope;
  std::vector<FittedParam> carry;  // values of the previous round of an alternating fit

  // Records a fitted value, or keeps the prior and says why.
  void record(const std::string& table, const std::string& key, double prior, std::optional<double> v,
              const std::vector<Equation>& eqs, double lo, double hi, bool is_time, const std::string& why_missing) {
    if (eqs.empty()) {
      return;
    }
    if (!v || !std::isfinite(*v) || *v <= lo || *v > hi) {
      out.kept.push_back(strfmt(
          "%s %s.%s: %s (kept %.4g)", scope.c_str(), table.c_str(), key.c_str(),
          v && std::isfinite(*v) ? strfmt("fit %.4g is outside (%g, %g]", *v, lo, hi).c_str() : why_missing.c_str(),
          prior));
      return;
    }
    FittedParam p{scope, table, key, prior, *v, is_time, {}, {}};
    std::set<std::string> files;
    for (const auto& e : eqs) {
      p.rows.push_back(e.row->id);
      files.insert(e.row->file);
    }
    p.files.assign(files.begin(), files.end());
    out.params.push_back(std::move(p));
  }

  void ratio(const std::string& key, const std::vector<Equation>& eqs, double prior, double hi) {
    const auto x = solve(eqs, 1);
    record("efficiency", key, prior, x ? std::optional<double>((*x)(0)) : std::nullopt, eqs, 0, hi, false, "no rows");
  }

  // t = sum_j c_j / eta_j + o (one efficiency per column, the offset last): all of them when the
  // rows determine them, else the efficiencies with the offset fixed at its prior. Columns no row
  // uses are dropped. `offset_base` is subtracted from the fitted offset before it is recorded.
  void inverse_fit(const std::vector<std::string>& keys, const std::vector<double>& priors,
                   const std::string& offset_key, std::vector<Equation> eqs, double prior_offset, double offset_base,
                   double hi) {
    if (eqs.empty()) {
      return;
    }
    std::vector<std::size_t> cols;  // efficiency columns in use
    for (std::size_t j = 0; j < keys.size(); ++j) {
      if (std::any_of(eqs.begin(), eqs.end(), [j](const Equation& e) { return e.a[j] != 0; })) {
        cols.push_back(j);
      }
    }
    auto project = [&](bool with_offset) {
      std::vector<Equation> projected;
      for (const auto& e : eqs) {
        Equation p{{}, e.rhs, e.row};
        for (const std::size_t j : cols) {
          p.a.push_back(e.a[j]);
        }
        if (with_offset) {
          p.a.push_back(1.0);
        } else {
          p.rhs -= prior_offset;
        }
        projected.push_back(p);
      }
      return projected;
    };
    const auto with = project(true);
    auto x = solve(with, cols.size() + 1, true);
    bool offset_fitted = x && (*x)(static_cast<Eigen::Index>(cols.size())) >= offset_base;
    if (!offset_fitted) {
      out.kept.push_back(strfmt("%s efficiency.%s: %zu row(s) cannot separate it from the efficiencies (kept %.4g)",
                                scope.c_str(), offset_key.c_str(), eqs.size(), prior_offset - offset_base));
      x = solve(project(false), cols.size(), true);
    }
    for (std::size_t i = 0; i < cols.size(); ++i) {
      std::vector<Equation> used;
      for (const auto& e : eqs) {
        if (e.a[cols[i]] != 0) {
          used.push_back(e);
        }
      }
      std::optional<double> v;
      if (x) {
        v = 1.0 / (*x)(static_cast<Eigen::Index>(i));
      }
      record("efficiency", keys[cols[i]], priors[cols[i]], v, used, 0, hi, false, "rank-deficient rows");
    }
    if (offset_fitted) {
      record("efficiency", offset_key, prior_offset - offset_base,
             (*x)(static_cast<Eigen::Index>(cols.size())) - offset_base, eqs, -1e-300, 1.0, true, "");
    }
  }

  void fit(const std::vector<const Subject*>& rows);
  [[nodiscard]] GpuSpec with_fits(GpuSpec g) const;
  void fit_power_and_kernels(const std::vector<const Subject*>& rows, const GpuSpec& first);
  void fit_collectives(const std::vector<const Subject*>& rows, const hardware::Efficiency& prior);
};

// The row's system with every efficiency the fits solve for set to 1 (and the fitted latencies 0).
hardware::System unit_system(const hardware::System& sys) {
  hardware::System u = sys;
  hardware::Efficiency& e = u.gpu.efficiency;
  e.dram = e.l2 = e.host_link = e.peer_link = e.attention = e.gemm = 1.0;
  e.gemm_fp8 = 1.0;
  e.gemm_latency = Seconds(0);
  return u;
}

// The GPU with the values this fit has recorded so far applied.
GpuSpec Fitter::with_fits(GpuSpec g) const {
  std::vector<const FittedParam*> all;
  for (const FittedParam& p : carry) {
    all.push_back(&p);
  }
  for (const FittedParam& p : out.params) {
    all.push_back(&p);
  }
  for (const FittedParam* pp : all) {
    const FittedParam& p = *pp;
    if (p.scope != scope) {
      continue;
    }
    hardware::Efficiency& e = g.efficiency;
    const std::map<std::string, double*> values = {{"efficiency.dram", &e.dram},
                                                   {"efficiency.l2", &e.l2},
                                                   {"efficiency.host_link", &e.host_link},
                                                   {"efficiency.gemm", &e.gemm},
                                                   {"efficiency.attention", &e.attention},
                                                   {"power.memory_activity", &g.activity.memory},
                                                   {"power.simt_activity", &g.activity.simt},
                                                   {"power.gemm_activity", &g.activity.gemm}};
    const std::string key = p.table + "." + p.key;
    if (const auto it = values.find(key); it != values.end()) {
      *it->second = p.value;
    } else if (key == "efficiency.gemm_fp8") {
      e.gemm_fp8 = p.value;
    } else if (key == "efficiency.gemm_latency") {
      e.gemm_latency = Seconds(p.value);
    }
  }
  return g;
}

// Three passes, each with the fits of the ones before applied: bandwidths, launches and
// collectives first; then board power (a kernel's power depends on its DRAM traffic); then GEMM
// and attention efficiency (a kernel's clock depends on its power).
void Fitter::fit(const std::vector<const Subject*>& rows) {
  if (rows.empty()) {
    return;
  }
  const GpuSpec& first = rows.front()->system->gpu;
  const hardware::Efficiency& e = first.efficiency;
  std::vector<Equation> dram, l2, host, launch, launch_graph;
  std::vector<const Subject*> coll_rows;
  for (const Subject* s : rows) {
    const Measurement* m = s->row;
    const GpuSpec& g = s->system->gpu;
    const hardware::System unit = unit_system(*s->system);
    switch (m->benchmark) {
      case Benchmark::kStreamCopy:
      case Benchmark::kStreamTriad:
      case Benchmark::kStreamRead:
      case Benchmark::kL2Bandwidth: {
        // measured = η · (the prediction at η = 1)
        const Prediction at_unit = predict(Subject{m, unit, std::nullopt, {}});
        lowering::Op op;
        op.kind = lowering::OpKind::kMemoryBound;
        op.bytes = m->bytes.value_or(m->benchmark == Benchmark::kL2Bandwidth ? g.l2_size * 0.5 : g.l2_size * 4.0);
        (physics::l2_resident(op, g) ? l2 : dram).push_back({{*at_unit.value}, m->value, m});
        break;
      }
      case Benchmark::kH2d:
      case Benchmark::kD2h:
        if (m->pinned) {
          host.push_back({{physics::host_copy_bandwidth(unit, true).value()}, m->value, m});
        }
        break;
      case Benchmark::kAllreduce:
      case Benchmark::kReduceScatter:
      case Benchmark::kAllGather: {
        if (!m->bytes || m->gpus < 2) {
          break;
        }
        const physics::Fabric f = physics::make_fabric(*s->system);
        if (f.nodes > 1 || f.host_staged || m->gpus > f.gpus_per_node) {
          break;  // only single-node GPU-to-GPU links are fitted here
        }
        coll_rows.push_back(s);
        break;
      }
      case Benchmark::kLaunchOverhead:
        (m->graph ? launch_graph : launch).push_back({{1.0}, m->value, m});
        break;
      default:
        break;
    }
  }
  ratio("dram", dram, e.dram, 1.0);
  ratio("l2", l2, e.l2, 1.0);
  ratio("host_link", host, e.host_link, 1.0);
  // Host launch cost per kernel, eager and from a CUDA graph: the mean of the launch rows.
  for (const auto& [key, eqs, prior] : {std::tuple{"launch_eager", &launch, e.launch_eager.value()},
                                        std::tuple{"launch_graph", &launch_graph, e.launch_graph.value()}}) {
    const auto x = solve(*eqs, 1);
    record("efficiency", key, prior, x ? std::optional<double>((*x)(0)) : std::nullopt, *eqs, -1e-300, 1.0, true,
           "no rows");
  }
  // A collective's efficiencies belong to the GPU and its links (NVLink generation, bridge,
  // switch), which differ inside an architecture: they are fitted per GPU only.
  if (scope.rfind("arch:", 0) != 0) {
    fit_collectives(coll_rows, e);
  }

  const std::size_t kept_before = out.kept.size();
  // Power and efficiency depend on each other (a kernel's DRAM traffic follows its FLOP rate, its
  // clock its power): alternate the two fits a few times, keeping the last.
  for (int round = 0; round < 4; ++round) {
    if (round > 0) {
      const auto fitted_here = [this](const FittedParam& p) {
        return p.scope == scope && (p.table == "power" || p.key == "gemm" || p.key == "gemm_fp8" ||
                                    p.key == "gemm_latency" || p.key == "attention");
      };
      // The previous round's values stay in force (carry) while this round fits them again.
      carry.clear();
      std::copy_if(out.params.begin(), out.params.end(), std::back_inserter(carry), fitted_here);
      out.params.erase(std::remove_if(out.params.begin(), out.params.end(), fitted_here), out.params.end());
      out.kept.resize(kept_before);
    }
    fit_power_and_kernels(rows, first);
  }
}

void Fitter::fit_power_and_kernels(const std::vector<const Subject*>& rows, const GpuSpec& first) {
  const hardware::Efficiency& e = first.efficiency;
  // Board power of a kernel at the clock it ran: unthrottled (the highest clock) below the TDP;
  // at the limit, the clock the prior activities give.
  std::vector<Equation> mem_eqs, gemm_eqs, simt_eqs;
  for (const Subject* s : rows) {
    const Measurement* m = s->row;
    if (m->benchmark != Benchmark::kPower || !m->intensity) {
      continue;
    }
    const GpuSpec g = with_fits(s->system->gpu);
    const bool tensor = m->kernel.find("gemm") != std::string::npos;
    const physics::PowerClock pc = physics::intensity_power(g, *m->intensity, tensor, g.tdp);
    const double clock = m->value < 0.98 * g.tdp.value() ? physics::max_clock_ratio(g) : pc.clock;
    const double activity = physics::activity_from_power(g, Watts(m->value), pc.mix.dram, clock);
    (pc.mix.memory > 0 ? mem_eqs : (tensor ? gemm_eqs : simt_eqs)).push_back({{1.0}, activity, m});
  }
  // Activities above 1 are work that would draw more than the TDP at the rated clock.
  constexpr double kMaxActivity = 4.0;
  for (const auto& [key, eqs, prior] : {std::tuple{"memory_activity", &mem_eqs, first.activity.memory},
                                        std::tuple{"simt_activity", &simt_eqs, first.activity.simt},
                                        std::tuple{"gemm_activity", &gemm_eqs, first.activity.gemm}}) {
    const auto x = solve(*eqs, 1);
    record("power", key, prior, x ? std::optional<double>((*x)(0)) : std::nullopt, *eqs, 0, kMaxActivity, false,
           "no rows");
  }

  // GEMM and attention efficiency at the clock each kernel sustains back to back.
  std::vector<Equation> gemm, attn;
  for (const Subject* s : rows) {
    const Measurement* m = s->row;
    const GpuSpec g = with_fits(s->system->gpu);
    hardware::GpuSpec unit = unit_system(*s->system).gpu;
    unit.activity = g.activity;
    if (m->benchmark == Benchmark::kGemm) {
      const DType dt = m->dtype.value_or(DType::kBf16);
      if (!g.supports(dt)) {
        continue;
      }
      const lowering::Op op = lowering::benchmark_gemm(dt, m->m, m->n, m->k);
      const double clock = physics::kernel_clock(op, g, g.tdp);
      if (!physics::kernel_time(op, g, clock).compute_bound()) {
        continue;  // a bandwidth-bound GEMM says nothing about GEMM efficiency
      }
      const double c = physics::kernel_time(op, unit, clock).compute.value();
      const bool fp8 = dt == DType::kFp8;
      gemm.push_back({{fp8 ? 0.0 : c, fp8 ? c : 0.0}, op.flops.value() / m->value, m});
    } else if (m->benchmark == Benchmark::kAttention) {
      // t = c / η + 2 gaps: the two kernel gaps are taken off once the gap is known (below).
      const auto [fwd, bwd] = attention_ops(*m);
      const double c = (physics::kernel_time(fwd, unit, physics::kernel_clock(fwd, g, g.tdp)).compute +
                        physics::kernel_time(bwd, unit, physics::kernel_clock(bwd, g, g.tdp)).compute)
                           .value();
      attn.push_back({{c}, (fwd.flops + bwd.flops).value() / m->value, m});
    }
  }
  // A timed GEMM loop pays the gap between kernels on top of the GEMM's own fixed latency.
  const double overhead = e.kernel_overhead.value();
  inverse_fit({"gemm", "gemm_fp8"}, {e.gemm, e.gemm_fp8.value_or(e.gemm)}, "gemm_latency", gemm,
              e.gemm_latency.value() + overhead, overhead, 2.0);
  for (auto& eq : attn) {
    eq.rhs -= 2.0 * overhead;
  }
  const auto x = solve(attn, 1);
  record("efficiency", "attention", e.attention, x ? std::optional<double>(1.0 / (*x)(0)) : std::nullopt, attn, 0, 1.0,
         false, "no rows");
}

// Collectives take the fastest protocol [nccl-source] (or the algorithm the row forced), so each
// row is one linear equation in the call cost c and the inverse efficiencies of its protocol:
//   LL:      t − α_LL − S·f / B_LL = c                    (B_LL at the current estimate)
//   Simple:  t − α_S               = c + (S·f / B_link) · 1/η_peer_link + steps · δ_simple_step
//   LL128:   t − α_LL128           = c + (S·f / B_link) · 1/(η_peer_link · η_ll128)
//   NVLS:    t − latency           = c + (S·f / B_link) · 1/η_nvls + rounds(S) · τ_nvls_round
// solved jointly (columns no row uses dropped; c kept at its prior when the rows cannot separate
// it). The protocol a row runs in depends on the parameters, so the fit alternates with a fresh
// choice of protocols until the choice settles.
void Fitter::fit_collectives(const std::vector<const Subject*>& rows, const hardware::Efficiency& prior) {
  if (rows.empty()) {
    return;
  }
  enum Col { kCall, kSimple, kLL128, kNvls, kStep, kRound, kCols };
  hardware::Efficiency cur = prior;
  std::vector<Equation> eqs;
  std::array<std::vector<Equation>, kCols> used;
  bool call_fitted = false;
  bool step_fitted = false;
  bool round_fitted = false;
  for (int round = 0; round < 8; ++round) {
    eqs.clear();
    for (auto& u : used) {
      u.clear();
    }
    for (const Subject* s : rows) {
      const Measurement* m = s->row;
      hardware::System sys = *s->system;
      sys.gpu.efficiency = cur;
      const physics::Fabric f = physics::make_fabric(sys);
      const physics::Collective c = collective_of(m->benchmark);
      const physics::RingCost ring = physics::ring_cost(c, m->gpus);
      const double sf = m->bytes->value() * ring.bytes_factor;
      const double t = sf / m->value;
      // The ring's link bandwidth for this group (on a full mesh, the group's k − 1 links).
      const double link = (f.ring_bus(std::min(m->gpus, f.gpus_per_node)) / cur.peer_link).value();
      const std::string algo = physics::collective_cost(f, c, *m->bytes, m->gpus, algorithm_of(*m)).algorithm;
      Equation e{std::vector<double>(kCols, 0.0), 0, m};
      e.a[kCall] = 1.0;
      int col = -1;
      if (algo == "NVLS") {
        e.rhs = t - f.nvls_latency.value();
        e.a[kNvls] = sf / (f.nvls_bus / cur.nvls).value();
        e.a[kRound] = physics::nvls_rounds(f, *m->bytes, m->gpus);
        col = kNvls;
      }
      for (const physics::ProtocolCost& p : f.protocols) {
        if (algo != std::string("ring/") + base::name_in(hardware::kProtocolNames, p.protocol)) {
          continue;
        }
        const double hop =
            p.intra_hop.value() - (p.protocol == hardware::Protocol::kSimple ? cur.simple_step.value() : 0);
        const double alpha = p.base.value() + ring.steps * hop;
        e.rhs = t - alpha;
        if (p.protocol == hardware::Protocol::kSimple) {
          e.a[kStep] = ring.steps;
        }
        if (p.protocol == hardware::Protocol::kLL) {
          e.rhs -= sf / (p.intra_bus * f.mesh_share(std::min(m->gpus, f.gpus_per_node))).value();
        } else {
          col = p.protocol == hardware::Protocol::kSimple ? kSimple : kLL128;
          e.a[static_cast<std::size_t>(col)] = sf / link;
        }
      }
      if (col >= 0) {
        used[static_cast<std::size_t>(col)].push_back(e);
      }
      used[kCall].push_back(e);
      eqs.push_back(e);
    }
    std::vector<std::size_t> cols;
    for (std::size_t j = 0; j < kCols; ++j) {
      if (std::any_of(eqs.begin(), eqs.end(), [j](const Equation& q) { return q.a[j] != 0; })) {
        cols.push_back(j);
      }
    }
    // The fixed terms the rows may not separate (the step latency, then the call cost) are dropped
    // in that order, each then held at its current value, until the rest is determined.
    auto solve_with = [&](const std::vector<std::size_t>& keep) {
      std::vector<Equation> projected;
      for (const Equation& q : eqs) {
        Equation p{{}, q.rhs, q.row};
        for (std::size_t j = 0; j < kCols; ++j) {
          if (std::find(keep.begin(), keep.end(), j) != keep.end()) {
            p.a.push_back(q.a[j]);
          } else if (j == kCall) {
            p.rhs -= q.a[j] * cur.collective_call.value();
          } else if (j == kStep) {
            p.rhs -= q.a[j] * cur.simple_step.value();
          } else if (j == kRound) {
            p.rhs -= q.a[j] * cur.nvls_round.value();
          }
        }
        projected.push_back(p);
      }
      auto x = solve(projected, keep.size(), true);
      if (x && std::any_of(keep.begin(), keep.end(), [&](std::size_t j) {
            const double v = (*x)(static_cast<Eigen::Index>(std::find(keep.begin(), keep.end(), j) - keep.begin()));
            return (j == kCall || j == kStep || j == kRound) && v <= 0;
          })) {
        x.reset();
      }
      return x;
    };
    auto x = solve_with(cols);
    auto has = [&](std::size_t j) { return x && std::find(cols.begin(), cols.end(), j) != cols.end(); };
    for (const std::size_t drop : {kRound, kStep, kCall}) {
      if (x) {
        break;
      }
      cols.erase(std::remove(cols.begin(), cols.end(), drop), cols.end());
      x = solve_with(cols);
    }
    step_fitted = has(kStep);
    call_fitted = has(kCall);
    round_fitted = has(kRound);
    if (!x) {
      break;
    }
    const hardware::Efficiency before = cur;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const double v = (*x)(static_cast<Eigen::Index>(i));
      if (v <= 0) {
        continue;
      }
      switch (cols[i]) {
        case kCall:
          cur.collective_call = Seconds(v);
          break;
        case kSimple:
          cur.peer_link = 1.0 / v;
          break;
        case kLL128:
          cur.ll128 = 1.0 / (v * before.peer_link);  // the column is 1/(η_peer_link · η_ll128)
          break;
        case kNvls:
          cur.nvls = 1.0 / v;
          break;
        case kStep:
          cur.simple_step = Seconds(v);
          break;
        case kRound:
          cur.nvls_round = Seconds(v);
          break;
        default:
          break;
      }
    }
  }
  if (call_fitted) {
    record("efficiency", "collective_call", prior.collective_call.value(), cur.collective_call.value(), used[kCall],
           -1e-300, 1e-3, true, "");
  } else if (!used[kCall].empty()) {
    out.kept.push_back(strfmt("%s efficiency.collective_call: %zu row(s) cannot separate it (kept %.4g us)",
                              scope.c_str(), used[kCall].size(), prior.collective_call.value() * 1e6));
  }
  record("efficiency", "peer_link", prior.peer_link, cur.peer_link, used[kSimple], 0, 1.0, false, "no rows");
  record("efficiency", "ll128", prior.ll128.value_or(1.0), cur.ll128.value_or(1.0), used[kLL128], 0, 1.0, false,
         "no rows");
  record("efficiency", "nvls", prior.nvls, cur.nvls, used[kNvls], 0, 4.0, false, "no rows");
  if (round_fitted) {
    record("efficiency", "nvls_round", prior.nvls_round.value(), cur.nvls_round.value(), used[kNvls], -1e-300, 1e-3,
           true, "");
  }
  if (step_fitted) {
    record("efficiency", "simple_step", prior.simple_step.value(), cur.simple_step.value(), used[kSimple], -1e-300,
           1e-3, true, "");
  }
}

}  // namespace

catalog::Catalog with_overlay(const catalog::Catalog& base, const std::vector<FittedParam>& params) {
  catalog::Catalog c = base;
  for (const auto& f : overlay_files(params)) {
    const std::string folder = f.relative_path.substr(0, f.relative_path.find('/'));
    const std::string file = f.relative_path.substr(f.relative_path.find('/') + 1);
    const catalog::SpecKind kind = base::value_in(catalog::kSpecFolders, folder).value_or(catalog::SpecKind::kGpu);
    c.add_file(kind, file.substr(0, file.size() - 5), catalog::SpecFile{"<calibration>/" + f.relative_path, f.text});
  }
  return c;
}

namespace {

// Median |error| over `rows` with their systems resolved under `catalog`.
double median_error(const std::vector<Measurement>& rows, const catalog::Catalog& catalog) {
  std::vector<double> errs;
  for (const Subject& s : resolve(rows, catalog)) {
    const Prediction p = predict(s);
    if (p.value && s.row->value != 0) {
      errs.push_back(std::fabs(*p.value / s.row->value - 1.0));
    }
  }
  return summarize("", errs).median;
}

// Least squares minimizes squared relative error; the project judges median |error|. A fit that
// raises the median |error| of its own rows is dropped, and the prior kept.
// Judges the GPU-level fits first (with no architecture fits present, which would otherwise stand
// in for a dropped GPU fit), then the architecture fits over the kept GPU fits.
void keep_only_improvements(const std::vector<const Measurement*>& rows, const catalog::Catalog& catalog,
                            CalibrationResult& r) {
  std::vector<FittedParam> gpu_params, arch_params;
  for (auto& p : r.params) {
    (p.scope.rfind("arch:", 0) == 0 ? arch_params : gpu_params).push_back(std::move(p));
  }
  auto judge = [&](std::vector<FittedParam>& params, const std::vector<FittedParam>& fixed) {
    for (std::size_t i = 0; i < params.size();) {
      std::vector<Measurement> used;
      for (const Measurement* m : rows) {
        if (std::find(params[i].rows.begin(), params[i].rows.end(), m->id) != params[i].rows.end() &&
            std::find(params[i].files.begin(), params[i].files.end(), m->file) != params[i].files.end()) {
          used.push_back(*m);
        }
      }
      std::vector<FittedParam> with = fixed;
      with.insert(with.end(), params.begin(), params.end());
      std::vector<FittedParam> without = with;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(fixed.size() + i));
      const double with_err = median_error(used, with_overlay(catalog, with));
      const double without_err = median_error(used, with_overlay(catalog, without));
      if (without_err + 1e-12 < with_err) {
        const FittedParam& p = params[i];
        r.kept.push_back(
            strfmt("%s %s.%s: the fit %.4g raised the median |error| of its %zu row(s) from %.1f %% to "
                   "%.1f %% (kept %.4g)",
                   p.scope.c_str(), p.table.c_str(), p.key.c_str(), p.is_time ? p.value * 1e6 : p.value, used.size(),
                   100 * without_err, 100 * with_err, p.is_time ? p.prior * 1e6 : p.prior));
        params.erase(params.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  };
  judge(gpu_params, {});
  judge(arch_params, gpu_params);
  r.params = std::move(gpu_params);
  r.params.insert(r.params.end(), arch_params.begin(), arch_params.end());
}

// A runtime's remainder (time outside the modelled kernels, as a fraction of kernel time) from its
// fit end-to-end rows: the r that minimizes Σ log(predicted / measured)², by golden-section search
// (each prediction moves monotonically with r). The rows are resolved under the catalog with the
// microbenchmark fits applied, since the step they predict depends on those.
void fit_remainders(const std::vector<Measurement>& rows, const catalog::Catalog& catalog,
                    const std::set<std::string>& scopes, CalibrationResult& out) {
  std::vector<Measurement> e2e;
  for (const Measurement& m : rows) {
    if (m.role == Role::kFit && m.scored && m.benchmark == Benchmark::kScenario) {
      e2e.push_back(m);
    }
  }
  const std::vector<Subject> subjects = resolve(e2e, with_overlay(catalog, out.params));
  std::map<std::string, std::vector<const Subject*>> by_runtime;
  for (const Subject& s : subjects) {
    if (s.scenario && (scopes.empty() || scopes.count("runtime:" + s.scenario->runtime.id) != 0)) {
      by_runtime[s.scenario->runtime.id].push_back(&s);
    }
  }
  for (const auto& entry : by_runtime) {  // not a structured binding: clang 14 cannot capture one
    const std::string& id = entry.first;
    const std::vector<const Subject*>& list = entry.second;
    auto cost = [&list](double r) {
      double sum = 0;
      for (const Subject* s : list) {
        Subject with = *s;
        with.scenario->runtime.remainder = r;
        const Prediction p = predict(with);
        if (!p.value || *p.value <= 0) {
          return std::numeric_limits<double>::infinity();
        }
        sum += std::pow(std::log(*p.value / s->row->value), 2);
      }
      return sum;
    };
    constexpr double kMaxRemainder = 3.0;  // three times the kernel time: beyond any framework we model
    const double golden = (std::sqrt(5.0) - 1.0) / 2.0;
    double lo = 0, hi = kMaxRemainder;
    double a = hi - golden * (hi - lo), b = lo + golden * (hi - lo);
    double fa = cost(a), fb = cost(b);
    for (int i = 0; i < 60 && hi - lo > 1e-5; ++i) {
      if (fa <= fb) {
        hi = b;
        b = a;
        fb = fa;
        a = hi - golden * (hi - lo);
        fa = cost(a);
      } else {
        lo = a;
        a = b;
        fa = fb;
        b = lo + golden * (hi - lo);
        fb = cost(b);
      }
    }
    const double r = 0.5 * (lo + hi) < 1e-4 ? 0.0 : 0.5 * (lo + hi);
    FittedParam p{"runtime:" + id, "efficiency", "remainder", list.front()->scenario->runtime.remainder, r,
                  false,           {},           {}};
    std::set<std::string> files;
    for (const Subject* s : list) {
      p.rows.push_back(s->row->id);
      files.insert(s->row->file);
    }
    p.files.assign(files.begin(), files.end());
    out.params.push_back(std::move(p));
  }
}

}  // namespace

CalibrationResult calibrate(const std::vector<Measurement>& rows, const catalog::Catalog& catalog,
                            const std::set<std::string>& scopes) {
  CalibrationResult out;
  // Only fit rows that a microbenchmark model predicts: end-to-end rows are evidence, not inputs.
  std::vector<Measurement> fit_rows;
  for (const Measurement& m : rows) {
    if (m.role == Role::kFit && m.scored && !uses_scenario(m.benchmark)) {
      fit_rows.push_back(m);
    }
  }
  const std::vector<Subject> subjects = resolve(fit_rows, catalog);
  std::map<std::string, std::vector<const Subject*>> by_gpu;
  std::map<std::string, std::vector<const Subject*>> by_arch;
  std::vector<const Measurement*> used;
  for (const Subject& s : subjects) {
    if (!s.system) {
      continue;
    }
    const std::string arch = "arch:" + std::string(hardware::to_string(s.system->gpu.arch));
    if (!scopes.empty() && scopes.count(s.row->gpu) == 0 && scopes.count(arch) == 0) {
      continue;
    }
    by_gpu[s.row->gpu].push_back(&s);
    by_arch[hardware::to_string(s.system->gpu.arch)].push_back(&s);
    used.push_back(s.row);
  }
  for (const auto& [id, list] : by_gpu) {
    if (scopes.empty() || scopes.count(id) != 0) {
      Fitter{out, id, {}}.fit(list);
    }
  }
  for (const auto& [arch, list] : by_arch) {
    if (scopes.empty() || scopes.count("arch:" + arch) != 0) {
      Fitter{out, "arch:" + arch, {}}.fit(list);
    }
  }
  keep_only_improvements(used, catalog, out);
  fit_remainders(rows, catalog, scopes, out);
  return out;
}

std::vector<OverlayFile> overlay_files(const std::vector<FittedParam>& fitted) {
  std::map<std::string, std::vector<const FittedParam*>> by_scope;
  for (const auto& p : fitted) {
    by_scope[p.scope].push_back(&p);
  }
  std::vector<OverlayFile> files;
  for (const auto& [scope, params] : by_scope) {
    const bool arch = scope.rfind("arch:", 0) == 0;
    const bool runtime = scope.rfind("runtime:", 0) == 0;
    const std::string id = arch ? scope.substr(5) : runtime ? scope.substr(8) : scope;
    std::set<std::string> sources;
    std::string text = "# Calibration overlay written by `gpusim calibrate`; load it with --specs DIR.\n";
    text += "# It patches the built-in " +
            std::string(arch      ? "architecture"
                        : runtime ? "runtime"
                                  : "GPU") +
            " file of the same id.\n";
    text += "base = \"" + id + "\"\n";
    for (const char* table : {"efficiency", "power"}) {
      bool opened = false;
      for (const FittedParam* p : params) {
        if (p->table != table) {
          continue;
        }
        if (!opened) {
          text += strfmt("\n[%s]\n", table);
          opened = true;
        }
        std::string row_ids;
        for (const auto& r : p->rows) {
          row_ids += (row_ids.empty() ? "" : ", ") + r;
        }
        const std::string value = p->is_time ? strfmt("\"%.6g us\"", p->value * 1e6) : strfmt("%.6g", p->value);
        text += strfmt("%s = %s  # least squares over %zu row(s): %s; prior %.4g\n", p->key.c_str(), value.c_str(),
                       p->rows.size(), row_ids.c_str(), p->is_time ? p->prior * 1e6 : p->prior);
        sources.insert(p->files.begin(), p->files.end());
      }
    }
    text += "\n[meta]\nsources = [";
    bool first = true;
    for (const auto& src : sources) {
      text += (first ? "\"" : ", \"") + src + "\"";
      first = false;
    }
    text += "]\n";
    files.push_back({std::string(arch ? "arch/" : runtime ? "runtimes/" : "gpus/") + id + ".toml", text});
  }
  return files;
}

}  // namespace gpusim::validation
