// The decode set of the serving engine (serving_engine.hpp): continuous-batching iterations in the
// work of their events (prompt chunks, admissions, completions) rather than of every running
// request, with the answers of the request-by-request rules of serving_continuous.cpp and serving_kv.cpp.
//
// Why it is exact. An iteration's tokens depend on the order of the running list only when the
// token budget runs out part-way through it: while the whole demand (the prompts' chunks plus one
// token per decoder) fits the budget, every running request gets what it asks, in any order. Those
// iterations run here, a pool too short for them evicting as the rules would (evict_to_fit); any
// other runs request by request. A decoder's KV grows by one block each time its tokens t fill one
// (t ≡ 0 mod the block size): with tokens t = computed + clock − gen_base, that is the clocks
// ≡ gen_base − computed (its phase), so the blocks of the next decode are the count of the clock's
// phase, plus those of the few decoders whose blocks are not yet exactly their tokens' (kEager:
// after its prompt, a request holds the blocks of the prompt and its first token's slot is taken
// at its first decode, with the second's).
#include <algorithm>

#include "step/serving_engine.hpp"

namespace gpusim::step::serving_engine {

namespace {
using Finish = std::pair<std::int64_t, std::size_t>;
// The heap's top is the earliest finishing clock. Requests finishing at the same clock finish in
// the same iteration, whose effects do not depend on their order: the clock alone is compared.
constexpr auto kLater = [](const Finish& a, const Finish& b) { return a.first > b.first; };
}  // namespace

std::int64_t Engine::blocks_to_decode() const {
  std::int64_t need = tight_ > 0 ? phase_count_[static_cast<std::size_t>(clock_ % s_.kv_block)] : 0;
  for (const std::size_t id : eager_) {
    const Request& r = reqs_[id];
    need += std::max<std::int64_t>(0, blocks_for(r.computed + (clock_ - r.gen_base) + 1) - r.blocks);
  }
  return need;
}

std::int64_t Engine::blocks_to_decode(std::int64_t k) const {
  // A kTight request needs a block at each clock of its phase among clock_ ... clock_ + k − 1:
  // k / block of them for every phase, and one more for the phases the remainder reaches.
  const std::int64_t block = s_.kv_block;
  std::int64_t need = tight_ * (k / block);
  for (std::int64_t i = 0; i < k % block; ++i) {
    need += phase_count_[static_cast<std::size_t>((clock_ + i) % block)];
  }
  for (const std::size_t id : eager_) {
    const Request& r = reqs_[id];
    need += std::max<std::int64_t>(0, blocks_for(r.computed + (clock_ - r.gen_base) + k) - r.blocks);
  }
  return need;
}

bool Engine::schedule_fast(IterationShape& shape, std::vector<Scheduled>& batch, bool admit) {
  std::int64_t budget = s_.max_batched_tokens;
  // The prompts' chunks in running order, as serving_continuous.cpp would give them: with decodes
  // mixed in, every prompt gets all it needs (else the iteration is not one for the set); alone,
  // they share the budget in order.
  std::int64_t demand = s_.mixed ? decoders_ : 0;
  std::int64_t blocks = s_.mixed ? blocks_to_decode() : 0;
  std::int64_t left = budget;
  takes_.clear();
  for (const std::size_t id : prefilling_) {
    const Request& r = reqs_[id];
    const std::int64_t need = r.prompt - r.computed;
    std::int64_t take = need;
    if (!s_.mixed) {
      take = left <= 0 ? 0 : s_.chunked ? std::min(need, left) : (need <= left ? need : 0);
      left -= take;
    }
    demand += take;
    blocks += std::max<std::int64_t>(0, blocks_for(r.computed + take) - r.blocks);
    takes_.push_back(take);
  }
  // (Alone, the decodes that may follow must fit the budget too: checked here, before anything
  // changes, since evictions for the prompts change the state.)
  if (demand > budget || (!s_.mixed && decoders_ > budget)) {
    return false;
  }
  if (blocks > free_blocks_) {
    evict_to_fit(blocks, s_.mixed);
  }
  for (std::size_t i = 0; i < prefilling_.size(); ++i) {
    if (takes_[i] > 0) {
      const std::size_t id = prefilling_[i];
      reserve(reqs_[id], reqs_[id].computed + takes_[i]);
      add_prefill(shape, batch, id, takes_[i]);
      budget -= takes_[i];
    }
  }
  if (s_.mixed) {
    decode_all(shape, budget);
  }
  first_admitted_ = batch.size();
  if (admit) {
    admit_waiting(shape, batch, budget);
  }
  if (s_.mixed || !batch.empty()) {
    return true;
  }
  // Decodes alone, when no prompt ran (the budget is whole, and holds them).
  takes_.assign(prefilling_.size(), 0);
  if (const std::int64_t need = blocks_to_decode(); need > free_blocks_) {
    evict_to_fit(need, true);
  }
  decode_all(shape, budget);
  return true;
}

// The blocks of one decode of a decoder of the set, at the set's clock.
std::int64_t Engine::decode_blocks(const Request& r) const {
  switch (r.cls) {
    case DecodeClass::kTight:
      return r.phase == clock_ % s_.kv_block ? 1 : 0;
    case DecodeClass::kEager:
      return std::max<std::int64_t>(0, blocks_for(r.computed + (clock_ - r.gen_base) + 1) - r.blocks);
    default:
      return 0;
  }
}

std::int64_t Engine::held_blocks(const Request& r) const {
  return r.cls == DecodeClass::kTight ? blocks_for(r.computed + (clock_ - r.gen_base)) : r.blocks;
}

// The iteration's `need` blocks exceed the pool: serving_continuous.cpp reserves in running order and
// a request short of blocks evicts the latest admitted one, itself when it is the last
// (reserve_or_evict). Every victim is one not yet reached, so the requests evicted are the fewest
// from the back whose blocks, with their own needs dropped, leave the rest room: each eviction in
// that order happens exactly when a request reached first would be short.
void Engine::evict_to_fit(std::int64_t need, bool decoders) {
  std::int64_t room = free_blocks_;
  std::size_t back = running_.size();
  std::size_t prompts = prefilling_.size();
  std::size_t evicted = 0;
  while (need > room) {  // some request with blocks to reserve is left
    do {
      --back;
    } while (reqs_[running_[back]].done >= 0);
    const Request& r = reqs_[running_[back]];
    if (r.cls != DecodeClass::kNone) {
      need -= decoders ? decode_blocks(r) : 0;
    } else {
      --prompts;  // the back of the prompts in running order
      need -= std::max<std::int64_t>(0, blocks_for(r.computed + takes_[prompts]) - r.blocks);
    }
    room += held_blocks(r) - r.shared;
    ++evicted;
  }
  for (; evicted > 0; --evicted) {
    while (reqs_[running_.back()].done >= 0) {
      running_.pop_back();
      --dead_;
    }
    const std::size_t id = running_.back();
    running_.pop_back();
    Request& v = reqs_[id];
    if (v.cls != DecodeClass::kNone) {
      v.blocks = held_blocks(v);
      v.generated = clock_ - v.gen_base;
      leave(id);
    } else {
      prefilling_.pop_back();
      takes_.pop_back();
    }
    requeue(id);
  }
}

void Engine::decode_all(IterationShape& shape, std::int64_t& budget) {
  free_blocks_ -= blocks_to_decode();
  for (const std::size_t id : eager_) {
    Request& r = reqs_[id];
    r.blocks = std::max(r.blocks, blocks_for(r.computed + (clock_ - r.gen_base) + 1));
  }
  const auto d = static_cast<double>(decoders_);
  shape.tokens += d;
  shape.rows += d;
  shape.decode_rows += d;
  shape.context += static_cast<double>(context0_ + decoders_ * clock_);
  budget -= decoders_;
  decoding_ = decoders_;
}

void Engine::complete_fast(const std::vector<Scheduled>& batch) {
  if (decoding_ > 0) {
    ++clock_;
    finish_due();
    // Decoders whose blocks now match their tokens join the phase table.
    std::size_t keep = 0;
    for (const std::size_t id : eager_) {
      if (place(reqs_[id]) == DecodeClass::kEager) {
        eager_[keep++] = id;
      }
    }
    eager_.resize(keep);
  }
  bool ended = false;
  for (const Scheduled& b : batch) {
    Request& r = reqs_[b.id];
    if (!b.samples || r.generated >= r.output) {
      continue;
    }
    ended = true;  // the prompt's last chunk: its first token
    if (sample(b.id)) {
      finish(b.id);
    } else {
      join(b.id);
    }
  }
  if (ended) {
    prefilling_.erase(std::remove_if(prefilling_.begin(), prefilling_.end(),
                                     [&](std::size_t id) { return reqs_[id].computed == reqs_[id].prompt; }),
                      prefilling_.end());
  }
  for (std::size_t i = first_admitted_; i < batch.size(); ++i) {  // admitted, prompt left: after the others
    if (reqs_[batch[i].id].computed < reqs_[batch[i].id].prompt) {
      prefilling_.push_back(batch[i].id);
    }
  }
  sweep_dead();
}

void Engine::finish_due() {
  while (!finishes_.empty() && finishes_.front().first <= clock_) {
    const Finish f = finishes_.front();
    std::pop_heap(finishes_.begin(), finishes_.end(), kLater);
    finishes_.pop_back();
    const std::size_t id = f.second;
    Request& r = reqs_[id];
    if (r.cls == DecodeClass::kNone || r.gen_base + r.output != f.first) {
      continue;  // evicted since: no longer the clock it finishes at
    }
    if (r.cls == DecodeClass::kTight) {
      r.blocks = blocks_for(r.computed + r.output);
    }
    leave(id);
    r.generated = r.output;
    finish(id);
  }
}

void Engine::sweep_dead() {
  if (dead_ > 64 && 2 * dead_ > running_.size()) {
    running_.erase(
        std::remove_if(running_.begin(), running_.end(), [&](std::size_t id) { return reqs_[id].done >= 0; }),
        running_.end());
    dead_ = 0;
  }
}

void Engine::prune_finishes() {
  while (!finishes_.empty()) {
    const Request& r = reqs_[finishes_.front().second];
    if (r.cls != DecodeClass::kNone && r.gen_base + r.output == finishes_.front().first) {
      return;
    }
    std::pop_heap(finishes_.begin(), finishes_.end(), kLater);
    finishes_.pop_back();
  }
}

void Engine::finish(std::size_t id) {
  mark_done(id);
  release(reqs_[id]);
  dead_ += 1;
}

void Engine::join(std::size_t id) {
  Request& r = reqs_[id];
  r.gen_base = clock_ - r.generated;
  decoders_ += 1;
  context0_ += r.computed - r.gen_base;
  finishes_.emplace_back(r.gen_base + r.output, id);
  std::push_heap(finishes_.begin(), finishes_.end(), kLater);
  if (place(r) == DecodeClass::kEager) {
    eager_.push_back(id);
  }
}

DecodeClass Engine::place(Request& r) {
  const std::int64_t tokens = r.computed + (clock_ - r.gen_base);
  if (r.blocks * s_.kv_block >= r.computed + r.output) {
    r.cls = DecodeClass::kCovered;  // its last decode needs computed + output slots
  } else if (r.blocks == blocks_for(tokens)) {
    r.cls = DecodeClass::kTight;
    r.phase = ((r.gen_base - r.computed) % s_.kv_block + s_.kv_block) % s_.kv_block;
    phase_count_[static_cast<std::size_t>(r.phase)] += 1;
    tight_ += 1;
  } else {
    r.cls = DecodeClass::kEager;
  }
  return r.cls;
}

void Engine::leave(std::size_t id) {
  Request& r = reqs_[id];
  decoders_ -= 1;
  context0_ -= r.computed - r.gen_base;
  if (r.cls == DecodeClass::kTight) {
    phase_count_[static_cast<std::size_t>(r.phase)] -= 1;
    tight_ -= 1;
  } else if (r.cls == DecodeClass::kEager) {
    eager_.erase(std::find(eager_.begin(), eager_.end(), id));
  }
  r.cls = DecodeClass::kNone;
}

void Engine::materialize() {
  running_.erase(std::remove_if(running_.begin(), running_.end(), [&](std::size_t id) { return reqs_[id].done >= 0; }),
                 running_.end());
  dead_ = 0;
  for (const std::size_t id : running_) {
    Request& r = reqs_[id];
    if (r.cls == DecodeClass::kNone) {
      continue;
    }
    r.generated = clock_ - r.gen_base;
    if (r.cls == DecodeClass::kTight) {
      r.blocks = blocks_for(r.computed + r.generated);
      phase_count_[static_cast<std::size_t>(r.phase)] -= 1;
    }
    r.cls = DecodeClass::kNone;
  }
  decoders_ = 0;
  context0_ = 0;
  tight_ = 0;
  eager_.clear();
  prefilling_.clear();
  finishes_.clear();
}

void Engine::rebuild() {
  for (const std::size_t id : running_) {
    Request& r = reqs_[id];
    if (r.computed < r.prompt) {
      prefilling_.push_back(id);
    } else {
      join(id);
    }
  }
}

}  // namespace gpusim::step::serving_engine
