// The serving engine's host (CPU) work per iteration and the share of it the GPU waits for.
// An engine's loop schedules the next batch and builds its inputs, launches the forward pass, then
// processes the sampled tokens; in a synchronous loop the GPU idles through all of it
// [vllm-v060-perf, wuklab-scheduling-overhead]. The work grows with the sequences of the batch
// rather than its tokens [wuklab-scheduling-overhead]:
//   call    = step_overhead + schedule_per_sequence · rows        once per scheduler call
//   output  = output_per_sequence · rows                          every iteration
// A scheduler call covers `scheduler_steps` decode-only iterations (multi-step scheduling
// [vllm-multi-step-rfc]; SGLang's continued decode steps [sglang-v0.3-source]), so each pays 1/steps
// of it; an iteration with prompt tokens is scheduled alone. What the engine runs beside the GPU
// costs only what exceeds the iteration's GPU time:
//   synchronous            exposed = call + output
//   async output processor exposed = call + max(0, output − gpu)                [vllm-async-output]
//   overlap scheduler      exposed = step_overhead + max(0, rest − gpu)         [sglang-v0.4]
// (step_overhead stays exposed with an overlap scheduler: the host work its one-step lookahead
// leaves as GPU idle [trt-llm-issue-13957].)
// Inline: every iteration of a serving simulation asks it, several times in a decode stretch.
#pragma once

#include <algorithm>

#include "step/internal.hpp"

namespace gpusim::step {

// Host time a serving iteration of `gpu` GPU time adds: the engine's host work left exposed.
inline Seconds engine_host_time(const workload::ServingEngine& e, const IterationShape& s, Seconds gpu) {
  const bool decode_only = s.pairs <= 0;
  const double per_call = decode_only ? 1.0 / static_cast<double>(std::max<std::int64_t>(1, e.scheduler_steps)) : 1.0;
  const Seconds schedule = e.schedule_per_sequence * s.rows * per_call;
  const Seconds output = e.output_per_sequence * s.rows;
  const Seconds fixed = e.step_overhead * per_call;
  auto beyond = [&](Seconds beside) { return beside > gpu ? beside - gpu : Seconds(0); };
  if (e.overlap_scheduler) {
    return fixed + beyond(schedule + output);
  }
  if (e.async_output) {
    return fixed + schedule + beyond(output);
  }
  return fixed + schedule + output;
}

}  // namespace gpusim::step
