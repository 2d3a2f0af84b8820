// Service-level search over serving deployments (see include/gpusim/search.hpp). Every candidate is
// a scenario variant estimated by answer::estimate, the same path as `gpusim estimate`, so a
// row of the plan is reproduced exactly by estimating the scenario with the row's settings.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <mutex>

#include "gpusim/search.hpp"

namespace gpusim::search {
namespace {

using workload::Layout;

std::vector<int> serving_gpu_counts(const scenario::Scenario& sc, const PlanOptions& o) {
  std::vector<int> out{sc.system.gpus};
  const int most = std::max(sc.system.gpus, o.max_gpus);
  for (int g = 1; g <= most; g *= 2) {
    out.push_back(g);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The default formats: the scenario's own, the GPU's 16-bit format and fp8 where it computes it.
std::vector<std::string> serving_formats(const scenario::Scenario& sc, const PlanOptions& o) {
  if (!o.formats.empty()) {
    return o.formats;
  }
  const hardware::GpuSpec& g = sc.system.gpu;
  std::vector<std::string> out{sc.job.inference->weight_format};
  out.emplace_back(g.supports(DType::kBf16) ? "bf16" : "fp16");
  if (g.supports(DType::kFp8)) {
    out.emplace_back("fp8");
  }
  std::vector<std::string> unique;
  for (auto& f : out) {
    if (std::find(unique.begin(), unique.end(), f) == unique.end()) {
      unique.push_back(std::move(f));
    }
  }
  return unique;
}

// Whether the model's heads, KV heads and FFN split over `tp` ranks (the loader's layout rules).
bool tensor_splits(const workload::ModelShape& m, int tp) {
  if (tp == 1) {
    return true;
  }
  const bool kv = m.kv_heads <= 0 || m.kv_heads % tp == 0 || tp % m.kv_heads == 0;
  return m.heads % tp == 0 && m.ffn_hidden % tp == 0 && kv;
}

struct Candidate {
  int gpus = 1;
  Layout layout;
  std::size_t format = 0;      // index into the searched formats
  std::int64_t speculate = 0;  // tokens proposed per step, 0: off
  workload::Disaggregation pools;
};

// Speculation searched when the scenario names a method (its proposer is the user's choice): off,
// the scenario's k, and the chain lengths engines' examples use (1 to 5: vLLM, TensorRT-LLM and
// SGLang [vllm-spec-decode-docs, trtllm-spec-decode-docs]).
std::vector<std::int64_t> speculation_searched(const scenario::Scenario& sc) {
  const workload::Speculative& sp = sc.job.inference->speculative;
  if (!sp.on()) {
    return {0};
  }
  std::vector<std::int64_t> out{0, 1, 2, 3, 5, sp.tokens};
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The scenario as the candidate runs it with a batch limit b (see search.hpp).
scenario::Scenario variant(const scenario::Scenario& base, const Candidate& c, std::int64_t b) {
  scenario::Scenario s = scenario::with_layout(base, c.layout, c.gpus);
  workload::Inference& inf = *s.job.inference;
  if (c.speculate == 0) {
    inf.speculative = workload::Speculative{};
  } else {
    inf.speculative.tokens = c.speculate;
  }
  inf.disaggregated = c.pools;
  workload::ServingEngine& e = s.runtime.serving;
  const std::int64_t engines = static_cast<std::int64_t>(c.layout.data) * c.layout.pipeline;
  if (e.scheduler == workload::Scheduler::kStatic) {
    inf.batch = b;
    inf.batch_max = false;
  } else {
    e.max_seqs = b * c.layout.pipeline;  // the evaluator gives each pipeline virtual engine its share
  }
  if (inf.load.arrival != workload::Arrival::kPoisson) {
    inf.load.arrival = workload::Arrival::kConcurrency;
    inf.load.concurrency = b * engines;
    // A few waves per in-flight slot, so the run is more than its synchronized first wave.
    constexpr std::int64_t kWaves = 4;
    inf.load.requests = std::max(inf.load.requests, kWaves * inf.load.concurrency);
  }
  return s;
}

// How far a row is from meeting the SLO: its worst latency / limit, and for a saturated
// deployment at least the offered over the sustainable rate.
double miss(const ServingPlanRow& r) {
  const answer::SloCheck& c = *r.estimate.slo;
  const step::InferenceResult& i = *r.estimate.eval.inference;
  double m = c.worst;
  if (c.saturated && i.saturation_requests_per_s > 0) {
    m = std::max(m, i.requests_per_s / i.saturation_requests_per_s + 1.0);
  }
  return m;
}

}  // namespace

ServingPlanResult plan_serving(const scenario::Scenario& sc, const PlanOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  ServingPlanResult r;
  r.formats = serving_formats(sc, o);
  r.speculative_tokens = speculation_searched(sc);
  // Prefill:decode splits, when the scenario asks for disaggregated pools, under a Poisson load (the
  // pools are simulated under open loads; the search's closed loops are not one).
  r.disaggregated =
      sc.job.inference->disaggregated.on() && sc.job.inference->load.arrival == workload::Arrival::kPoisson;
  std::vector<scenario::Scenario> formatted;
  for (const auto& f : r.formats) {
    formatted.push_back(scenario::with_weight_format(sc, f));  // InputError for a bad or unsupported format
  }
  const workload::ModelShape& m = sc.job.model;
  std::vector<Candidate> candidates;
  for (const int gpus : serving_gpu_counts(sc, o)) {
    const int per_node = std::min(sc.system.gpus_per_node, gpus);
    for (int tp = 1; tp <= per_node; tp *= 2) {
      if (gpus % tp != 0 || !tensor_splits(m, tp)) {
        continue;
      }
      for (int pp = 1; pp <= gpus / tp && pp <= m.layers; pp *= 2) {
        if ((gpus / tp) % pp != 0 || m.layers % pp != 0) {
          continue;
        }
        // Aggregated replicas, and (pipeline 1) every split of the replicas into the two pools.
        const int replicas = gpus / (tp * pp);
        const int splits = r.disaggregated && pp == 1 ? replicas - 1 : 0;
        for (int prefill = 0; prefill <= splits; ++prefill) {
          for (std::size_t f = 0; f < formatted.size(); ++f) {
            for (const std::int64_t k : r.speculative_tokens) {
              Candidate c;
              c.gpus = gpus;
              c.layout.tensor = tp;
              c.layout.pipeline = pp;
              c.layout.data = replicas;
              c.format = f;
              c.speculate = k;
              if (prefill > 0) {
                c.pools = {prefill, replicas - prefill, tp, tp};
              }
              candidates.push_back(c);
            }
          }
        }
      }
    }
  }
  const bool is_static = sc.runtime.serving.scheduler == workload::Scheduler::kStatic;
  // Static batches: up to the largest batch whose KV cache fits (found below); continuous
  // engines: up to the runtime's (or scenario's) max_seqs.
  constexpr std::int64_t kStaticBatchCap = 1024;
  const std::int64_t limit_cap = is_static ? kStaticBatchCap : std::max<std::int64_t>(1, sc.runtime.serving.max_seqs);
  // A deployment that cannot meet the SLO's TPOT (ServingBounds::tpot above it) is simulated after
  // the others, and only when it might be shown: a row that no simulated row dominates could be on
  // the frontier, and one whose least miss is below every other row's could be the closest.
  const std::optional<Seconds> tpot_limit = sc.slo ? sc.slo->tpot : std::nullopt;
  struct Deferred {
    std::int64_t b = 1;
    step::ServingBounds bounds;
  };
  // Each candidate's batch limits in its own slot, estimated on any thread, then joined in
  // candidate order, each slot's rows by batch limit: the rows and counts are those of a loop over
  // the candidates.
  struct Slot {
    std::vector<ServingPlanRow> rows;
    std::vector<Deferred> deferred;
    std::uint64_t candidates = 0;
    std::uint64_t no_fit = 0;
    std::uint64_t timed = 0;
    std::uint64_t ruled_out = 0;
    Bytes smallest_no_fit;
    // The candidate's batch limits change its load and max_seqs alone: one set of tables.
    step::TableCache tables;
  };
  std::vector<Slot> slots(candidates.size());
  std::mutex progress;
  std::size_t done = 0;
  auto simulate = [&](const Candidate& c, const scenario::Scenario& s, std::int64_t b, Slot& out) {
    ++out.timed;
    ServingPlanRow row;
    row.gpus = c.gpus;
    row.layout = c.layout;
    row.format = r.formats[c.format];
    row.batch_limit = b;
    row.speculative_tokens = c.speculate;
    row.pools = c.pools;
    answer::Options estimate;
    estimate.advice = false;
    estimate.tables = &out.tables;
    row.estimate = answer::estimate(s, estimate);
    const step::InferenceResult& i = *row.estimate.eval.inference;
    row.per_gpu = i.output_tokens_per_s / c.gpus;
    row.per_user = i.tokens_per_s_per_user;
    row.usd_per_mtok = answer::usd_per_million_tokens(row.estimate);
    return row;
  };
  base::parallel_for(candidates.size(), o.threads, [&](std::size_t k) {
    const Candidate& c = candidates[k];
    Slot& out = slots[k];
    bool check = tpot_limit && o.rule_out;
    for (std::int64_t b = 1; b <= limit_cap; b *= 2) {
      ++out.candidates;
      const scenario::Scenario s = variant(formatted[c.format], c, b);
      step::Evaluator evaluator(s.system, s.job, s.runtime, step::Evaluator::Borrow{});
      const physics::MemoryBreakdown mem = evaluator.memory(c.layout);
      if (!mem.fits()) {
        // A larger batch limit needs at least as much memory: count the rest as not fitting.
        const auto rest =
            static_cast<std::uint64_t>(std::floor(std::log2(static_cast<double>(limit_cap) / static_cast<double>(b))));
        out.no_fit += 1 + rest;
        out.candidates += rest;
        out.smallest_no_fit = mem.total();
        break;
      }
      if (check) {
        step::Options bounded;
        bounded.tables = &out.tables;
        if (auto bounds = evaluator.serving_bounds_past(c.layout, *tpot_limit, 0, bounded)) {
          out.deferred.push_back({b, *bounds});
          continue;
        }
        // A larger batch limit decodes at the same clock or a lower one (more sequences, more
        // power): its bounds meet the limit too, mostly, so its deployments are simulated unchecked
        // (simulating a deployment is always right; ruling one out needs its bounds).
        check = false;
      }
      out.rows.push_back(simulate(c, s, b, out));
    }
    if (o.progress) {
      const std::lock_guard<std::mutex> lock(progress);
      o.progress(++done, candidates.size());
    }
  });
  // What the simulated rows settle for the deferred ones.
  std::vector<const ServingPlanRow*> served;  // complete, unsaturated: the frontier's rows come from them
  bool any_meets = false;
  double least_miss = std::numeric_limits<double>::infinity();
  for (const Slot& slot : slots) {
    for (const ServingPlanRow& row : slot.rows) {
      const step::InferenceResult& i = *row.estimate.eval.inference;
      any_meets = any_meets || row.meets();
      if (!i.truncated && !i.saturated) {
        served.push_back(&row);
      }
      if (row.estimate.slo && !i.truncated) {
        least_miss = std::min(least_miss, miss(row));
      }
    }
  }
  // A deferred row cannot meet the SLO. It is not on the frontier when its offered rate is beyond
  // what its capacity can be (it saturates), or when a simulated row beats both its bounds: more
  // tokens/s per user than 1 / its least TPOT p50, and at least its most tokens/s per GPU (the
  // frontier then passes it by, whatever else it holds). It is not the closest when something meets
  // the SLO or a simulated row misses by less than its TPOT bound does.
  auto ruled_out = [&](const Candidate& c, const step::ServingBounds& bounds) {
    const workload::Load& load = sc.job.inference->load;
    const bool saturates =
        load.arrival == workload::Arrival::kPoisson && load.rate > step::kSaturation * bounds.capacity_requests_per_s;
    const double most_per_user = 1.0 / bounds.tpot.value();
    const double most_per_gpu = bounds.output_tokens_per_s / c.gpus;
    const bool beaten = saturates || std::any_of(served.begin(), served.end(), [&](const ServingPlanRow* row) {
                          return row->per_user > most_per_user && row->per_gpu >= most_per_gpu;
                        });
    return beaten && (any_meets || bounds.tpot / *tpot_limit > least_miss);
  };
  std::vector<std::vector<ServingPlanRow>> late(slots.size());
  base::parallel_for(slots.size(), o.threads, [&](std::size_t k) {
    Slot& out = slots[k];
    const Candidate& c = candidates[k];
    for (const Deferred& d : out.deferred) {
      if (ruled_out(c, d.bounds)) {
        ++out.ruled_out;
      } else {
        late[k].push_back(simulate(c, variant(formatted[c.format], c, d.b), d.b, out));
      }
    }
  });
  std::vector<ServingPlanRow> rows;
  for (std::size_t k = 0; k < slots.size(); ++k) {
    Slot& slot = slots[k];
    r.candidates += slot.candidates;
    r.no_fit += slot.no_fit;
    r.timed += slot.timed;
    r.ruled_out += slot.ruled_out;
    if (slot.smallest_no_fit.value() > 0 &&
        (r.smallest_no_fit.value() == 0 || slot.smallest_no_fit < r.smallest_no_fit)) {
      r.smallest_no_fit = slot.smallest_no_fit;
    }
    // The slot's rows by batch limit, as a loop over its limits makes them.
    std::vector<ServingPlanRow> own = std::move(slot.rows);
    std::move(late[k].begin(), late[k].end(), std::back_inserter(own));
    std::stable_sort(own.begin(), own.end(),
                     [](const ServingPlanRow& a, const ServingPlanRow& b) { return a.batch_limit < b.batch_limit; });
    std::move(own.begin(), own.end(), std::back_inserter(rows));
  }

  // The throughput-latency frontier: by tokens/s per user, those beating every faster-per-user row
  // on tokens/s per GPU; of equal rows, the first (the smallest batch limit of a deployment). A
  // saturated deployment does not serve its load (its queue grows without bound), nor does a run
  // stopped at its iteration limit, so neither is on it.
  std::vector<const ServingPlanRow*> by_user;
  for (const auto& row : rows) {
    const step::InferenceResult& i = *row.estimate.eval.inference;
    if (!i.saturated && !i.truncated) {
      by_user.push_back(&row);
    }
  }
  std::stable_sort(by_user.begin(), by_user.end(), [](const ServingPlanRow* a, const ServingPlanRow* b) {
    return a->per_user != b->per_user ? a->per_user > b->per_user : a->per_gpu > b->per_gpu;
  });
  double best_per_gpu = -1;
  for (const ServingPlanRow* row : by_user) {
    constexpr double kDistinct = 1e-3;  // a frontier step must gain at least 0.1 % per GPU
    if (row->per_gpu > best_per_gpu * (1.0 + kDistinct)) {
      r.frontier.push_back(*row);
      best_per_gpu = row->per_gpu;
    }
  }

  const Objective obj = o.objective;
  auto better = [obj](const ServingPlanRow& a, const ServingPlanRow& b) {
    const double x = a.objective(obj);
    const double y = b.objective(obj);
    if (std::fabs(x - y) > 1e-9 * std::max(std::fabs(x), std::fabs(y))) {
      return x < y;
    }
    if (a.gpus != b.gpus) {
      return a.gpus < b.gpus;
    }
    return a.per_user > b.per_user;
  };
  for (auto& row : rows) {
    if (row.meets()) {
      ++r.meeting;
      r.best.push_back(row);
    } else if (row.estimate.slo && !row.estimate.eval.inference->truncated &&
               (!r.closest || miss(row) < miss(*r.closest))) {
      r.closest = row;
    }
  }
  std::stable_sort(r.best.begin(), r.best.end(), better);
  // One row per deployment: its batch limits differ only in how many sequences may be in flight,
  // and the best of them stands for it.
  std::vector<ServingPlanRow> distinct;
  for (auto& row : r.best) {
    const bool seen = std::any_of(distinct.begin(), distinct.end(), [&](const ServingPlanRow& d) {
      return d.gpus == row.gpus && d.layout.tensor == row.layout.tensor && d.layout.pipeline == row.layout.pipeline &&
             d.format == row.format && d.speculative_tokens == row.speculative_tokens && d.pools == row.pools;
    });
    if (!seen) {
      distinct.push_back(std::move(row));
    }
  }
  r.best = std::move(distinct);
  if (static_cast<int>(r.best.size()) > o.top) {
    r.best.resize(static_cast<std::size_t>(o.top));
  }
  if (r.meeting > 0) {
    r.closest.reset();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace gpusim::search
