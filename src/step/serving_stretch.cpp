// Decode stretches of the serving engine (serving_engine.hpp): between events (an arrival, a
// completion, a KV pool running short) a continuous engine's iterations decode the same requests
// one token further each, so their sum has a closed form and is taken at once.
#include <algorithm>
#include <cmath>
#include <limits>

#include "step/serving_engine.hpp"

namespace gpusim::step::serving_engine {

// Decode iterations of the running requests up to the next event, in stretches summed in closed
// form (stretch). With nobody waiting and no request released by a completion (an open load), a
// stretch may end with the iteration in which requests finish: the iteration after it decodes the
// others, which is the next stretch's first.
void Engine::skip_decode(double arrival) {
  while (stretch(arrival)) {
  }
}

// k more decode iterations of the running requests, summed in closed form: each iteration's
// cost is linear in the total context, which grows by one token per request per iteration, so
// k iterations take k x the cost at their mean context (exact while one of the GPU or the host
// paces them throughout). Stops before an iteration would start at or after `arrival` (when >= 0),
// before the KV pool runs short, and before a request would finish unless `through` (then with
// its last iteration, and true when it did).
bool Engine::stretch(double arrival) {
  if (running_count() == 0 || finished_ >= s_.requests) {
    return false;
  }
  std::int64_t most = std::numeric_limits<std::int64_t>::max();
  double context = 0;
  // A completion changes nothing but the running set while nobody waits to be admitted and none
  // releases a request (an open load).
  const bool through = waiting_.empty() && s_.arrival != workload::Arrival::kConcurrency;
  const std::int64_t last = through ? 0 : 1;  // iterations kept short of the first finish
  if (lazy_) {                                // the decode set's totals (serving_decoders.cpp)
    if (!prefilling_.empty()) {
      return false;  // a prefill in flight
    }
    prune_finishes();
    most = finishes_.front().first - clock_ - last;
    context = static_cast<double>(context0_ + decoders_ * clock_);
  } else {
    for (const std::size_t id : running_) {
      const Request& r = reqs_[id];
      if (r.computed < r.prompt) {
        return false;  // a prefill in flight
      }
      most = std::min(most, r.output - r.generated - last);
      context += static_cast<double>(r.computed + r.generated);
    }
  }
  const std::int64_t steps = s_.scheduler_steps;
  if (!waiting_.empty() && steps > 1) {
    // Requests wait that the next scheduler call may admit: stop before it.
    const std::int64_t pos = decode_streak_ % steps;
    if (pos == 0) {
      return false;
    }
    most = std::min(most, steps - pos);
  }
  const auto rows = static_cast<double>(running_count());
  auto shape_at = [&](double done) {
    IterationShape sh;
    sh.tokens = sh.rows = sh.decode_rows = rows;
    sh.context = context + rows * done;
    return sh;
  };
  // An iteration's time is linear in the context: a for the next one, b more per iteration after
  // it, so k iterations take S(k) = k·a + b·k(k−1)/2 (the search's estimate; the accounting
  // below takes the model's cost at the mean context). With no arrival to stop before and no
  // token to hand out, neither is read.
  double a = 0;
  double b = 0;
  const IterationModel::Counts parts = decode_.counts(shape_at(0));  // every iteration's counts
  if (arrival >= 0 || !pending_first_.empty() || !pending_done_.empty()) {
    a = decode_.time(parts, shape_at(0)).value();
    b = std::max(0.0, decode_.time(parts, shape_at(1)).value() - a);
  }
  auto span = [&](std::int64_t k) {  // time of k iterations
    const auto kd = static_cast<double>(k);
    return k <= 0 ? 0.0 : kd * a + b * kd * (kd - 1.0) / 2.0;
  };
  auto blocks_needed = [&](std::int64_t k) {
    // Each request needs at most ceil(k / block) + 1 more blocks: when the pool has that for all,
    // no request can be short (the common case, spared the per-request sum).
    const std::int64_t bound = static_cast<std::int64_t>(running_count()) * ((k + s_.kv_block - 1) / s_.kv_block + 1);
    if (bound <= free_blocks_) {
      return std::int64_t{0};
    }
    if (lazy_) {
      return blocks_to_decode(k);
    }
    std::int64_t need = 0;
    for (const std::size_t id : running_) {
      const Request& r = reqs_[id];
      need += std::max<std::int64_t>(0, blocks_for(r.computed + r.generated + k) - r.blocks);
    }
    return need;
  };
  auto fits = [&](std::int64_t k) {
    return blocks_needed(k) <= free_blocks_ && (arrival < 0 || now_ + span(k - 1) < arrival);
  };
  if (most <= 0 || !fits(1)) {
    return false;
  }
  std::int64_t lo = 1;
  std::int64_t hi = most;
  if (arrival >= 0) {
    // The largest j with now + S(j) < arrival bounds k − 1 (then searched exactly below).
    const double room = arrival - now_;
    const double j = b > 0 ? (-(a - b / 2) + std::sqrt((a - b / 2) * (a - b / 2) + 2 * b * room)) / b : room / a;
    hi = std::min(hi, static_cast<std::int64_t>(std::ceil(j)) + 2);
    const std::int64_t below = std::min(hi, static_cast<std::int64_t>(std::floor(j)) - 1);
    if (below > lo && fits(below)) {
      lo = below;
    }
  }
  if (fits(hi)) {
    lo = hi;
  }
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  // Requests arriving inside a scheduler call of several decode iterations wait for its end: the
  // iterations up to the next call still run (as far as the pool and the requests allow).
  const std::int64_t into = (decode_streak_ + lo) % steps;
  if (arrival >= 0 && into != 0) {
    std::int64_t ext = std::min(most, lo + (steps - into));
    while (ext > lo && blocks_needed(ext) > free_blocks_) {
      --ext;
    }
    lo = ext;
  }
  const std::int64_t k = lo;
  decode_streak_ += k;
  const IterationCost mean = decode_.cost(parts, shape_at(static_cast<double>(k - 1) / 2));
  const double kd = static_cast<double>(k);
  IterationCost total;
  static_cast<PhaseCost&>(total) = mean.times(kd);
  const std::int64_t free_before = free_blocks_;
  if (lazy_) {
    free_blocks_ -= blocks_to_decode(k);
    for (const std::size_t id : eager_) {
      Request& r = reqs_[id];
      r.blocks = std::max(r.blocks, blocks_for(r.computed + (clock_ - r.gen_base) + k));
    }
    clock_ += k;
    std::size_t keep = 0;
    for (const std::size_t id : eager_) {
      if (place(reqs_[id]) == DecodeClass::kEager) {
        eager_[keep++] = id;
      }
    }
    eager_.resize(keep);
  } else {
    for (const std::size_t id : running_) {
      Request& r = reqs_[id];
      reserve(r, r.computed + r.generated + k);
      r.generated += k;
    }
  }
  flush(now_ + a);  // the first skipped iteration hands out the last one's tokens
  IterationShape sh = shape_at(0);
  sh.decode_rows *= kd;  // the iterations' decoded sequences, summed
  account(total, sh, true, kd);
  // account() counts the blocks held at the stretch's end through all of it. Those the stretch
  // took grow about evenly over it (a block per request every kv_block tokens): the i-th of its k
  // iterations holds about i/k of them, (k + 1)/2k of them on average.
  held_block_time_ -= static_cast<double>(free_before - free_blocks_) * (kd - 1.0) / (2.0 * kd) * total.time.value();
  now_ += total.time.value();
  if (!through) {
    return false;
  }
  // The stretch's last iteration may have sampled the last tokens of some.
  if (lazy_) {
    if (finishes_.front().first > clock_) {
      return false;
    }
    finish_due();
    sweep_dead();
    return true;
  }
  bool any = false;
  for (const std::size_t id : running_) {
    if (reqs_[id].generated >= reqs_[id].output) {
      mark_done(id);
      any = true;
    }
  }
  if (any) {
    sweep_finished();
  }
  return any;
}

}  // namespace gpusim::step::serving_engine
