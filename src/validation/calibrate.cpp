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

#include "validation/fitter.hpp"

namespace gpusim::validation {

using base::strfmt;
using hardware::GpuSpec;

namespace {

// The row's system with every efficiency the fits solve for set to 1 (and the fitted latencies 0).
hardware::System unit_system(const hardware::System& sys) {
  hardware::System u = sys;
  hardware::Efficiency& e = u.gpu.efficiency;
  e.dram = e.l2 = e.host_link = e.peer_link = e.attention = e.gemm = 1.0;
  e.gemm_fp8 = 1.0;
  e.gemm_fp4 = 1.0;
  e.gemm_latency = Seconds(0);
  return u;
}

}  // namespace

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
    } else if (key == "efficiency.gemm_fp4") {
      e.gemm_fp4 = p.value;
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
                                    p.key == "gemm_fp4" || p.key == "gemm_latency" || p.key == "attention");
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
      // One column per GEMM share: 16-bit (and wider), fp8, fp4.
      const std::size_t col = dt == DType::kFp4 ? 2 : dt == DType::kFp8 ? 1 : 0;
      std::vector<double> a(3, 0.0);
      a[col] = c;
      gemm.push_back({a, op.flops.value() / m->value, m});
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
  const double fp8_prior = e.gemm_fp8.value_or(e.gemm);
  inverse_fit({"gemm", "gemm_fp8", "gemm_fp4"}, {e.gemm, fp8_prior, e.gemm_fp4.value_or(fp8_prior)}, "gemm_latency",
              gemm, e.gemm_latency.value() + overhead, overhead, 2.0);
  for (auto& eq : attn) {
    eq.rhs -= 2.0 * overhead;
  }
  const auto x = solve(attn, 1);
  record("efficiency", "attention", e.attention, x ? std::optional<double>(1.0 / (*x)(0)) : std::nullopt, attn, 0, 1.0,
         false, "no rows");
}

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
