// Private to src/step/: the serving engine the discrete-event simulation of serving.cpp runs
// (its scheduling rules are stated there), split over serving.cpp (the event loop, completions,
// the closed-form decode runs and the statistics), one file per batching policy, which says which
// requests an iteration takes, request by request (serving_static.cpp, serving_continuous.cpp: with
// whole or chunked prompts, mixed with decodes or not), serving_kv.cpp (the KV blocks they hold, and
// evictions), serving_stretch.cpp (runs of decode iterations in closed form) and
// serving_decoders.cpp (the same iterations in the work of their events when every running request
// gets what it asks).
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

// A load's request as drawn from its seed: when it arrives (−1: a closed loop releases it when
// another ends) and its prompt and output lengths.
struct Drawn {
  double arrival = 0;
  std::int64_t prompt = 0;
  std::int64_t output = 0;
  bool hit = false;         // finds the shared prefix cached
  std::int64_t cached = 0;  // prompt tokens whose KV it brings (a decode pool's request)
};
// The requests of the load `s` describes, in arrival order (serving_load.cpp).
std::vector<Drawn> draw_load(const ServingSetup& s);

// How the decode set (serving_decoders.cpp) keeps a decoding request's KV blocks.
enum class DecodeClass : std::uint8_t {
  kNone,     // not a decoder of the set (prefilling, waiting, finished, or the set is not kept)
  kEager,    // its blocks kept request by request (a first decode may take more than one block)
  kTight,    // holds exactly the blocks of its tokens: one more each time its tokens fill a block
  kCovered,  // holds the blocks of its whole output already (reserved at admission)
};

struct Request {
  double arrival = 0;
  std::int64_t prompt = 0;     // tokens to prefill (with what it had generated, after an eviction)
  std::int64_t output = 0;     // tokens to generate (what is left of them, after an eviction)
  std::int64_t tokens = 0;     // output tokens its user receives: the drawn output, whatever evictions
  std::int64_t computed = 0;   // prompt tokens whose KV is cached
  std::int64_t generated = 0;  // output tokens so far
  std::int64_t blocks = 0;     // KV blocks held (with the shared prefix's)
  std::int64_t shared = 0;     // of them, the shared prefix's: held once by the pool, never released
  double first = -1;           // time of the first output token
  double scheduled = -1;       // time its first token was scheduled
  double done = -1;
  // While in the decode set: generated = the set's clock − gen_base (kept there, not here), and a
  // kTight request needs a block in the iterations whose clock ≡ phase (mod the block size).
  std::int64_t gen_base = 0;
  std::int64_t phase = 0;
  DecodeClass cls = DecodeClass::kNone;
};

// The decode steps the engine runs for a request of `output` tokens: one per token, or with
// speculative decoding the first from the prompt's pass and the rest τ per step (ServingSetup).
inline std::int64_t engine_output(const ServingSetup& s, std::int64_t output) {
  return s.tokens_per_step > 1 ? 1 + std::llround(static_cast<double>(output - 1) / s.tokens_per_step) : output;
}

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

// The decode set keeps one count per token position of a KV block (its phase table); engines with
// larger blocks than this (the runtime files have 1 to 128 tokens) run request by request.
inline constexpr std::int64_t kMaxSetBlock = 4096;
// When the decode set is rebuilt after an iteration run request by request (serving.cpp): once the
// pool has room for kRebuildTokens more tokens of every running request, and not before a wait that
// doubles, up to kMaxBackoff iterations, while such iterations recur within kSteadyStreak of the
// last rebuild. These decide only how fast a run is, never what it gives (both paths give the same
// iterations).
inline constexpr std::int64_t kRebuildTokens = 2;
inline constexpr std::int64_t kMaxBackoff = 1024;
inline constexpr std::int64_t kSteadyStreak = 32;

class Engine {
 public:
  // `load`: the requests draw_load(s) gives (read here only).
  Engine(const ServingSetup& s, const IterationModel& prefill, const IterationModel& decode,
         const std::vector<Drawn>& load);

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

  // Evicts the latest admitted running request: it returns to the queue's front and will prefill
  // its prompt and what it had generated again.
  void evict_back();
  // Its blocks back to the pool, and the request back to the queue's front (an eviction).
  void requeue(std::size_t id);

  // Grows the KV of `id` (at its place in the running order) to `tokens`, evicting from the back;
  // false when it had to evict itself.
  bool reserve_or_evict(std::size_t id, std::int64_t tokens);

  void schedule_static(IterationShape& shape, std::vector<Scheduled>& batch);
  void start_static_batch();
  void complete_static_decode();

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
  void sweep_finished();  // finished requests out of the running list, their blocks released

  // Decode iterations up to the next event, in closed-form stretches (serving.cpp).
  void skip_decode(double arrival);
  // One stretch; true when it ended with requests finishing and another may follow.
  bool stretch(double arrival);

  void account(const IterationCost& c, const IterationShape& shape, bool decode_only, double iterations = 1);

  std::size_t running_count() const { return running_.size() - dead_; }

  // One token sampled for `id` at the iteration's end (its first sets the time to first token);
  // true when it completes the output.
  bool sample(std::size_t id);
  // A request's end: its time and its output tokens.
  void mark_done(std::size_t id);
  // The same in the decode set: its blocks back to the pool, and out of the running list.
  void finish(std::size_t id);

