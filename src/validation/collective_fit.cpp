// The collective fit of calibration: NCCL/RCCL call cost and protocol efficiencies from all-reduce
// and all-gather rows (equations below; the cost model is physics/collectives, [nccl-source]).
#include <algorithm>
#include <cmath>

#include "validation/fitter.hpp"

namespace gpusim::validation {

using base::strfmt;

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
      const physics::CollectiveCost chosen = physics::collective_cost(f, c, *m->bytes, m->gpus, algorithm_of(*m));
      Equation e{std::vector<double>(kCols, 0.0), 0, m};
      e.a[kCall] = 1.0;
      int col = -1;
      if (chosen.route == physics::Route::kNvls) {
        e.rhs = t - f.nvls_latency.value();
        e.a[kNvls] = sf / (f.nvls_bus / cur.nvls).value();
        e.a[kRound] = physics::nvls_rounds(f, *m->bytes, m->gpus);
        col = kNvls;
      }
      for (const physics::ProtocolCost& p : f.protocols) {
        if (chosen.route != physics::Route::kRing || chosen.protocol != p.protocol) {
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

}  // namespace gpusim::validation
