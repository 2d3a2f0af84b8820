// Static batching (the rules are stated in serving.cpp): a batch of up to max_seqs waiting requests
// is prefilled together, then decodes, finished sequences padded, until its longest output ends
// (Hugging Face `generate`, llama-bench); only then is the next batch taken.
#include <algorithm>

#include "step/serving_engine.hpp"

namespace gpusim::step::serving_engine {
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

}  // namespace gpusim::step::serving_engine
