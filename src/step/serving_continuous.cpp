// Continuous (in-flight) batching (the rules are stated in serving.cpp): every iteration the
// running requests get their tokens in order (the next chunk of a prompt, or one token to decode),
// then waiting requests are admitted in order while sequences, the token budget and free KV blocks
// last [yu-2022, kwon-2023]. With chunked prefill a prompt is split to fit the budget; without, it
// waits for a budget that holds it whole; an engine that does not mix runs prompt chunks alone and
// decodes only when there are none.
#include <algorithm>

#include "step/serving_engine.hpp"

namespace gpusim::step::serving_engine {
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
    const std::int64_t need = r.prompt - r.computed;  // all but a cached prefix
    const std::int64_t take = s_.chunked ? std::min(need, budget) : (need <= budget ? need : 0);
    // GUARANTEED_NO_EVICT-style admission takes the blocks of the whole request at once.
    if (take == 0 || !reserve(r, s_.reserve_output ? r.prompt + r.output : r.computed + take)) {
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
