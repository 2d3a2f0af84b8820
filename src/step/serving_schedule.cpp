// Which requests a serving iteration takes and the KV blocks they hold (the rules are stated in
// serving.cpp): static batches, continuous batching with chunked or whole prompts, admission in
// order while sequences, the token budget and free blocks last, and eviction of the latest
// admitted request when a running one is short of blocks [kwon-2023].
#include <algorithm>
#include <iterator>

#include "step/serving_engine.hpp"

namespace gpusim::step::serving_engine {

// Grows a request's KV to `tokens`; false when the pool is short.
bool Engine::reserve(Request& r, std::int64_t tokens) {
  if (tokens <= r.blocks * s_.kv_block) {
    return true;  // its blocks hold them already (most iterations: no division)
  }
  const std::int64_t need = blocks_for(tokens) - r.blocks;
  if (need <= 0) {
    return true;
  }
  if (need > free_blocks_) {
    return false;
  }
  free_blocks_ -= need;
  r.blocks += need;
  return true;
}

void Engine::release(Request& r) {
  free_blocks_ += r.blocks;
  r.blocks = 0;
}

// Evicts the latest admitted running request: it returns to the queue's front and will prefill
// its prompt and what it had generated again.
void Engine::evict_back() {
  const std::size_t id = running_.back();
  running_.pop_back();
  requeue(id);
}

void Engine::requeue(std::size_t id) {
  Request& v = reqs_[id];
  release(v);
  v.prompt += v.generated;
  v.output -= v.generated;
  v.generated = 0;
  v.computed = 0;
  waiting_.push_front(id);
  out_.preemptions += 1;
}

// Requests are served in running order, so those after `id` have not been reached: the victims
// are taken from the back, and a request that is itself the back preempts itself; a request
// already served in the iteration is never a victim (vLLM's FCFS preemption, `self.running.pop()`
// in the V1 scheduler [vllm-source]).
bool Engine::reserve_or_evict(std::size_t id, std::int64_t tokens) {
  while (!reserve(reqs_[id], tokens)) {
    const bool self = running_.back() == id;
    evict_back();
    if (self) {
      return false;
    }
  }
  return true;
}

void Engine::schedule_static(IterationShape& shape, std::vector<Scheduled>& batch) {
  if (running_.empty()) {
    while (!waiting_.empty() && static_cast<std::int64_t>(running_.size()) < s_.max_seqs) {
      running_.push_back(waiting_.front());
      waiting_.pop_front();
    }
    for (const std::size_t id : running_) {
      Request& r = reqs_[id];
      const double p = static_cast<double>(r.prompt);
      shape.tokens += p;
      shape.pairs += p * (p + 1.0) / 2.0;
      shape.rows += 1;
      r.scheduled = now_;
      r.computed = r.prompt;
      batch.push_back({id, true});
    }
    return;
  }
  // Decode: every sequence of the batch, finished ones padded, over its grown context.
  if (!totals_) {
    for (const std::size_t id : running_) {
      Request& r = reqs_[id];
      shape.tokens += 1;
      shape.rows += 1;
      shape.decode_rows += 1;
      shape.context += static_cast<double>(r.prompt + std::min(r.generated, static_cast<std::int64_t>(steps_)));
      batch.push_back({id, r.generated < r.output});
    }
    return;
  }
  // Each holds min(output, steps) generated tokens, so the batch's context is its prompts, the
  // outputs of the finished and `steps` for each of the others; complete_static_decode gives the
  // tokens.
  const auto n = static_cast<std::int64_t>(running_.size());
  const auto unfinished = n - static_cast<std::int64_t>(static_next_);
  shape.tokens += static_cast<double>(n);
  shape.rows += static_cast<double>(n);
  shape.decode_rows += static_cast<double>(n);
  shape.context += static_cast<double>(static_prompts_ + static_finished_ + unfinished * steps_);
  decoding_ = n;
}

// The batch after its prefill: its requests by output length, the order in which they finish.
void Engine::start_static_batch() {
  static_order_ = running_;
  std::stable_sort(static_order_.begin(), static_order_.end(),
                   [&](std::size_t a, std::size_t b) { return reqs_[a].output < reqs_[b].output; });
  static_prompts_ = 0;
  static_finished_ = 0;
  static_next_ = 0;
  for (const std::size_t id : static_order_) {
    static_prompts_ += reqs_[id].prompt;
  }
  while (static_next_ < static_order_.size() &&
         reqs_[static_order_[static_next_]].generated >= reqs_[static_order_[static_next_]].output) {
    static_finished_ += reqs_[static_order_[static_next_]].output;
    ++static_next_;
  }
}

// A decode iteration of the static batch: every unfinished request samples a token; those whose
// output it completes finish now, and the batch ends with its longest.
void Engine::complete_static_decode() {
  const std::int64_t step = steps_ + 1;
  while (static_next_ < static_order_.size() && reqs_[static_order_[static_next_]].output <= step) {
    const std::size_t id = static_order_[static_next_++];
    Request& r = reqs_[id];
    r.generated = r.output;
    mark_done(id);
    static_finished_ += r.output;
  }
  steps_ = step;
  if (static_next_ == static_order_.size()) {
    running_.clear();
    steps_ = 0;
  }
}

// `admit`: a scheduler call, which may take waiting requests (every iteration unless the engine
// runs several decode iterations per call). An engine that does not mix runs prompt chunks (of
// running requests, then of admitted ones) alone, and decodes only when there are none.
void Engine::schedule_continuous(IterationShape& shape, std::vector<Scheduled>& batch, bool admit) {
  std::int64_t budget = s_.max_batched_tokens;
  if (!s_.mixed) {
    schedule_running(shape, batch, budget, true, false);
    if (admit) {
      admit_waiting(shape, batch, budget);
    }
    if (!batch.empty()) {
      return;
    }
    schedule_running(shape, batch, budget, false, true);
    return;
  }
  schedule_running(shape, batch, budget, true, true);
  if (admit) {
    admit_waiting(shape, batch, budget);
  }
}

// Gives the running requests their tokens in order: the next chunk of a prompt (`prompts`), or
// one token to decode (`decodes`).
void Engine::schedule_running(IterationShape& shape, std::vector<Scheduled>& batch, std::int64_t& budget, bool prompts,
                              bool decodes) {
  // The decodes' tokens and contexts are whole numbers: summed here as integers and added to the
  // shape once, they give the shape the same values as adding them one by one.
  std::int64_t decoded = 0;
  std::int64_t context = 0;
  for (std::size_t i = 0; i < running_.size() && budget > 0; ++i) {
    const std::size_t id = running_[i];
    Request& r = reqs_[id];
    if (r.computed < r.prompt) {
      const std::int64_t need = r.prompt - r.computed;
      const std::int64_t take = s_.chunked ? std::min(need, budget) : (need <= budget ? need : 0);
      if (!prompts || take == 0 || !reserve_or_evict(id, r.computed + take)) {
        continue;
      }
      add_prefill(shape, batch, id, take);
      budget -= take;
    } else {
      if (!decodes || !reserve_or_evict(id, r.computed + r.generated + 1)) {
        continue;
      }
      decoded += 1;
      context += r.computed + r.generated;
      batch.push_back({id, true});
      budget -= 1;
    }
  }
  const auto d = static_cast<double>(decoded);
  shape.tokens += d;
  shape.rows += d;
  shape.decode_rows += d;
  shape.context += static_cast<double>(context);
}

// Admits waiting requests in order while sequences, the token budget and free KV blocks last.
void Engine::admit_waiting(IterationShape& shape, std::vector<Scheduled>& batch, std::int64_t& budget) {
  while (!waiting_.empty() && budget > 0 && static_cast<std::int64_t>(running_count()) < s_.max_seqs) {
    const std::size_t id = waiting_.front();
    Request& r = reqs_[id];
    const std::int64_t take = s_.chunked ? std::min(r.prompt, budget) : (r.prompt <= budget ? r.prompt : 0);
    // GUARANTEED_NO_EVICT-style admission takes the blocks of the whole request at once.
    if (take == 0 || !reserve(r, s_.reserve_output ? r.prompt + r.output : take)) {
      break;  // no room this iteration: requests are admitted in order
    }
    waiting_.pop_front();
    running_.push_back(id);
    add_prefill(shape, batch, id, take);
    budget -= take;
  }
}

void Engine::add_prefill(IterationShape& shape, std::vector<Scheduled>& batch, std::size_t id, std::int64_t take) {
  Request& r = reqs_[id];
  const double q = static_cast<double>(take);
  shape.tokens += q;
  shape.pairs += q * (static_cast<double>(r.computed) + (q + 1.0) / 2.0);
  if (r.scheduled < 0) {
    r.scheduled = now_;
  }
  r.computed += take;
  const bool ends = r.computed == r.prompt;
  shape.rows += ends ? 1.0 : 0.0;
  batch.push_back({id, ends});
}

}  // namespace gpusim::step::serving_engine
