// The serving engine's host work per iteration (step/engine_host.hpp), multi-step scheduling,
// prompt-only iterations, the API server's latency and the custom all-reduce on AMD GPUs
// (step/serving.cpp, physics/collectives.cpp).
#include "helpers.hpp"

using namespace gpusim;

namespace {

// Llama-3-8B in bf16 on one H100 under vLLM V1, whose runtime sets no host cost: each test adds
// the engine settings it varies in [serving].
std::string eight_b(const std::string& serving) {
  return R"(name = "8b"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
preset = "llama3-8b"
[inference]
prompt_tokens = 512
output_tokens = 128
weight_precision = "bf16"
[serving]
)" + serving +
         R"(
[runtime]
name = "vllm"
)";
}

// One request alone: one prefill iteration, then output_tokens - 1 = 127 decode iterations.
const std::string kOne = "arrival = \"offline\"\nrequests = 1\n";

step::InferenceResult run(const std::string& serving, const std::vector<scenario::Override>& overrides = {}) {
  return *step::evaluate(test::scenario(eight_b(serving), overrides)).inference;
}

std::vector<Diagnostic> errors_of(const std::string& serving) {
  return test::diagnostics_of([&] { (void)test::scenario(eight_b(serving)); });
}

}  // namespace

TEST_CASE("a synchronous engine's host time per sequence is paid by every iteration", "[serving][host]") {
  // One sequence per iteration: 128 iterations x (schedule + output) per sequence.
  const double base = run(kOne).e2e.p50.value();
  const double schedule = 100e-6;
  const double output = 50e-6;
  const double with =
      run(kOne, {{"serving.schedule_per_sequence", "\"100 us\""}, {"serving.output_per_sequence", "\"50 us\""}})
          .e2e.p50.value();
  CHECK(with - base == Approx(128 * (schedule + output)));
}

TEST_CASE("an asynchronous output processor hides the output work behind the GPU up to its time", "[serving][host]") {
  const std::string async = kOne + "async_output = true\n";
  const step::InferenceResult hidden_none = run(async);
  // 1 ms of output work per sequence is below an 8B decode iteration on an H100 (several ms): the
  // GPU's next iteration covers it.
  const double decode = hidden_none.tpot.p50.value();
  REQUIRE(decode > 1e-3);
  CHECK(run(async, {{"serving.output_per_sequence", "\"1 ms\""}}).e2e.p50.value() ==
        Approx(hidden_none.e2e.p50.value()));
  // Output work of 50 ms outlasts every iteration: each pays what exceeds its own GPU time, so the
  // request takes 128 x 50 ms (the GPU work all hides behind the host's), give or take the first
  // iteration's prefill, which is longer than a decode.
  const double slow = run(async, {{"serving.output_per_sequence", "\"50 ms\""}}).e2e.p50.value();
  CHECK(slow == Approx(128 * 50e-3).epsilon(0.01));
  // The schedule work stays on the critical path.
  CHECK(run(async, {{"serving.schedule_per_sequence", "\"1 ms\""}}).e2e.p50.value() - hidden_none.e2e.p50.value() ==
        Approx(128 * 1e-3));
}

TEST_CASE("an overlap scheduler keeps only the runtime's fixed host time exposed", "[serving][host]") {
  const std::string overlap = kOne + "overlap_scheduler = true\n";
  const double base = run(overlap).e2e.p50.value();
  // Per-sequence work below the GPU's iteration hides; step_overhead does not.
  CHECK(run(overlap, {{"serving.schedule_per_sequence", "\"1 ms\""}, {"serving.output_per_sequence", "\"1 ms\""}})
            .e2e.p50.value() == Approx(base));
  CHECK(run(overlap, {{"serving.step_overhead", "\"1 ms\""}}).e2e.p50.value() - base == Approx(128 * 1e-3));
}

TEST_CASE("multi-step scheduling pays a scheduler call's host time once per call", "[serving][host]") {
  // The prefill iteration is a call of its own; the 127 decode iterations share one call per
  // scheduler_steps iterations: 1 + 127 / 4 calls' worth of step_overhead.
  const std::string four = kOne + "scheduler_steps = 4\n";
  const double base = run(four).e2e.p50.value();
  const double with = run(four, {{"serving.step_overhead", "\"2 ms\""}}).e2e.p50.value();
  CHECK(with - base == Approx(2e-3 * (1.0 + 127.0 / 4.0)));
  // With one step per call every iteration pays it.
  CHECK(run(kOne, {{"serving.step_overhead", "\"2 ms\""}}).e2e.p50.value() - run(kOne).e2e.p50.value() ==
        Approx(2e-3 * 128));
}

