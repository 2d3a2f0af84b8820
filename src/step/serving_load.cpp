// A serving run's load: its requests drawn from the load's seed (prompt and output lengths uniform
// within the spread around their means; Poisson arrivals as exponential gaps, or a closed loop's
// first `concurrency` at once), and the loads kept in a TableCache so that runs of the same load
// (a serving search's batch limits) draw them once. Drawing is deterministic: a kept load is the
// same requests a fresh draw gives.
#include <algorithm>
#include <cmath>
#include <memory>

#include "step/serving_engine.hpp"

namespace gpusim::step {

namespace serving_engine {

std::vector<Drawn> draw_load(const ServingSetup& s) {
  Random rng(s.seed);
  const bool closed = s.arrival == workload::Arrival::kConcurrency;
  const std::int64_t initial = closed ? std::min(s.concurrency, s.requests) : s.requests;
  double t = 0;
  std::vector<Drawn> out;
  out.reserve(static_cast<std::size_t>(s.requests));
  for (std::int64_t i = 0; i < s.requests; ++i) {
    Drawn r;
    r.prompt = draw_length(rng, s.prompt, s.spread);
    r.output = draw_length(rng, s.output, s.output_spread);
    if (s.arrival == workload::Arrival::kPoisson) {
      t += -std::log(1.0 - rng.uniform()) / s.rate;
      r.arrival = t;
    } else {
      r.arrival = i < initial ? 0.0 : -1.0;  // closed loop: released when a request ends
    }
    out.push_back(r);
  }
  // Prefix hits from a stream of their own, so that a load draws the same requests with or without
  // prefix caching.
  if (s.prefix > 0 && s.prefix_hit > 0) {
    Random hits(s.seed ^ 0xA5A5A5A5DEADBEEFULL);
    for (Drawn& r : out) {
      r.hit = hits.uniform() < s.prefix_hit;
    }
  }
  return out;
}

}  // namespace serving_engine

// The loads drawn by the runs that share a TableCache, the last kKept of them.
struct TableCache::Loads {
  struct Entry {
    ServingSetup load;  // the fields of a load alone are compared (same_load)
    std::vector<serving_engine::Drawn> requests;
  };
  static constexpr std::size_t kKept = 4;
  std::deque<Entry> entries;
};

namespace {
// The fields draw_load reads.
bool same_load(const ServingSetup& a, const ServingSetup& b) {
  return a.seed == b.seed && a.requests == b.requests && a.prompt == b.prompt && a.output == b.output &&
         a.spread == b.spread && a.output_spread == b.output_spread && a.arrival == b.arrival && a.rate == b.rate &&
         a.concurrency == b.concurrency && a.prefix == b.prefix && a.prefix_hit == b.prefix_hit;
}
}  // namespace

const std::vector<serving_engine::Drawn>& LoadMemo::load(const ServingSetup& s, TableCache& tables) {
  if (!tables.loads_) {
    tables.loads_ = std::make_shared<TableCache::Loads>();
  }
  auto& entries = tables.loads_->entries;
  for (const auto& e : entries) {
    if (same_load(e.load, s)) {
      return e.requests;
    }
  }
  if (entries.size() == TableCache::Loads::kKept) {
    entries.pop_front();
  }
  entries.push_back(TableCache::Loads::Entry{s, serving_engine::draw_load(s)});
  return entries.back().requests;
}

}  // namespace gpusim::step
