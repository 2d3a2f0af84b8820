// A serving engine under load, request by request: a discrete-event simulation of its scheduler
// in which each iteration takes the time the IterationModel gives it.
//   static:     when idle, take up to `batch` waiting requests; prefill them in one iteration;
//               decode all of them, finished ones padded, until the longest ends (Hugging Face
//               `generate`, llama-bench).
//   continuous: every iteration first gives each running request its tokens (one to decode, or
//               the next chunk of its prompt), then admits waiting requests while sequences, the
//               token budget and free KV blocks last; a request short of KV blocks evicts the
//               latest admitted one, which is recomputed later with what it had generated
//               [kwon-2023] (vLLM's scheduler; its user keeps the tokens already streamed, so
//               they count in its output and its time per output token). An engine that reserves the whole output's
//               blocks at admission never evicts (TensorRT-LLM's in-flight batching). An engine
//               that does not mix prompts with decodes runs an admitting iteration on the
//               prompts alone (vLLM V0's default scheduler without chunked prefill); one that
//               schedules several decode iterations per call admits only between calls
//               (multi-step scheduling [vllm-multi-step-rfc], SGLang's continued decode steps).
// A request that finishes its prompt in an iteration samples its first token at the end of it.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "step/serving_engine.hpp"

namespace gpusim::step {

namespace {

std::atomic<bool> by_request{false};

}  // namespace

namespace serving_engine {

Engine::Engine(const ServingSetup& s, const IterationModel& prefill, const IterationModel& decode,
               const std::vector<Drawn>& load)
    : s_(s), prefill_(prefill), decode_(decode) {
  free_blocks_ = s.kv_blocks;
  const bool closed = s.arrival == workload::Arrival::kConcurrency;
  const std::int64_t initial = closed ? std::min(s.concurrency, s.requests) : s.requests;
  reqs_.reserve(load.size());
  for (const Drawn& d : load) {
    Request& r = reqs_.emplace_back();
    r.arrival = d.arrival;
    r.prompt = d.prompt;
    // Speculative steps: the first token from the prompt's pass, the rest τ per step on average.
    r.output = engine_output(s, d.output);
    r.tokens = d.output;
    r.computed = d.cached;
    if (d.hit) {
      // The prefix's whole blocks are cached: held by the pool already, and its tokens computed.
      r.shared = std::min(s.prefix, d.prompt - 1) / s.kv_block;
      r.blocks = r.shared;
      r.computed = r.shared * s.kv_block;
    }
  }
  released_ = static_cast<std::size_t>(closed ? initial : s.requests);
  totals_ = !by_request.load();
  lazy_ok_ = totals_ && s.scheduler == workload::Scheduler::kContinuous && s.kv_block <= kMaxSetBlock;
  if (lazy_ok_) {
    phase_count_.assign(static_cast<std::size_t>(s.kv_block), 0);
  }
}

ServingOutcome Engine::run() {
  std::size_t next = 0;  // next request to arrive, in arrival order
  while (finished_ < s_.requests) {
    while (next < released_ && reqs_[next].arrival <= now_) {
      waiting_.push_back(next++);
    }
    if (running_count() == 0 && waiting_.empty()) {
      flush(now_);  // no next iteration to hide the host's work behind
      if (next >= released_) {
        break;  // nothing can arrive: only a closed loop without completions gets here
      }
      now_ = reqs_[next].arrival;
      continue;
    }
    IterationShape shape;
    std::vector<Scheduled>& batch = batch_;
    batch.clear();
    const double preempted = out_.preemptions;
    const std::size_t queued = waiting_.size();
    bool fast = false;
    decoding_ = 0;
    if (s_.scheduler == workload::Scheduler::kStatic) {
      schedule_static(shape, batch);
    } else {
      // A call ends early when nothing is left running to decode.
      const bool admit = decode_streak_ % s_.scheduler_steps == 0 || running_count() == 0;
      if (lazy_ok_ && !lazy_ && iterations_ >= retry_at_ &&
          free_blocks_ * s_.kv_block >= kRebuildTokens * static_cast<std::int64_t>(running_count())) {
        rebuild();
        lazy_ = true;
      }
      fast = lazy_ && schedule_fast(shape, batch, admit);
      if (!fast) {
        if (lazy_) {
          backoff_ = fast_streak_ >= kSteadyStreak ? 1 : std::min(2 * backoff_, kMaxBackoff);
          retry_at_ = iterations_ + backoff_;
          materialize();
          lazy_ = false;
        }
        schedule_continuous(shape, batch, admit);
      }
      fast_streak_ = fast ? fast_streak_ + 1 : 0;
    }
    if (batch.empty() && decoding_ == 0) {
      // Waiting requests that no iteration can take (a prompt larger than the KV pool): the
      // memory check rules this out; stop rather than spin.
      out_.stalled = true;
      break;
    }
    if (++iterations_ > kMaxIterations) {
      out_.truncated = true;
      break;
    }
    const bool decode_only = shape.pairs == 0;
    decode_streak_ = decode_only ? decode_streak_ + 1 : 0;
    const IterationCost c = (decode_only ? decode_ : prefill_).cost(shape);
    account(c, shape, decode_only);
    now_ += c.time.value();
    const std::int64_t finished = finished_;
    // An overlap scheduler hands an iteration's tokens out while the next one runs
    // [trt-llm-overlap-scheduler, sglang-v0.4]: the previous iteration's become visible now.
    flush(now_);
    if (fast) {
      complete_fast(batch);
    } else if (s_.scheduler == workload::Scheduler::kStatic && totals_ && batch.empty()) {
      complete_static_decode();
    } else {
      complete(batch);
    }
    // A closed loop releases one request per completion.
    while (s_.arrival == workload::Arrival::kConcurrency && released_ < reqs_.size() &&
           static_cast<std::int64_t>(released_) < finished_ + s_.concurrency) {
      reqs_[released_++].arrival = now_;  // (with an overlap scheduler, one iteration early)
    }
    // With nobody waiting (or nobody admissible: the last decode-only iteration admitted, evicted
    // and finished nothing), the iterations up to the next arrival or completion decode the same
    // requests one token further each: take them at once.
    const bool unchanged = decode_only && finished == finished_ && queued == waiting_.size();
    if (s_.scheduler == workload::Scheduler::kContinuous && preempted == out_.preemptions &&
        (waiting_.empty() || unchanged)) {
      skip_decode(next < released_ ? reqs_[next].arrival : -1.0);
    }
  }
  flush(now_);
  summarize();
  return out_;
}

bool Engine::sample(std::size_t id) {
  Request& r = reqs_[id];
  r.generated += 1;
  if (r.first < 0) {
    r.first = now_;
    if (s_.overlap) {
      pending_first_.push_back(id);
    }
  }
  return r.generated == r.output;
}

void Engine::mark_done(std::size_t id) {
  Request& r = reqs_[id];
  r.done = now_;
  if (s_.overlap) {
    pending_done_.push_back(id);
  }
  finished_ += 1;
  output_tokens_ += static_cast<double>(r.tokens);
}

// Tokens sampled by the last iteration reach their users at `t` (overlap scheduler).
void Engine::flush(double t) {
  for (const std::size_t id : pending_first_) {
    reqs_[id].first = t;
  }
  for (const std::size_t id : pending_done_) {
    reqs_[id].done = t;
  }
  pending_first_.clear();
  pending_done_.clear();
}

void Engine::complete(const std::vector<Scheduled>& batch) {
  bool batch_over = s_.scheduler == workload::Scheduler::kStatic;
  bool any_done = false;  // only then is the running list swept for finished requests
  for (const Scheduled& b : batch) {
    Request& r = reqs_[b.id];
    if (b.samples && r.generated < r.output && sample(b.id)) {
      mark_done(b.id);
      any_done = true;
    }
    batch_over = batch_over && r.generated >= r.output;
  }
  if (s_.scheduler == workload::Scheduler::kStatic) {
    steps_ += 1;
    if (batch_over) {
      running_.clear();
      steps_ = 0;
    } else {
      if (totals_) {
        start_static_batch();
      }
    }
    return;
  }
  if (any_done) {
    sweep_finished();
  }
}

// Finished requests out of the running list, their blocks back to the pool.
void Engine::sweep_finished() {
  running_.erase(std::remove_if(running_.begin(), running_.end(),
                                [&](std::size_t id) {
                                  Request& r = reqs_[id];
                                  if (r.done < 0) {
                                    return false;
                                  }
                                  release(r);
                                  return true;
                                }),
                 running_.end());
}

void Engine::account(const IterationCost& c, const IterationShape& shape, bool decode_only, double iterations) {
  const double t = c.time.value();
  (decode_only ? out_.decode : out_.prefill) += c;
  seq_time_ += static_cast<double>(running_count()) * t;
  if (shape.tokens > shape.decode_rows) {
    prefill_tokens_sum_ += shape.tokens - shape.decode_rows;
    prefill_iteration_time_ += t;
  }
  if (shape.decode_rows > 0) {
    decode_rows_sum_ += shape.decode_rows;
    decode_iterations_ += iterations;
    decode_iteration_time_ += t;
  }
  held_block_time_ += static_cast<double>(s_.kv_blocks - free_blocks_) * t;
}

void Engine::summarize() {
  double first_arrival = -1;
  double last_done = 0;
  for (const Request& r : reqs_) {
    if (r.done >= 0) {
      first_arrival = first_arrival < 0 ? r.arrival : std::min(first_arrival, r.arrival);
      last_done = std::max(last_done, r.done);
    }
  }
  // One buffer for every latency in turn: a run of 10^5 requests is memory-bound here.
  std::vector<double> buf;
  buf.reserve(s_.latencies ? reqs_.size() : 0);
  auto over_requests = [&](auto&& latency, auto&& counts) {
    buf.clear();
    for (const Request& r : reqs_) {
      if (r.done >= 0 && counts(r)) {
        buf.push_back(latency(r));
      }
    }
    return percentiles(buf);
  };
  auto all = [](const Request&) { return true; };
  auto several = [](const Request& r) { return r.tokens > 1; };
  InferenceResult& res = out_.result;
  // The request path (the API server's fixed part and its tokenizer's time for the prompt the user
  // sent) delays every token the client sees by the same amount: it adds to the first token and to
  // the whole request, not to the time between tokens. An eviction moves generated tokens from a
  // request's output into its prompt, so prompt + output less the drawn output is the sent prompt.
  const auto path = [this](const Request& r) {
    return s_.api_latency +
           s_.tokenize_per_token * static_cast<double>(r.prompt + r.output - engine_output(s_, r.tokens));
  };
  if (s_.latencies) {
    res.ttft = over_requests([&](const Request& r) { return r.first - r.arrival + path(r); }, all);
    res.tpot =
        over_requests([](const Request& r) { return (r.done - r.first) / static_cast<double>(r.tokens - 1); }, several);
    res.e2e = over_requests([&](const Request& r) { return r.done - r.arrival + path(r); }, all);
    res.queue = over_requests([](const Request& r) { return r.scheduled - r.arrival; }, all);
  }
  const double span = first_arrival < 0 ? 0.0 : last_done - first_arrival;
  res.makespan = Seconds(span);
  res.requests = static_cast<double>(finished_);
  if (span > 0) {
    res.output_tokens_per_s = output_tokens_ / span;
    res.requests_per_s = static_cast<double>(finished_) / span;
    res.batch = seq_time_ / now_;
    res.kv_utilization = s_.kv_blocks > 0 ? held_block_time_ / (now_ * static_cast<double>(s_.kv_blocks)) : 0.0;
  }
  if (prefill_iteration_time_ > 0) {
    out_.prefill_rate = prefill_tokens_sum_ / prefill_iteration_time_;
  }
  if (decode_iteration_time_ > 0) {
    out_.decode_rate = decode_rows_sum_ / decode_iteration_time_;
    out_.decode_rows = decode_rows_sum_ / decode_iterations_;
  }
  if (s_.keep_requests) {
    out_.requests.reserve(reqs_.size());
    for (std::size_t i = 0; i < reqs_.size(); ++i) {
      const Request& r = reqs_[i];
      if (r.done >= 0) {
        out_.requests.push_back({i, r.arrival, r.first, r.done, r.prompt, r.tokens});
      }
    }
  }
  res.preemptions = out_.preemptions;
  res.truncated = out_.truncated;
  out_.busy = (out_.prefill.time + out_.decode.time).value();
  out_.elapsed = now_;
}

}  // namespace serving_engine

void set_serving_by_request(bool on) { by_request = on; }

ServingOutcome simulate_serving(const ServingSetup& setup, const IterationModel& prefill, const IterationModel& decode,
                                TableCache* tables) {
  if (tables != nullptr) {
    serving_engine::Engine engine(setup, prefill, decode, LoadMemo::load(setup, *tables));
    return engine.run();
  }
  serving_engine::Engine engine(setup, prefill, decode, serving_engine::draw_load(setup));
  return engine.run();
}

ServingOutcome simulate_offered(const ServingSetup& setup, const IterationModel& prefill, const IterationModel& decode,
                                const std::vector<OfferedRequest>& offered) {
  std::vector<serving_engine::Drawn> load;
  load.reserve(offered.size());
  for (const OfferedRequest& o : offered) {
    serving_engine::Drawn d;
    d.arrival = o.arrival;
    d.prompt = o.prompt;
    d.output = o.output;
    d.cached = o.cached;
    d.hit = o.prefix_hit;
    load.push_back(d);
  }
  ServingSetup s = setup;
  s.requests = static_cast<std::int64_t>(load.size());
  s.arrival = workload::Arrival::kPoisson;  // released at their arrivals
  serving_engine::Engine engine(s, prefill, decode, load);
  return engine.run();
}

}  // namespace gpusim::step
