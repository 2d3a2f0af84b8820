// Least-squares calibration (equations in calibrate.hpp).
#include "gpusim/validate/calibrate.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "common/strfmt.hpp"
#include "gpusim/model/comm.hpp"
#include "gpusim/model/kernel.hpp"
#include "gpusim/validate/validate.hpp"
#include "gpusim/workload/scenario.hpp"

namespace gpusim {

using detail::strfmt;

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
  const Catalog& catalog;
  CalibrationResult& out;
  std::string scope;
  std::map<std::string, GpuSpec> specs;

  const GpuSpec& gpu(const std::string& id) {
    auto it = specs.find(id);
    if (it == specs.end()) {
      it = specs.emplace(id, catalog.gpu(id)).first;
    }
    return it->second;
  }

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

  void fit(const std::vector<const Measurement*>& rows);
};

bool dram_row(const Measurement& m, const GpuSpec& g) {
  return (m.benchmark == Benchmark::kStreamCopy || m.benchmark == Benchmark::kStreamTriad ||
          m.benchmark == Benchmark::kStreamRead) &&
         !(m.bytes && *m.bytes < g.l2_size);
}

void Fitter::fit(const std::vector<const Measurement*>& rows) {
  if (rows.empty()) {
    return;
  }
  const GpuSpec& first = gpu(rows.front()->gpu);
  std::vector<Equation> dram, l2, host, gemm, attn, coll, coll_bus, launch, launch_graph;
  std::vector<double> mem_act, gemm_act;
  std::vector<Equation> mem_eqs, gemm_eqs, simt_eqs;
  for (const Measurement* m : rows) {
    const GpuSpec& g = gpu(m->gpu);
    switch (m->benchmark) {
      case Benchmark::kStreamCopy:
      case Benchmark::kStreamTriad:
      case Benchmark::kStreamRead:
      case Benchmark::kL2Bandwidth:
        if (dram_row(*m, g)) {
          dram.push_back({{g.memory_bandwidth.value()}, m->value, m});
        } else {
          l2.push_back({{g.l2_bandwidth.value()}, m->value, m});
        }
        break;
      case Benchmark::kH2d:
      case Benchmark::kD2h:
        if (m->pinned) {
          host.push_back({{make_system(catalog, m->gpu, 1).pcie.bandwidth.value()}, m->value, m});
        }
        break;
      case Benchmark::kGemm: {
        const DType dt = m->dtype.value_or(DType::kBf16);
        if (!g.supports(dt)) {
          break;
        }
        const Op op = benchmark_gemm(dt, m->m, m->n, m->k);
        if (!kernel_time(op, g).compute_bound()) {
          break;  // a bandwidth-bound GEMM says nothing about GEMM efficiency
        }
        GpuSpec unit = g;
        unit.efficiency.gemm = 1.0;
        unit.efficiency.gemm_fp8 = 1.0;
        unit.efficiency.gemm_latency = Seconds(0);
        const double c = kernel_time(op, unit).compute.value();
        const bool fp8 = dt == DType::kFp8;
        gemm.push_back({{fp8 ? 0.0 : c, fp8 ? c : 0.0}, op.flops.value() / m->value, m});
        break;
      }
      case Benchmark::kAttention: {
        // t = 3.5 F / (peak eta) + 2 o: the two kernel gaps are taken off once o is known (below).
        const double fwd = 4.0 * m->batch * m->seq_len * m->seq_len * m->heads * m->head_dim * (m->causal ? 0.5 : 1.0);
        const FlopPerSecond peak = g.peak_for(m->dtype.value_or(DType::kBf16));
        attn.push_back({{3.5 * fwd / peak.value()}, 3.5 * fwd / m->value, m});
        break;
      }
      case Benchmark::kAllreduce:
      case Benchmark::kReduceScatter:
      case Benchmark::kAllGather: {
        if (!m->bytes || m->gpus < 2) {
          break;
        }
        const SystemConfig sys = make_system(catalog, m->gpu, m->gpus, box_size(m->gpus));
        const Fabric f = make_fabric(sys);
        if (f.nodes > 1 || f.host_staged) {
          break;  // only single-node GPU-to-GPU links are fitted here
        }
        const double link = sys.intra_node.kind == LinkKind::kNvlink && g.peer_bandwidth.value() > 0
                                ? g.peer_bandwidth.value()
                                : sys.pcie.bandwidth.value();
        const double n = m->gpus;
        const bool ar = m->benchmark == Benchmark::kAllreduce;
        const double factor = ar ? 2.0 * (n - 1.0) / n : (n - 1.0) / n;
        const double steps = ar ? 2.0 * (n - 1.0) : n - 1.0;
        coll.push_back({{m->bytes->value() * factor / link, steps}, m->bytes->value() * factor / m->value, m});
        coll_bus.push_back({{m->bytes->value() * factor / link}, m->bytes->value() * factor / m->value, m});
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
        const double ridge = (g.peak_for(tensor ? DType::kBf16 : DType::kFp32) * g.efficiency.gemm).value() /
                             (g.memory_bandwidth.value() * g.efficiency.dram);
        const double activity = (m->value - g.idle_power.value()) / (g.tdp - g.idle_power).value();
        (*m->intensity < ridge ? mem_eqs : (tensor ? gemm_eqs : simt_eqs)).push_back({{1.0}, activity, m});
        break;
      }
      default:
        break;
    }
  }
  const Efficiency& e = first.efficiency;
  const double first_link_latency = make_system(catalog, first.id, 1).intra_node.latency.value();
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
    const double alpha = e.peer_latency.value() > 0 ? e.peer_latency.value() : first_link_latency;
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

Catalog with_overlay(const Catalog& base, const std::vector<FittedParam>& params) {
  Catalog c = base;
  for (const auto& f : overlay_files(params)) {
    const bool arch = f.relative_path.rfind("arch/", 0) == 0;
    const std::string file = f.relative_path.substr(f.relative_path.find('/') + 1);
    c.add_file(arch ? SpecKind::kArch : SpecKind::kGpu, file.substr(0, file.size() - 5),
               SpecFile{"<calibration>/" + f.relative_path, f.text});
  }
  return c;
}

namespace {

// Median |error| over the rows a parameter was fitted on, under `catalog`.
double median_error(const std::vector<const Measurement*>& rows, const Catalog& catalog) {
  std::vector<double> errs;
  for (const Measurement* m : rows) {
    const Prediction p = predict(*m, catalog);
    if (p.value && m->value != 0) {
      errs.push_back(std::fabs(*p.value / m->value - 1.0));
    }
  }
  return summarize("", errs).median;
}

// Least squares minimizes squared relative error; the project judges median |error|. A fit that
// raises the median |error| of its own rows is dropped, and the prior kept.
// Judges the GPU-level fits first (with no architecture fits present, which would otherwise stand
// in for a dropped GPU fit), then the architecture fits over the kept GPU fits.
void keep_only_improvements(const std::vector<Measurement>& rows, const Catalog& catalog, CalibrationResult& r) {
  std::vector<FittedParam> gpu_params, arch_params;
  for (auto& p : r.params) {
    (p.scope.rfind("arch:", 0) == 0 ? arch_params : gpu_params).push_back(std::move(p));
  }
  auto judge = [&](std::vector<FittedParam>& params, const std::vector<FittedParam>& fixed) {
    for (std::size_t i = 0; i < params.size();) {
      std::vector<const Measurement*> used;
      for (const auto& m : rows) {
        if (std::find(params[i].rows.begin(), params[i].rows.end(), m.id) != params[i].rows.end() &&
            std::find(params[i].files.begin(), params[i].files.end(), m.file) != params[i].files.end()) {
          used.push_back(&m);
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

CalibrationResult calibrate(const std::vector<Measurement>& rows, const Catalog& catalog) {
  CalibrationResult out;
  std::map<std::string, std::vector<const Measurement*>> by_gpu;
  std::map<std::string, std::vector<const Measurement*>> by_arch;
  for (const Measurement& m : rows) {
    if (!m.scored || m.benchmark == Benchmark::kScenario) {
      continue;
    }
    by_gpu[m.gpu].push_back(&m);
    by_arch[to_string(catalog.gpu(m.gpu).arch)].push_back(&m);
  }
  for (const auto& [id, list] : by_gpu) {
    Fitter{catalog, out, id, {}}.fit(list);
  }
  for (const auto& [arch, list] : by_arch) {
    Fitter{catalog, out, "arch:" + arch, {}}.fit(list);
  }
  keep_only_improvements(rows, catalog, out);
  return out;
}

std::vector<OverlayFile> overlay_files(const CalibrationResult& r) { return overlay_files(r.params); }

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
        std::string rows;
        for (const auto& id_ : p->rows) {
          rows += (rows.empty() ? "" : ", ") + id_;
        }
        const std::string value = p->is_time ? strfmt("\"%.6g us\"", p->value * 1e6) : strfmt("%.6g", p->value);
        text += strfmt("%s = %s  # least squares over %zu row(s): %s; prior %.4g\n", p->key.c_str(), value.c_str(),
                       p->rows.size(), rows.c_str(), p->is_time ? p->prior * 1e6 : p->prior);
        sources.insert(p->files.begin(), p->files.end());
      }
    }
    text += "\n[meta]\nsources = [";
    bool first = true;
    for (const auto& s : sources) {
      text += (first ? "\"" : ", \"") + s + "\"";
      first = false;
    }
    text += "]\n";
    files.push_back({(arch ? "arch/" : "gpus/") + id + ".toml", text});
  }
  return files;
}

void write_overlay(const CalibrationResult& r, const std::string& dir) {
  namespace fs = std::filesystem;
  for (const auto& f : overlay_files(r)) {
    const fs::path path = fs::path(dir) / f.relative_path;
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    if (!out) {
      throw InputError({Diagnostic{SourcePos{path.string()}, "-o", "cannot write the overlay file"}});
    }
    out << f.text;
  }
}

}  // namespace gpusim