TEST_CASE("requests arriving during a multi-step scheduler call wait for its end", "[serving][host]") {
  // At 10 req/s each 128-token request stays about a second: several run at any time, so the
  // engine is decoding when a request arrives. An arrival lands uniformly inside a call of 8
  // decode iterations and waits for its end: (8 - 1) / 2 = 3.5 iterations on average. The median
  // wait lies between 2 and 5 iterations of the one-step run.
  const std::string load = "arrival = \"poisson\"\nrate = \"10 req/s\"\nrequests = 400\n";
  const step::InferenceResult one = run(load);
  const step::InferenceResult eight = run(load + "scheduler_steps = 8\n");
  const double iteration = one.tpot.p50.value();
  const double wait = eight.ttft.p50.value() - one.ttft.p50.value();
  CHECK(wait > 2 * iteration);
  CHECK(wait < 5 * iteration);
  // A last request is admitted at once when nothing runs: one request alone is not delayed.
  CHECK(run(kOne + "scheduler_steps = 8\n").ttft.p50.value() == Approx(run(kOne).ttft.p50.value()));
}

TEST_CASE("an engine that does not mix runs an admitted prompt alone and decodes after it", "[serving][host]") {
  // Two requests queued at once, a budget of one prompt per iteration, no chunking: the first
  // prompt fills iteration 1. Without mixing, iteration 2 prefills the second prompt alone (the
  // first request's decode waits); with mixing the first request's decode token takes one token of
  // the budget, the second prompt no longer fits, and it waits until the first request ends.
  const std::string two = "arrival = \"offline\"\nrequests = 2\nmax_batched_tokens = 512\nchunked_prefill = false\n";
  const step::InferenceResult alone = run(two + "mixed_batches = false\n");
  CHECK(alone.ttft.p99.value() == Approx(2 * alone.ttft.p50.value()).epsilon(0.01));
  const step::InferenceResult mixed = run(two + "mixed_batches = true\n");
  CHECK(mixed.ttft.p99.value() > mixed.e2e.p50.value());
}

TEST_CASE("the API server's latency adds to the first token and the request, not to the tokens between",
          "[serving][host]") {
  const std::string load = "arrival = \"poisson\"\nrate = \"2 req/s\"\nrequests = 50\n";
  const step::InferenceResult base = run(load + "api_latency = \"0 ms\"\n");
  const step::InferenceResult api = run(load + "api_latency = \"25 ms\"\n");
  CHECK(api.ttft.p50.value() - base.ttft.p50.value() == Approx(25e-3));
  CHECK(api.e2e.p50.value() - base.e2e.p50.value() == Approx(25e-3));
  CHECK(api.tpot.p50.value() == Approx(base.tpot.p50.value()));
  // A queue filled at once is the offline API: no server on the path.
  CHECK(run(kOne + "api_latency = \"25 ms\"\n").ttft.p50.value() ==
        Approx(run(kOne + "api_latency = \"0 ms\"\n").ttft.p50.value()));
}

TEST_CASE("a runtime whose build has no custom all-reduce on AMD GPUs sends their all-reduces to RCCL",
          "[serving][comm][amd]") {
  using physics::Collective;
  const physics::Fabric mi300x = physics::make_fabric(scenario::make_system(test::catalog(), "mi300x", 8, 0));
  const physics::Fabric h100 = physics::make_fabric(scenario::make_system(test::catalog(), "h100-sxm5-80gb", 8, 0));
  workload::ServingEngine engine = test::catalog().runtime("vllm").serving;
  const Bytes small(32 * 1024.0);
  engine.allreduce_on_amd = false;
  CHECK(physics::serving_allreduce_time(mi300x, engine, small, 8).value() ==
        Approx(physics::collective_time(mi300x, Collective::kAllReduce, small, 8).value()));
  // NVIDIA GPUs keep the custom kernel: one-shot below 256 KiB at 8 GPUs, alpha + (n - 1) S / B.
  CHECK(physics::serving_allreduce_time(h100, engine, small, 8).value() ==
        Approx(engine.allreduce_latency.value() + small.value() * 7.0 / h100.peers_bandwidth(7).value()));
  engine.allreduce_on_amd = true;
  CHECK(physics::serving_allreduce_time(mi300x, engine, small, 8).value() ==
        Approx(engine.allreduce_latency.value() + small.value() * 7.0 / mi300x.peers_bandwidth(7).value()));
}

TEST_CASE("bad engine host settings are reported with their key", "[serving][host][errors]") {
  auto one = [&](const std::string& serving) {
    const std::vector<Diagnostic> d = errors_of(serving);
    REQUIRE(d.size() == 1);
    return d.front();
  };
  const Diagnostic zero = one("scheduler_steps = 0\n");
  CHECK(zero.key == "serving.scheduler_steps");
  CHECK(zero.message.find("must be between 1 and") != std::string::npos);
  CHECK(one("schedule_per_sequence = \"-1 us\"\n").key == "serving.schedule_per_sequence");
  CHECK(one("output_per_sequence = \"5 GB\"\n").key == "serving.output_per_sequence");
  CHECK(one("api_latency = \"-3 ms\"\n").key == "serving.api_latency");
  CHECK(one("mixed_batches = \"no\"\n").key == "serving.mixed_batches");
  CHECK(one("async_output = 1\n").key == "serving.async_output");
  CHECK(one("allreduce_on_amd = \"yes\"\n").key == "serving.allreduce_on_amd");
}
