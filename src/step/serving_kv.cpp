// The serving engine's KV block pool (the rules are stated in serving.cpp): a request's blocks grow
// with its tokens, go back to the pool when it ends, and a running request short of blocks evicts
// the latest admitted one, which returns to the queue's front and will prefill again [kwon-2023].

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
  free_blocks_ += r.blocks - r.shared;
  r.blocks = r.shared;
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
  v.computed = v.shared * s_.kv_block;  // the shared prefix stays cached
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

}  // namespace gpusim::step::serving_engine
