// Exhaustive layout search (see include/gpusim/search.hpp). Every candidate is sized by the
// evaluator's memory model; those that fit are timed by the evaluator itself, which keeps what
// layouts share (kernel sums per lowering and clock, the communication terms of the layouts just
// visited: step::Evaluator), so a layout costs only its memory and step arithmetic. The loops
// below run ZeRO and the expert split innermost, the order in which the kept terms serve most.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "gpusim/search.hpp"

namespace gpusim::search {
namespace {

using workload::Layout;
using workload::Recompute;

std::vector<int> gpu_counts(const scenario::Scenario& sc, const PlanOptions& o) {
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

class Search {
 public:
  Search(const scenario::Scenario& sc, const PlanOptions& o) : sc_(sc), o_(o), ev_(sc.system, sc.job, sc.runtime) {
    if (sc.cloud_system) {
      cloud_ev_.emplace(*sc.cloud_system, sc.job, sc.runtime);
    }
  }

  PlanResult run() {
    const auto start = std::chrono::steady_clock::now();
    for (const int gpus : gpu_counts(sc_, o_)) {
      search_gpus(gpus);
    }
    r_.best = std::move(best_);
    if (!r_.best.empty()) {
      r_.closest.reset();
    }
    for (int i = 0; i < 4; ++i) {
      if (regions_[i] > 0) {
        r_.infeasible.push_back(Region{static_cast<Infeasible>(i), regions_[i]});
      }
    }
    r_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(r_);
  }

 private:
  void note(Infeasible why) { ++regions_[static_cast<int>(why)]; }

  // Ties (equal time or cost) go to the layout that needs less memory.
  [[nodiscard]] static bool better(double x, Bytes x_memory, double y, Bytes y_memory) {
    if (std::fabs(x - y) > 1e-9 * std::max(x, y)) {
      return x < y;
    }
    return x_memory < y_memory;
  }
  [[nodiscard]] bool better(const PlanRow& a, const PlanRow& b) const {
    return better(a.objective(o_.objective), a.eval.memory.total(), b.objective(o_.objective), b.eval.memory.total());
  }

  void search_gpus(int gpus) {
    const workload::ModelShape& m = sc_.job.model;
    const workload::Training& t = *sc_.job.training;
    // An image model runs data-parallel only: tensor = 1 (and a ResNet's one layer, pipeline = 1).
    const std::int64_t max_tp = m.images() ? 1 : std::min<std::int64_t>(m.heads, gpus);
    for (int tp = 1; tp <= max_tp; tp *= 2) {
      if (gpus % tp != 0) {
        continue;
      }
      if (m.heads % tp != 0 || m.ffn_hidden % tp != 0) {
        note(Infeasible::kTensorDivides);
        continue;
      }
      for (int pp = 1; pp <= std::min<std::int64_t>(m.layers, gpus / tp); ++pp) {
        if ((gpus / tp) % pp != 0) {
          continue;
        }
        if (m.layers % pp != 0) {
          note(Infeasible::kPipelineDivides);
          continue;
        }
        const int rest = gpus / (tp * pp);
        for (int cp = 1; cp <= rest && rest % cp == 0; cp *= 2) {
          if (cp > 1 && !context_searched(cp)) {
            continue;
          }
          const int dp = rest / cp;
          if (t.global_batch % dp != 0) {
            note(Infeasible::kDataDivides);
            continue;
          }
          for (std::int64_t mb = 1; mb * dp <= t.global_batch; mb *= 2) {
            if (t.global_batch % (mb * dp) == 0) {
              search_micro_batch(gpus, tp, pp, dp, mb, cp);
            }
          }
        }
      }
    }
  }

  // Context parallelism is searched for long sequences only (from kLongSequence tokens, where a
  // sequence's activations start to dominate), over powers of two that split every sequence into
  // two chunks per rank, for dense transformers with flash attention (ring attention).
  static constexpr std::int64_t kLongSequence = 8192;
  [[nodiscard]] bool context_searched(int cp) const {
    const workload::Training& t = *sc_.job.training;
    return t.seq_len >= kLongSequence && t.seq_len % (2 * cp) == 0 && !sc_.job.model.moe && !sc_.job.model.images() &&
           sc_.runtime.flash_attention();
  }

  void search_micro_batch(int gpus, int tp, int pp, int dp, std::int64_t mb, int cp) {
    const workload::ModelShape& m = sc_.job.model;
    // The step in the backward pass cannot accumulate gradients: one micro-batch per step.
    const bool in_backward = sc_.job.training->optimizer_in_backward;
    if (in_backward && sc_.job.training->global_batch != mb * dp) {
      return;
    }
    for (const Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
      if (rc == Recompute::kSelective && sc_.runtime.flash_attention()) {
        continue;  // identical to none with flash attention (its recompute is built in)
      }
      for (const bool sp : {false, true}) {
        if (sp && tp == 1) {
          continue;
        }
        for (int v = 1; v <= (pp == 1 ? 1 : 8); v *= 2) {
          if (m.layers % (static_cast<std::int64_t>(pp) * v) != 0) {
            continue;
          }
          // Parameter offload (ZeRO-Infinity) exists only under ZeRO-3, on any number of ranks.
          const bool param_offload = sc_.job.training->offload_params != workload::Offload::kNone;
          for (int zero = param_offload ? 3 : 0; zero <= (dp * cp > 1 || param_offload ? 3 : 0); ++zero) {
            // Expert parallelism over powers of two of the data ranks that divide the experts
            // (a mixture of experts only); the scenario's imbalance holds for every layout.
            if (in_backward && dp * cp > 1 && zero < 3) {
              continue;  // it needs each layer's gradients reduced in the backward pass (FSDP)
            }
            const std::int64_t experts = m.moe ? m.moe->experts : 1;
            for (int ep = 1; ep <= dp && experts % ep == 0; ep *= 2) {
              if (dp % ep != 0) {
                break;
              }
              Layout l;
              l.tensor = tp;
              l.pipeline = pp;
              l.data = dp;
              l.context = cp;
              l.zero = zero;
              l.sequence = sp;
              l.virtual_stages = v;
              l.micro_batch = mb;
              l.recompute = rc;
              l.expert = ep;
              l.expert_imbalance = sc_.layout.expert_imbalance;
              consider(gpus, l);
            }
          }
        }
      }
    }
  }

  void consider(int gpus, const Layout& l) {
    ++r_.sized;
    const physics::MemoryBreakdown mem = ev_.memory(l);
    if (!mem.fits()) {
      if (!r_.closest || mem.total() < r_.closest_memory) {
        r_.closest = std::make_pair(gpus, l);
        r_.closest_memory = mem.total();
      }
      note(Infeasible::kNoFit);
      return;
    }
    ++r_.timed;
    // The layout is ranked by its job time (and cloud cost) alone; only a layout that enters the
    // best rows is evaluated in full, which gives the same job time (Evaluator::job_time).
    const Seconds time = ev_.job_time(l, gpus);
    const Seconds cloud_time = cloud_ev_ ? cloud_ev_->job_time(l, gpus) : time;
    const Usd cloud = cost::cloud_cost(sc_.cost.cloud_rate, cloud_time, gpus);
    r_.feasible.push_back({gpus, l, time, cloud});
    const double objective = o_.objective == Objective::kTime ? time.value() : cloud.value();
    if (static_cast<int>(best_.size()) < o_.top ||
        better(objective, mem.total(), best_.back().objective(o_.objective), best_.back().eval.memory.total())) {
      PlanRow row;
      row.gpus = gpus;
      row.layout = l;
      row.eval = ev_.evaluate(l, gpus);
      row.cloud = cloud;
      best_.insert(std::upper_bound(best_.begin(), best_.end(), row,
                                    [this](const PlanRow& a, const PlanRow& b) { return better(a, b); }),
                   std::move(row));
      if (static_cast<int>(best_.size()) > o_.top) {
        best_.pop_back();
      }
    }
  }

  const scenario::Scenario& sc_;
  const PlanOptions& o_;
  step::Evaluator ev_;
  std::optional<step::Evaluator> cloud_ev_;
  PlanResult r_;
  std::vector<PlanRow> best_;
  std::uint64_t regions_[4] = {0, 0, 0, 0};
};

}  // namespace

PlanResult plan(const scenario::Scenario& sc, const PlanOptions& options) { return Search(sc, options).run(); }

}  // namespace gpusim::search
