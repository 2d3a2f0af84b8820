// Exhaustive layout search (see plan.hpp).
#include "gpusim/model/plan.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <tuple>

#include "common/strfmt.hpp"
#include "gpusim/model/kernel.hpp"
#include "gpusim/model/memory.hpp"
#include "gpusim/model/parallel.hpp"
#include "gpusim/model/training_step.hpp"

namespace gpusim {

using detail::strfmt;

std::string describe(const Layout& l) {
  static const char* rc[] = {"none", "selective", "full"};
  return strfmt("tensor %d, pipeline %d, data %d, zero %d, micro_batch %lld, recompute %s%s%s", l.tensor, l.pipeline,
                l.data, l.zero, static_cast<long long>(l.micro_batch), rc[static_cast<int>(l.recompute)],
                l.sequence ? ", sequence" : "",
                l.virtual_stages > 1 ? strfmt(", virtual_stages %d", l.virtual_stages).c_str() : "");
}

Scenario with_layout(const Scenario& sc, const Layout& l) {
  Scenario s = sc;
  s.system.gpus = l.gpus;
  if (l.gpus < s.system.gpus_per_node) {
    s.system.gpus_per_node = l.gpus;
  }
  s.parallel = ParallelConfig{l.tensor, l.pipeline, l.data, l.zero, l.sequence, l.virtual_stages};
  s.training->micro_batch = l.micro_batch;
  s.training->recompute = l.recompute;
  return s;
}

namespace {

std::vector<int> gpu_counts(const Scenario& sc, const PlanOptions& o) {
  const int g = sc.system.gpus_per_node;
  std::vector<int> out{sc.system.gpus};
  if (o.max_gpus <= sc.system.gpus) {
    return out;
  }
  // Node multiples of the form 2^k and 3·2^k between the scenario's count and the maximum.
  for (long n = 1; n * g <= o.max_gpus; n *= 2) {
    for (const long c : {n * g, 3 * n * g / 2}) {
      if (c > sc.system.gpus && c <= o.max_gpus && c % g == 0) {
        out.push_back(static_cast<int>(c));
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

struct Region {
  std::uint64_t count = 0;
  std::string example;
};

}  // namespace

PlanResult plan(const Scenario& sc, const PlanOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  PlanResult r;
  const ModelShape& m = sc.model;
  const TrainingConfig& t0 = *sc.training;
  const GpuSpec& g = sc.system.gpu;
  const double layers = static_cast<double>(m.layers);
  const double tokens_per_step = static_cast<double>(t0.global_batch * t0.seq_len);

  // Kernel sums per (tensor, sequence, micro-batch, recompute), from a one-stage lowering.
  std::map<std::tuple<int, bool, std::int64_t, int>, ScopedKernels> cache;
  auto kernels_for = [&](int tp, bool sp, std::int64_t mb, Recompute rc) -> const ScopedKernels& {
    const auto key = std::make_tuple(tp, sp, mb, static_cast<int>(rc));
    auto it = cache.find(key);
    if (it == cache.end()) {
      Scenario s = sc;
      s.parallel = ParallelConfig{tp, 1, 1, 0, sp, 1};
      s.training->micro_batch = mb;
      s.training->global_batch = mb;
      s.training->recompute = rc;
      it = cache.emplace(key, scoped_kernels(lower_training(s), g, 1.0, layers)).first;
    }
    return it->second;
  };

  Region no_fit;
  double least_memory = 1e300;
  std::map<std::string, Region> regions;
  auto note = [&](const std::string& why, const std::string& example) {
    Region& reg = regions[why];
    if (reg.count++ == 0) {
      reg.example = example;
    }
  };

  std::vector<PlanRow> best;
  // Ties (equal time or cost) go to the layout that needs less memory.
  const auto better = [&o](const PlanRow& a, const PlanRow& b) {
    const double x = a.objective(o.objective), y = b.objective(o.objective);
    if (std::fabs(x - y) > 1e-9 * std::max(x, y)) {
      return x < y;
    }
    return a.memory < b.memory;
  };
  for (const int gpus : gpu_counts(sc, o)) {
    SystemConfig sys = sc.system;
    sys.gpus = gpus;
    sys.gpus_per_node = std::min(sc.system.gpus_per_node, gpus);
    const Fabric fabric = make_fabric(sys);
    for (int tp = 1; tp <= std::min<std::int64_t>(m.heads, gpus); tp *= 2) {
      if (gpus % tp != 0) {
        continue;
      }
      if (m.heads % tp != 0 || m.ffn_hidden % tp != 0) {
        note(strfmt("tensor %d does not divide the %lld heads and ffn_hidden %lld", tp, static_cast<long long>(m.heads),
                    static_cast<long long>(m.ffn_hidden)),
             "");
        continue;
      }
      for (int pp = 1; pp <= std::min<std::int64_t>(m.layers, gpus / tp); ++pp) {
        if ((gpus / tp) % pp != 0) {
          continue;
        }
        if (m.layers % pp != 0) {
          note(strfmt("pipeline stages that do not divide the %lld layers", static_cast<long long>(m.layers)), "");
          continue;
        }
        const int dp = gpus / (tp * pp);
        if (t0.global_batch % dp != 0) {
          note(strfmt("data-parallel degrees that do not divide the global batch of %lld",
                      static_cast<long long>(t0.global_batch)),
               "");
          continue;
        }
        const double stage_layers = std::ceil(layers / pp);
        for (std::int64_t mb = 1; mb * dp <= t0.global_batch; mb *= 2) {
          if (t0.global_batch % (mb * dp) != 0) {
            continue;
          }
          const double micro = static_cast<double>(t0.global_batch) / static_cast<double>(mb * dp);
          for (const Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
            if (rc == Recompute::kSelective && t0.flash_attention) {
              continue;  // identical to none with flash attention (its recompute is built in)
            }
            for (const bool sp : {false, true}) {
              if (sp && tp == 1) {
                continue;
              }
              const ScopedKernels& sk = kernels_for(tp, sp, mb, rc);
              StepKernels k = sk.layer.scaled(stage_layers);
              k += sk.head;
              if (pp == 1) {
                k += sk.embedding;
              }
              TrainingConfig tc = t0;
              tc.micro_batch = mb;
              tc.recompute = rc;
              for (int v = 1; v <= (pp == 1 ? 1 : 8); v *= 2) {
                if (m.layers % (static_cast<std::int64_t>(pp) * v) != 0) {
                  continue;
                }
                for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {
                  const ParallelConfig par{tp, pp, dp, zero, sp, v};
                  ++r.evaluated;
                  const MemoryBreakdown mem = training_memory(m, tc, par, g);
                  const Layout layout{gpus, tp, pp, dp, zero, mb, rc, sp, v};
                  if (!mem.fits()) {
                    if (mem.total().value() < least_memory) {
                      least_memory = mem.total().value();
                      PlanRow c;
                      c.layout = layout;
                      c.memory = mem.total();
                      r.closest = c;
                    }
                    ++no_fit.count;
                    continue;
                  }
                  Op opt;
                  opt.kind = OpKind::kMemoryBound;
                  opt.bytes = optimizer_step_bytes(m, tc, par);
                  StepKernels kk = k;
                  kk.optimizer = kernel_time(opt, g).time;
                  kk.optimizer_kernels = 1;
                  const ParallelComm comm = parallel_comm(fabric, sys.gpus_per_node, m, tc, par);
                  PlanRow row;
                  row.layout = layout;
                  row.step = combine_step(kk, micro, comm, par, g, tc.cuda_graphs);
                  row.memory = mem.total();
                  row.train_time = Seconds(tc.tokens / (tokens_per_step / row.step.time.value()));
                  row.cloud = sc.cost.cloud_rate * row.train_time * static_cast<double>(gpus);
                  const double model_flops =
                      training_flops_per_token(m, static_cast<double>(tc.seq_len)) * tokens_per_step / gpus;
                  row.mfu = model_flops / row.step.time.value() / g.peak_for(tc.precision).value();
                  if (static_cast<int>(best.size()) < o.top || better(row, best.back())) {
                    best.insert(std::upper_bound(best.begin(), best.end(), row, better), row);
                    if (static_cast<int>(best.size()) > o.top) {
                      best.pop_back();
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  r.best = std::move(best);
  if (!r.best.empty()) {
    r.closest.reset();
  }
  if (no_fit.count > 0) {
    r.infeasible.push_back(strfmt("%llu layouts do not fit in %.1f GiB per GPU (the smallest of them needs %.2f GiB)",
                                  static_cast<unsigned long long>(no_fit.count), units::to_gibibytes(g.memory_capacity),
                                  least_memory / units::kGibi));
  }
  for (const auto& [why, reg] : regions) {
    r.infeasible.push_back(strfmt("%llu x %s", static_cast<unsigned long long>(reg.count), why.c_str()));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace gpusim
