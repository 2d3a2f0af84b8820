// Least-squares calibration (equations in include/gpusim/validation.hpp). Every coefficient comes
// from the prediction's own functions evaluated with the unknown set to 1, so a fitted value means
// exactly what the step model does with it.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
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
};

// The row's system with every efficiency the fits solve for set to 1 (and the fitted latencies 0).
hardware::System unit_system(const hardware::System& sys) {
  hardware::System u = sys;
  hardware::Efficiency& e = u.gpu.efficiency;
  e.dram = e.l2 = e.host_link = e.peer_link = e.attention = e.gemm = 1.0;
  e.gemm_fp8 = 1.0;
  e.gemm_latency = Seconds(0);
  e.peer_latency = Seconds(0);
  return u;
}

void Fitter::fit(const std::vector<const Subject*>& rows) {
  if (rows.empty()) {
    return;
  }
  const GpuSpec& first = rows.front()->system->gpu;
  std::vector<Equation> dram, l2, host, gemm, attn, coll, coll_bus, launch, launch_graph;
  std::vector<Equation> mem_eqs, gemm_eqs, simt_eqs;
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
      case Benchmark::kGemm: {
        const DType dt = m->dtype.value_or(DType::kBf16);
        if (!g.supports(dt)) {
          break;
        }
        const lowering::Op op = lowering::benchmark_gemm(dt, m->m, m->n, m->k);
        if (!physics::kernel_time(op, g).compute_bound()) {
          break;  // a bandwidth-bound GEMM says nothing about GEMM efficiency
        }
        const double c = physics::kernel_time(op, unit.gpu).compute.value();
        const bool fp8 = dt == DType::kFp8;
        gemm.push_back({{fp8 ? 0.0 : c, fp8 ? c : 0.0}, op.flops.value() / m->value, m});
        break;
      }
      case Benchmark::kAttention: {
        // t = c / η + 2 gaps: the two kernel gaps are taken off once the gap is known (below).
        const auto [fwd, bwd] = attention_ops(*m);
        const double c =
            (physics::kernel_time(fwd, unit.gpu).compute + physics::kernel_time(bwd, unit.gpu).compute).value();
        attn.push_back({{c}, (fwd.flops + bwd.flops).value() / m->value, m});
        break;
      }
      case Benchmark::kAllreduce:
      case Benchmark::kReduceScatter:
      case Benchmark::kAllGather: {
        if (!m->bytes || m->gpus < 2) {
          break;
        }
        const physics::Fabric f = physics::make_fabric(unit);
        if (f.nodes > 1 || f.host_staged) {
          break;  // only single-node GPU-to-GPU links are fitted here
        }
        // t = S·f(n) / (B_link · η) + steps · α
        const physics::RingCost ring = physics::ring_cost(collective_of(m->benchmark), m->gpus);
        const double a = m->bytes->value() * ring.bytes_factor / f.intra_bus.value();
        const double t = m->bytes->value() * ring.bytes_factor / m->value;
        coll.push_back({{a, ring.steps}, t, m});
        coll_bus.push_back({{a}, t, m});
        break;
      }
      case Benchmark::kLaunchOverhead:
        (m->graph ? launch_graph : launch).push_back({{1.0}, m->value, m});
        break;
      case Benchmark::kPower: {
        if (!m->intensity) {
          break;
        }
        const bool tensor = m->kernel.find("gemm") != std::string::npos;
        const double activity = physics::activity_from_power(g, Watts(m->value));
        const bool memory_bound = *m->intensity < physics::ridge_intensity(g, tensor ? DType::kBf16 : DType::kFp32);
        (memory_bound ? mem_eqs : (tensor ? gemm_eqs : simt_eqs)).push_back({{1.0}, activity, m});
        break;
      }
      default:
        break;
    }
  }
  const hardware::Efficiency& e = first.efficiency;
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
  // A timed GEMM loop pays the gap between kernels on top of the GEMM's own fixed latency.
  const double overhead = e.kernel_overhead.value();
  inverse_fit({"gemm", "gemm_fp8"}, {e.gemm, e.gemm_fp8.value_or(e.gemm)}, "gemm_latency", gemm,
              e.gemm_latency.value() + overhead, overhead, 2.0);
  for (auto& eq : attn) {
    eq.rhs -= 2.0 * overhead;
  }
  {
    const auto x = solve(attn, 1);
    record("efficiency", "attention", e.attention, x ? std::optional<double>(1.0 / (*x)(0)) : std::nullopt, attn, 0,
           1.0, false, "no rows");
  }
  // Collectives: t = a / eta + steps * alpha; the steps column is the "offset" here, so fit it as
  // one more unknown column and fall back to eta alone with alpha at its prior.
  if (!coll.empty()) {
    const double alpha = e.peer_latency.value() > 0
                             ? e.peer_latency.value()
                             : physics::make_fabric(unit_system(*rows.front()->system)).intra_alpha.value();
    auto x = solve(coll, 2, true);
    if (x && (*x)(1) > 0 && (*x)(0) > 0) {
      record("efficiency", "peer_link", e.peer_link, 1.0 / (*x)(0), coll, 0, 4.0, false, "");
      record("efficiency", "peer_latency", alpha, (*x)(1), coll, 0, 1.0, true, "");
    } else {
      for (auto& eq : coll_bus) {
        const auto it = std::find_if(coll.begin(), coll.end(), [&](const Equation& c) { return c.row == eq.row; });
        eq.rhs -= it->a[1] * alpha;
      }
      out.kept.push_back(strfmt("%s efficiency.peer_latency: %zu row(s) of too few distinct sizes (kept %.4g)",
                                scope.c_str(), coll.size(), alpha));
      const auto one = solve(coll_bus, 1, true);
      record("efficiency", "peer_link", e.peer_link, one ? std::optional<double>(1.0 / (*one)(0)) : std::nullopt,
             coll_bus, 0, 4.0, false, "no rows");
    }
  }
  const auto mem = solve(mem_eqs, 1);
  record("power", "memory_activity", first.activity.memory, mem ? std::optional<double>((*mem)(0)) : std::nullopt,
         mem_eqs, 0, 1.0, false, "no rows");
  const auto simt = solve(simt_eqs, 1);
  record("power", "simt_activity", first.activity.simt, simt ? std::optional<double>((*simt)(0)) : std::nullopt,
         simt_eqs, 0, 1.0, false, "no rows");
  const auto comp = solve(gemm_eqs, 1);
  record("power", "gemm_activity", first.activity.gemm, comp ? std::optional<double>((*comp)(0)) : std::nullopt,
         gemm_eqs, 0, 1.0, false, "no rows");
}

}  // namespace

