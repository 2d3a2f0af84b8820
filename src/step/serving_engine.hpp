// Private to src/step/: the serving engine the discrete-event simulation of serving.cpp runs
// (its scheduling rules are stated there), split over serving.cpp (the event loop, completions,
// the closed-form decode runs and the statistics) and serving_schedule.cpp (which requests an
// iteration takes and the KV blocks they hold).
#pragma once

#include <cmath>
#include <cstdint>
#include <deque>
#include <vector>

#include "step/internal.hpp"

namespace gpusim::step::serving_engine {

// splitmix64 [steele-2014]: a fast, seedable generator; the simulation needs reproducible draws,
// not cryptographic ones.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  double uniform() {  // in [0, 1)
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return static_cast<double>((z ^ (z >> 31U)) >> 11U) * 0x1.0p-53;
  }

 private:
  std::uint64_t state_;
};

struct Request {
  double arrival = 0;
  std::int64_t prompt = 0;     // tokens to prefill (with what it had generated, after an eviction)
  std::int64_t output = 0;     // tokens to generate
  std::int64_t computed = 0;   // prompt tokens whose KV is cached
  std::int64_t generated = 0;  // output tokens so far
  std::int64_t blocks = 0;     // KV blocks held
  double first = -1;           // time of the first output token
  double scheduled = -1;       // time its first token was scheduled
  double done = -1;
};

inline std::int64_t draw_length(Random& rng, std::int64_t mean, double spread) {
  if (spread <= 0) {
    return mean;
  }
  const double lo = static_cast<double>(mean) * (1.0 - spread);
  const double hi = static_cast<double>(mean) * (1.0 + spread);
  return std::max<std::int64_t>(1, std::llround(lo + (hi - lo) * rng.uniform()));
}

// Bounds the simulation's work: iterations simulated one by one (runs of identical decode
// iterations are summed in closed form and count once). 10^5 requests at 5 per second to a 70B model
// take 1.9 x 10^5;
// a KV pool that thrashes, evicting and recomputing long requests over and over, would take
// without bound, so past this the run stops and reports over the requests completed.
inline constexpr std::int64_t kMaxIterations = 4'000'000;

class Engine {
 public:
  Engine(const ServingSetup& s, const IterationModel& prefill, const IterationModel& decode);

  ServingOutcome run();

 private:
  struct Scheduled {
    std::size_t id;
    bool samples;  // ends its prompt or decodes: an output token at the end of the iteration
  };

  std::int64_t blocks_for(std::int64_t tokens) const { return (tokens + s_.kv_block - 1) / s_.kv_block; }

  // Grows a request's KV to `tokens`; false when the pool is short.
  bool reserve(Request& r, std::int64_t tokens);

  void release(Request& r);

  // Evicts the latest admitted running request (not `keep`): it returns to the queue's front and
  // will prefill its prompt and what it had generated again.
  bool evict_for(std::size_t keep);

  bool reserve_or_evict(std::size_t id, std::int64_t tokens);

  void schedule_static(IterationShape& shape, std::vector<Scheduled>& batch);

  // `admit`: a scheduler call, which may take waiting requests (every iteration unless the engine
  // runs several decode iterations per call). An engine that does not mix runs prompt chunks (of
  // running requests, then of admitted ones) alone, and decodes only when there are none.
  void schedule_continuous(IterationShape& shape, std::vector<Scheduled>& batch, bool admit);

  // Gives the running requests their tokens in order: the next chunk of a prompt (`prompts`), or
  // one token to decode (`decodes`).
  void schedule_running(IterationShape& shape, std::vector<Scheduled>& batch, std::int64_t& budget, bool prompts,
                        bool decodes);

  // Admits waiting requests in order while sequences, the token budget and free KV blocks last.
  void admit_waiting(IterationShape& shape, std::vector<Scheduled>& batch, std::int64_t& budget);

  void add_prefill(IterationShape& shape, std::vector<Scheduled>& batch, std::size_t id, std::int64_t take);

  // Tokens sampled by the last iteration reach their users at `t` (overlap scheduler).
  void flush(double t);

  void complete(const std::vector<Scheduled>& batch);

  // k more decode iterations of the running requests, summed in closed form: each iteration's
  // cost is linear in the total context, which grows by one token per request per iteration, so
  // k iterations take k x the cost at their mean context (exact while one of the GPU or the host
  // paces them throughout). Stops before a request would finish, before an iteration would start
  // at or after `arrival` (when >= 0), and before the KV pool runs short.
  void skip_decode(double arrival);

  void account(const IterationCost& c, const IterationShape& shape, bool decode_only, double iterations = 1);

  void summarize();

  const ServingSetup& s_;
  const IterationModel& prefill_;
  const IterationModel& decode_;
  Random rng_;
  std::vector<Request> reqs_;
  std::vector<Scheduled> batch_;            // the iteration's requests, reused
  std::vector<std::size_t> pending_first_;  // overlap scheduler: first and last tokens not yet handed out
  std::vector<std::size_t> pending_done_;
  std::size_t released_ = 0;
  std::deque<std::size_t> waiting_;
  std::vector<std::size_t> running_;
  std::int64_t free_blocks_ = 0;
  std::int64_t finished_ = 0;
  std::int64_t steps_ = 0;          // decode steps of the current static batch
  std::int64_t decode_streak_ = 0;  // decode-only iterations since the last one with prompt tokens
  std::int64_t iterations_ = 0;
  double now_ = 0;
  double output_tokens_ = 0;
  double seq_time_ = 0;
  double decode_rows_sum_ = 0;        // sequences decoded, summed over iterations
  double decode_iteration_time_ = 0;  // time of the iterations that decode
  double decode_iterations_ = 0;
  double prefill_tokens_sum_ = 0;
  double prefill_iteration_time_ = 0;
  double held_block_time_ = 0;
  ServingOutcome out_;
};

}  // namespace gpusim::step::serving_engine