  // The decode set (serving_decoders.cpp). Continuous batching, with every decoding request
  // (computed = prompt) in one set: an iteration in which each of them decodes advances the set's
  // clock instead of each request, and the set knows, without visiting them, how many decode, their
  // total context, how many blocks they need next (a table by phase of the block) and which finishes
  // first (a heap on the clock at which each does). Such an iteration costs the work of its
  // prompts, admissions and completions. An iteration in which the budget or the pool could fall
  // short is run request by request (serving_continuous.cpp, serving_kv.cpp) on materialized requests, and the set
  // rebuilt after it: the answers are the same either way.

  // The iteration through the set; false, with nothing changed, when it is not one the set can run.
  bool schedule_fast(IterationShape& shape, std::vector<Scheduled>& batch, bool admit);
  // Blocks the set's next decode takes from the pool.
  std::int64_t blocks_to_decode() const;
  // Every decoder decodes one token: their blocks, their share of the iteration.
  void decode_all(IterationShape& shape, std::int64_t& budget);
  // `k` more blocks-and-tokens for every decoder: the blocks they need (for k = 1, blocks_to_decode).
  std::int64_t blocks_to_decode(std::int64_t k) const;
  // Evicts from the back of the running list as the request-by-request rules would for an
  // iteration that needs `need` blocks (with the decoders' own when `decoders`).
  void evict_to_fit(std::int64_t need, bool decoders);
  std::int64_t decode_blocks(const Request& r) const;  // a decoder's blocks for its next decode
  std::int64_t held_blocks(const Request& r) const;    // a decoder's blocks now
  void prune_finishes();                               // drops finishing clocks of evicted decoders
  void complete_fast(const std::vector<Scheduled>& batch);
  void finish_due();              // the decoders whose last token the set's clock has reached finish
  void sweep_dead();              // finished requests out of running_ once they are most of it
  void join(std::size_t id);      // a request that decodes from now on, with its `generated` so far
  DecodeClass place(Request& r);  // its class (and phase-table entry) from its blocks and tokens
  void leave(std::size_t id);     // out of the set's totals
  void materialize();             // writes the set's state back into its requests and drops the set
  void rebuild();                 // the set from the requests

  void summarize();

  const ServingSetup& s_;
  const IterationModel& prefill_;
  const IterationModel& decode_;
  std::vector<Request> reqs_;
  std::vector<Scheduled> batch_;            // the iteration's requests, reused
  std::vector<std::size_t> pending_first_;  // overlap scheduler: first and last tokens not yet handed out
  std::vector<std::size_t> pending_done_;
  std::size_t released_ = 0;
  std::deque<std::size_t> waiting_;
  std::vector<std::size_t> running_;
  std::int64_t free_blocks_ = 0;
  std::int64_t finished_ = 0;
  std::int64_t steps_ = 0;                 // decode steps of the current static batch
  std::vector<std::size_t> static_order_;  // the static batch by output length
  std::size_t static_next_ = 0;            // its first unfinished request in that order
  std::int64_t static_prompts_ = 0;        // its prompt tokens
  std::int64_t static_finished_ = 0;       // the output tokens of its finished requests
  std::int64_t decode_streak_ = 0;         // decode-only iterations since the last one with prompt tokens
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
  // The decode set (serving_decoders.cpp).
  bool totals_ = true;    // the decode set and a static batch's totals (set_serving_by_request)
  bool lazy_ok_ = false;  // may be kept (continuous batching, block table of bounded size)
  bool lazy_ = false;     // built: the running decoders are in the set
  // After an iteration run request by request, the set is rebuilt only once the pool has room for
  // a decode of every running request and after a wait that doubles while such iterations recur
  // (a saturated pool, a tight budget): the rebuilds then cost no more than those iterations.
  std::int64_t retry_at_ = 0;  // the iteration from which a rebuild may be tried
  std::int64_t backoff_ = 1;
  std::int64_t fast_streak_ = 0;
  std::int64_t clock_ = 0;     // decode iterations (and skipped ones) the whole set took
  std::int64_t decoders_ = 0;  // requests in the set
  std::int64_t context0_ = 0;  // sum of (computed − gen_base): their context is context0_ + decoders_ × clock_
  std::int64_t tight_ = 0;     // kTight requests
  std::vector<std::int64_t> phase_count_;                       // kTight requests by phase
  std::vector<std::size_t> eager_;                              // kEager requests
  std::vector<std::size_t> prefilling_;                         // running requests with prompt left, in running order
  std::vector<std::pair<std::int64_t, std::size_t>> finishes_;  // min-heap on the finishing clock
  std::vector<std::int64_t> takes_;                             // prompt chunks of the iteration being scheduled
  std::size_t dead_ = 0;                                        // finished requests not yet swept out of running_
  std::int64_t decoding_ = 0;                                   // decoders decoding in this iteration
  std::size_t first_admitted_ = 0;                              // the batch's first request admitted in this iteration
};

}  // namespace gpusim::step::serving_engine

namespace gpusim::step {
// The loads a TableCache keeps (serving_load.cpp).
struct LoadMemo {
  // draw_load(s), drawn once for the runs sharing `tables` (the last few loads are kept).
  static const std::vector<serving_engine::Drawn>& load(const ServingSetup& s, TableCache& tables);
};
}  // namespace gpusim::step