catalog::Catalog with_overlay(const catalog::Catalog& base, const std::vector<FittedParam>& params) {
  catalog::Catalog c = base;
  for (const auto& f : overlay_files(params)) {
    const bool arch = f.relative_path.rfind("arch/", 0) == 0;
    const std::string file = f.relative_path.substr(f.relative_path.find('/') + 1);
    c.add_file(arch ? catalog::SpecKind::kArch : catalog::SpecKind::kGpu, file.substr(0, file.size() - 5),
               catalog::SpecFile{"<calibration>/" + f.relative_path, f.text});
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

}  // namespace

CalibrationResult calibrate(const std::vector<Measurement>& rows, const catalog::Catalog& catalog) {
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
    by_gpu[s.row->gpu].push_back(&s);
    by_arch[hardware::to_string(s.system->gpu.arch)].push_back(&s);
    used.push_back(s.row);
  }
  for (const auto& [id, list] : by_gpu) {
    Fitter{out, id}.fit(list);
  }
  for (const auto& [arch, list] : by_arch) {
    Fitter{out, "arch:" + arch}.fit(list);
  }
  keep_only_improvements(used, catalog, out);
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
    const std::string id = arch ? scope.substr(5) : scope;
    std::set<std::string> sources;
    std::string text = "# Calibration overlay written by `gpusim calibrate`; load it with --specs DIR.\n";
    text += "# It patches the built-in " + std::string(arch ? "architecture" : "GPU") + " file of the same id.\n";
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
    files.push_back({(arch ? "arch/" : "gpus/") + id + ".toml", text});
  }
  return files;
}

}  // namespace gpusim::validation
