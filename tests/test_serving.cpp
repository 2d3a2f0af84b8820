// Parallel inference and the serving engines (physics/memory.cpp, physics/collectives.cpp,
// step/inference.cpp, step/serving.cpp, scenario/serving.cpp).
#include "helpers.hpp"

using namespace gpusim;

namespace {

// Llama-3-70B in fp8 on one H100 node; the runtime and layout vary per test.
std::string seventy_b(const std::string& runtime, const std::string& layout, const std::string& serving = "") {
  return R"(name = "70b"
[system]
gpu = "h100-sxm5-80gb"
gpus = 4
[model]
preset = "llama3-70b"
[parallelism]
)" + layout +
         R"(
[inference]
batch = 8
prompt_tokens = 1024
output_tokens = 256
weight_precision = "fp8"
kv_precision = "fp8"
)" + serving +
         R"(
[runtime]
name = ")" +
         runtime + "\"\n";
}

// Llama-3-8B in bf16 on H100s with vLLM under a given [serving] table.
std::string eight_b_vllm(int gpus, const std::string& layout, const std::string& serving) {
  return R"(name = "8b"
[system]
gpu = "h100-sxm5-80gb"
gpus = )" +
         std::to_string(gpus) +
         R"(
[model]
preset = "llama3-8b"
[parallelism]
)" + layout +
         R"(
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

std::vector<Diagnostic> errors_of(const std::string& toml) {
  return test::diagnostics_of([&] { (void)test::scenario(toml); });
}

}  // namespace

TEST_CASE("tensor parallelism splits weights and KV heads, 70B fp8 fits on 4 H100s with tensor = 4",
          "[serving][memory]") {
  const Scenario sc = test::scenario(seventy_b("hf-transformers", "tensor = 4"));
  const step::Evaluation e = step::evaluate(sc);
  const workload::ModelShape& m = sc.job.model;
  REQUIRE(e.memory.fits());
  // weights / t, at one byte per fp8 weight
  const double weights = workload::total_params(m) * 1.0 / 4;
  CHECK(e.memory.weights.value() == Approx(weights));
  // K and V of every layer for the rank's kv_heads / t heads: 2 · L · (kv_dim / t) · 1 byte, for
  // batch × (prompt + output) tokens
  const double kv =
      2.0 * static_cast<double>(m.layers) * (static_cast<double>(m.kv_dim()) / 4) * 1.0 * 8 * (1024 + 256);
  CHECK(e.memory.kv_cache.value() == Approx(kv));
  // The serving memory target: memory per GPU within 5 % of weights/4 + KV + workspace
  const double workspace = e.memory.activations.value() + e.memory.other.value();
  CHECK(e.memory.total().value() == Approx(weights + kv + workspace).epsilon(0.05));
  CHECK(e.inference->replicas == 1);
}

TEST_CASE("a continuous engine's KV pool is its memory fraction less weights and workspace", "[serving][memory]") {
  const Scenario sc = test::scenario(seventy_b("vllm", "tensor = 4"));
  const step::Evaluation e = step::evaluate(sc);
  const physics::MemoryBreakdown& mb = e.memory;
  REQUIRE(mb.fits());
  const workload::ServingEngine& engine = sc.runtime.serving;
  REQUIRE(engine.memory_basis == workload::MemoryBasis::kTotal);  // vLLM's gpu_memory_utilization
  const double fixed = (mb.weights + mb.activations + mb.other).value();
  CHECK(mb.kv_cache.value() == Approx(engine.memory_fraction * mb.capacity.value() - fixed));
  CHECK(mb.total().value() == Approx(engine.memory_fraction * mb.capacity.value()));
  const double per_token =
      2.0 * static_cast<double>(sc.job.model.layers) * (static_cast<double>(sc.job.model.kv_dim()) / 4) * 1.0;
  CHECK(e.inference->kv_capacity_tokens == Approx(mb.kv_cache.value() / per_token));
}

TEST_CASE("a KV pool short of one request is reported as what fits, and the report says the engine cannot start",
          "[serving][memory]") {
  // Answers of 1.5 M tokens need 57 GiB of fp8 KV per GPU on 4 H100s; the 0.9 share leaves 54 GiB.
  const std::string base = seventy_b("vllm", "tensor = 4", "[serving]\nrequests = 4\n");
  const std::vector<Override> longer = {{"model.max_seq", "2000000"}, {"inference.output_tokens", "1500000"}};
  const Scenario sc = test::scenario(base, longer);
  const step::Evaluation e = step::evaluate(sc);
  const physics::MemoryBreakdown& mb = e.memory;
  REQUIRE_FALSE(mb.fits());
  const double per_token =
      2.0 * static_cast<double>(sc.job.model.layers) * (static_cast<double>(sc.job.model.kv_dim()) / 4) * 1.0;
  // What fits within the share: the widened pool less what the total exceeds the share by.
  const double room = mb.kv_cache.value() - (mb.total() - mb.budget).value();
  REQUIRE(room > 0);
  CHECK(e.inference->kv_capacity_tokens == Approx(room / per_token));
  CHECK(e.inference->kv_request_tokens == Approx(1024.0 + 1500000.0));
  CHECK(e.inference->kv_capacity_tokens < e.inference->kv_request_tokens);
  const std::string text = report::estimate_text(answer::estimate(sc, answer::Options{false}));
  CHECK_THAT(text, Catch::Contains("DOES NOT FIT"));
  CHECK_THAT(text, Catch::Contains("the engine would refuse to start"));
  CHECK_THAT(text, !Catch::Contains("% in use on average"));
}

TEST_CASE("KV heads are replicated when tensor exceeds them", "[serving][memory]") {
  // llama3-8b has 8 KV heads; at tensor = 16 every rank still holds one whole head
  const Scenario sc = test::scenario(R"(name = "wide"
[system]
gpu = "h100-sxm5-80gb"
gpus = 16
[model]
preset = "llama3-8b"
[parallelism]
tensor = 16
[inference]
)");
  const workload::ModelShape& m = sc.job.model;
  const workload::Inference& inf = *sc.job.inference;
  CHECK(physics::kv_bytes_per_token(m, inf, sc.layout).value() ==
        Approx(2.0 * static_cast<double>(m.layers) * static_cast<double>(m.head_dim()) * inf.kv_bytes));
}

TEST_CASE("data parallelism serves independent replicas: throughput scales with them", "[serving]") {
  const step::Evaluation one = step::evaluate(test::scenario(seventy_b("hf-transformers", "tensor = 4")));
  const Scenario sc8 = test::scenario(R"(name = "8b"
[system]
gpu = "h100-sxm5-80gb"
gpus = 4
[model]
preset = "llama3-8b"
[parallelism]
tensor = 1
data = 4
[inference]
batch = 8
)");
  const step::Evaluation four = step::evaluate(sc8);
  Scenario single = sc8;
  single.system.gpus = 1;
  single.layout.data = 1;
  const step::Evaluation alone = step::evaluate(single);
  CHECK(four.inference->replicas == 4);
  CHECK(four.inference->output_tokens_per_s == Approx(4 * alone.inference->output_tokens_per_s));
  CHECK(four.memory.total().value() == Approx(alone.memory.total().value()));
  CHECK(four.inference->time_per_output_token.value() == Approx(alone.inference->time_per_output_token.value()));
  CHECK(one.inference->replicas == 1);
}

TEST_CASE("the custom all-reduce is one-shot below its threshold and two-shot above", "[serving][comm]") {
  const hardware::System sys = scenario::make_system(test::catalog(), "h100-sxm5-80gb", 8);
  const physics::Fabric f = physics::make_fabric(sys);
  const workload::ServingEngine engine = test::catalog().runtime("vllm").serving;
  const double bw = f.intra_p2p.value();
  const double alpha = engine.allreduce_latency.value();
  const double one_shot_max_at_4 = engine.allreduce_one_shot_max.value() * 8.0 / 4;  // scales with 8 / n
  // one-shot: every rank reads its n - 1 peers' buffers: alpha + (n - 1) S / B
  const Bytes small(one_shot_max_at_4 / 2);
  CHECK(physics::serving_allreduce_time(f, engine, small, 4).value() == Approx(alpha + 3 * small.value() / bw));
  // two-shot: reduce-scatter then all-gather: 2 alpha + 2 (n - 1) / n S / B
  const Bytes mid(one_shot_max_at_4 * 2);
  CHECK(physics::serving_allreduce_time(f, engine, mid, 4).value() ==
        Approx(2 * alpha + 2.0 * 3 / 4 * mid.value() / bw));
  // above the custom kernel's buffer, NCCL's ring/tree model
  const Bytes large(engine.allreduce_max.value() * 2);
  CHECK(physics::serving_allreduce_time(f, engine, large, 4).value() ==
        Approx(physics::collective_time(f, physics::Collective::kAllReduce, large, 4).value()));
  CHECK(physics::serving_allreduce_time(f, engine, small, 1).value() == 0);
}

TEST_CASE("a static batch prefills once and decodes together: every request has the same latencies", "[serving]") {
  const Scenario sc = test::scenario(seventy_b("hf-transformers", "tensor = 4"));
  const step::InferenceResult r = *step::evaluate(sc).inference;
  CHECK(r.requests == 8);
  CHECK(r.batch == 8);
  CHECK(r.ttft.p50.value() == Approx(r.ttft.p99.value()));
  CHECK(r.tpot.p50.value() == Approx(r.tpot.p99.value()));
  // e2e = first token + (output − 1) decode steps; throughput = batch × output / e2e
  CHECK(r.e2e.p50.value() == Approx(r.ttft.p50.value() + 255 * r.tpot.p50.value()));
  CHECK(r.output_tokens_per_s == Approx(8.0 * 256 / r.e2e.p50.value()));
  CHECK(r.decode_tokens_per_s == Approx(8.0 / r.tpot.p50.value()));
  CHECK(r.output_tokens_per_s < r.decode_tokens_per_s);
}

TEST_CASE("below saturation a Poisson load is served at its rate, above it the report says it saturates", "[serving]") {
  const step::InferenceResult light =
      *step::evaluate(test::scenario(eight_b_vllm(1, "tensor = 1",
                                                  "arrival = \"poisson\"\nrate = \"4 req/s\"\n"
                                                  "requests = 2000\n")))
           .inference;
  CHECK_FALSE(light.saturated);
  CHECK(light.saturation_requests_per_s > 4);
  CHECK(light.requests_per_s == Approx(4).epsilon(0.05));  // 2000 Poisson arrivals: ±2.2 % at 1 sigma
  CHECK(light.queue.p50.value() < light.ttft.p50.value());
  const std::string heavy_toml = eight_b_vllm(1, "tensor = 1", "arrival = \"poisson\"\nrate = \"500 req/s\"\n");
  const answer::Estimate heavy = answer::estimate(test::scenario(heavy_toml));
  const step::InferenceResult& h = *heavy.eval.inference;
  CHECK(h.saturated);
  CHECK(h.saturation_requests_per_s < 500);
  CHECK(h.requests_per_s == Approx(h.saturation_requests_per_s).epsilon(0.05));
  CHECK(h.queue.p99 > light.queue.p99);
  const std::string text = report::estimate_text(heavy);
  CHECK_THAT(text, Catch::Contains("saturates at") && Catch::Contains("the queue grows without bound"));
}

TEST_CASE("the same seed gives the same run, another seed other arrivals", "[serving]") {
  const std::string a = eight_b_vllm(
      1, "tensor = 1", "arrival = \"poisson\"\nrate = \"10 req/s\"\nrequests = 300\nlength_spread = 0.5\n");
  const step::InferenceResult r1 = *step::evaluate(test::scenario(a)).inference;
  const step::InferenceResult r2 = *step::evaluate(test::scenario(a)).inference;
  const step::InferenceResult r3 = *step::evaluate(test::scenario(a + "", {{"serving.seed", "11"}})).inference;
  CHECK(r1.ttft.p99.value() == r2.ttft.p99.value());
  CHECK(r1.makespan.value() == r2.makespan.value());
  CHECK(r1.makespan.value() != r3.makespan.value());
}

TEST_CASE("output lengths spread alone when output_spread is set, with length_spread otherwise", "[serving]") {
  const std::string base = "arrival = \"concurrency\"\nconcurrency = 8\nrequests = 400\n";
  const Scenario both = test::scenario(eight_b_vllm(1, "tensor = 1", base + "length_spread = 0.25\n"));
  CHECK(both.job.inference->load.output_spread == Approx(0.25));
  const Scenario alone = test::scenario(eight_b_vllm(1, "tensor = 1", base + "output_spread = 0.25\n"));
  CHECK(alone.job.inference->load.length_spread == 0);
  CHECK(alone.job.inference->load.output_spread == Approx(0.25));
  // Output tokens over requests is the mean output length: the uniform draw over mean x [0.75, 1.25]
  // has a standard deviation of mean x 0.25 / sqrt(3), so 400 requests hold its mean within
  // 0.25 / sqrt(3 x 400) = 0.7 % at one sigma.
  const step::InferenceResult r = *step::evaluate(alone).inference;
  const double mean_output = 128;
  CHECK(r.output_tokens_per_s / r.requests_per_s == Approx(mean_output).epsilon(0.03));
}

TEST_CASE("a closed loop of identical requests moves in step, output lengths that differ break the step", "[serving]") {
  // Eight requests of 512 prompt tokens all fit one 8192-token iteration: a closed loop of identical
  // requests admits them together, they finish together, and their replacements arrive together, so
  // every request's first token waits for all eight prompts (p50 = p99). Outputs of differing lengths
  // end, and are replaced, one at a time: a prompt then shares its iteration with decodes only.
  const std::string loop = "arrival = \"concurrency\"\nconcurrency = 8\nrequests = 400\n";
  const step::InferenceResult in_step = *step::evaluate(test::scenario(eight_b_vllm(1, "tensor = 1", loop))).inference;
  CHECK(in_step.ttft.p50.value() == Approx(in_step.ttft.p99.value()));
  const step::InferenceResult spread =
      *step::evaluate(test::scenario(eight_b_vllm(1, "tensor = 1", loop + "output_spread = 0.25\n"))).inference;
  const step::InferenceResult alone =
      *step::evaluate(
           test::scenario(eight_b_vllm(1, "tensor = 1", "arrival = \"concurrency\"\nconcurrency = 1\nrequests = 20\n")))
           .inference;
  CHECK(spread.ttft.p50.value() < in_step.ttft.p50.value());
  // One prompt's iteration beside seven decodes costs little more than the prompt alone.
  CHECK(spread.ttft.p50.value() == Approx(alone.ttft.p50.value()).epsilon(0.25));
}

TEST_CASE("a short KV pool preempts, reserving the whole output never does", "[serving]") {
  // 0.25 of 80 GiB less 15 GiB of weights leaves about 4 GiB: some hundred requests' worth of KV,
  // while the engine admits up to 1024 sequences whose KV grows as they decode
  const std::string base = eight_b_vllm(1, "tensor = 1", "requests = 600\nmemory_fraction = 0.25\n");
  const step::Evaluation vllm = step::evaluate(test::scenario(base));
  REQUIRE(vllm.memory.fits());
  CHECK(vllm.inference->preemptions > 0);
  CHECK(vllm.inference->requests == 600);
  const step::Evaluation reserved = step::evaluate(test::scenario(base, {{"serving.reserve_output", "true"}}));
  CHECK(reserved.inference->preemptions == 0);
  CHECK(reserved.inference->requests == 600);
  CHECK(reserved.inference->kv_utilization <= 1.0);
}

TEST_CASE("the KV pool's utilization is the time average of the blocks held, growing through a decode", "[serving]") {
  // One request alone: a prompt of P tokens, then O − 1 decode iterations, the i-th holding the
  // blocks of P + i + 1 tokens (a block of B is taken when its first slot is). Held tokens average
  // P + O/2 + B/2 over the run (the decodes' iterations nearly equal: 8B's weights dwarf 2k tokens
  // of KV), whatever the stretches the engine sums the iterations in.
  constexpr double kPrompt = 16;
  constexpr double kOutput = 2048;
  const Scenario sc = test::scenario(eight_b_vllm(1, "tensor = 1", "requests = 1\nlength_spread = 0\n"),
                                     {{"inference.prompt_tokens", "16"}, {"inference.output_tokens", "2048"}});
  const auto block = static_cast<double>(sc.runtime.serving.kv_block);
  const step::InferenceResult r = *step::evaluate(sc).inference;
  REQUIRE(r.requests == 1);
  const double pool_tokens = std::floor(r.kv_capacity_tokens / block) * block;
  const double held_tokens = r.kv_utilization * pool_tokens;
  CHECK(held_tokens == Approx(kPrompt + kOutput / 2 + block / 2).epsilon(0.03));
}

TEST_CASE("a preempted request keeps the tokens it had streamed", "[serving]") {
  // An evicted request is recomputed with what it had generated [kwon-2023]; its user already holds
  // those tokens, so the run's output is every request's whole output (600 x 128 tokens), and a
  // request's time per output token spreads its first-to-last span over its 127 later tokens,
  // which no request's span (at most the run's) can push past makespan / 127
  const std::string base = eight_b_vllm(1, "tensor = 1", "requests = 600\nmemory_fraction = 0.25\noutput_spread = 0\n");
  const step::InferenceResult r = *step::evaluate(test::scenario(base)).inference;
  REQUIRE(r.preemptions > 0);
  constexpr double kRequests = 600;
  constexpr double kOutput = 128;
  CHECK(r.output_tokens_per_s * r.makespan.value() == Approx(kRequests * kOutput).epsilon(1e-12));
  CHECK(r.tpot.p99.value() <= r.makespan.value() / (kOutput - 1.0));
}

TEST_CASE("a KV pool that holds not one request is reported, with the numbers", "[serving][errors]") {
  const answer::Estimate e =
      answer::estimate(test::scenario(seventy_b("vllm", "tensor = 4", "[serving]\nmemory_fraction = 0.2\n")));
  CHECK_FALSE(e.eval.memory.fits());
  CHECK(e.diagnosis.bottleneck == explain::Bottleneck::kCapacity);
  CHECK_THAT(report::bottleneck_reason(e), Catch::Contains("less than the") && Catch::Contains("one request needs"));
}

TEST_CASE("a pool short of one request serves one request at a time, never evicting", "[serving][bounds]") {
  // Answers of 1.5 M tokens need 57 GiB of fp8 KV per GPU on 4 H100s; the 0.9 share leaves 54 GiB
  const std::string base = seventy_b("vllm", "tensor = 4", "[serving]\nrequests = 20\n");
  const std::vector<Override> longer = {{"model.max_seq", "2000000"}, {"inference.output_tokens", "1500000"}};
  const step::Evaluation e = step::evaluate(test::scenario(base, longer));
  REQUIRE_FALSE(e.memory.fits());
  CHECK(e.inference->batch <= 1.0);
  CHECK(e.inference->preemptions == 0);
  CHECK(e.inference->requests == 20);
  CHECK_FALSE(e.inference->truncated);
}

TEST_CASE("a KV pool that thrashes stops the simulation at its iteration limit and says so", "[serving][bounds]") {
  // In int4 the pool holds a little more than one request at its longest context: requests admitted
  // short evict each other as they grow, and each recomputes up to 1.5 M tokens in 8k chunks
  std::vector<Override> thrash = {
      {"model.max_seq", "2000000"}, {"inference.output_tokens", "1500000"}, {"inference.weight_precision", "\"int4\""}};
  const std::string base = seventy_b("vllm", "tensor = 4", "[serving]\nrequests = 20\n");
  const step::Evaluation e = step::evaluate(test::scenario(base, thrash));
  REQUIRE(e.memory.fits());
  CHECK(e.inference->truncated);
  CHECK(e.inference->preemptions > 0);
  CHECK(e.inference->requests < 20);
  CHECK(std::isfinite(e.inference->output_tokens_per_s));
  // Its latencies are of the requests it served: no SLO, however loose, is met by such a run.
  scenario::Slo loose;
  loose.ttft = Seconds(1e9);
  loose.tpot = Seconds(1e9);
  const answer::SloCheck check = answer::check_slo(loose, *e.inference);
  CHECK(check.worst <= 1.0);
  CHECK(check.incomplete);
  CHECK_FALSE(check.met());
  const step::Evaluation whole = step::evaluate(test::scenario(base));
  CHECK_FALSE(whole.inference->truncated);
}

TEST_CASE("a tensor degree must divide the KV heads or be a multiple of them", "[serving][errors]") {
  // llama3-8b: 32 heads, 8 KV heads; tensor 32 divides the heads and is a multiple of 8: accepted
  (void)test::scenario(eight_b_vllm(32, "tensor = 32", ""));
  // llama2-13b-like shape: 40 heads, 8 KV heads, ffn 13824 (divisible by 20): tensor 20 is neither
  const auto ds = errors_of(R"(name = "odd"
[system]
gpu = "h100-sxm5-80gb"
gpus = 40
[model]
layers = 40
hidden = 5120
heads = 40
kv_heads = 8
ffn_hidden = 13840
ffn = "swiglu"
vocab = 32000
[parallelism]
tensor = 20
[inference]
)");
  for (const auto& d : ds) {
    UNSCOPED_INFO(d.format());
  }
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].key == "parallelism.tensor");
  CHECK(ds[0].message ==
        "tensor (20) must divide the KV heads (8) or be a multiple of them (KV heads are then replicated)");
}

TEST_CASE("serving load errors name the key and the fix", "[serving][errors]") {
  auto one = [](const std::string& serving) {
    const auto ds = errors_of(eight_b_vllm(1, "tensor = 1", serving));
    for (const auto& d : ds) {
      UNSCOPED_INFO(d.format());
    }
    REQUIRE(ds.size() == 1);
    return ds[0];
  };
  const Diagnostic no_rate = one("arrival = \"poisson\"\n");
  CHECK(no_rate.key == "serving.rate");
  CHECK(no_rate.message == "arrival = \"poisson\" needs a request rate, e.g. rate = \"10 req/s\"");
  const Diagnostic stray = one("rate = \"3 req/s\"\n");
  CHECK(stray.key == "serving.rate");
  CHECK(stray.pos.line == 14);
  CHECK(stray.message == "a rate applies to arrival = \"poisson\" only");
  const Diagnostic unit = one("arrival = \"poisson\"\nrate = \"3 req\"\n");
  CHECK(unit.key == "serving.rate");
  const Diagnostic budget = one("chunked_prefill = false\nmax_batched_tokens = 256\n");
  CHECK(budget.key == "serving.max_batched_tokens");
  CHECK(budget.message ==
        "a prompt of up to 512 tokens never fits a budget of 256 tokens per iteration without chunked prefill: raise "
        "max_batched_tokens or set chunked_prefill = true");
  const Diagnostic spread = one("length_spread = 1.5\n");
  CHECK(spread.key == "serving.length_spread");
  const Diagnostic output_spread = one("output_spread = 1\n");
  CHECK(output_spread.key == "serving.output_spread");
  CHECK(output_spread.message == "output lengths are drawn from mean x [1 - s, 1 + s]: s must be below 1, got 1");
  const Diagnostic typo = one("arival = \"poisson\"\n");
  CHECK(typo.key == "serving.arival");
}

TEST_CASE("an overlap scheduler hands each token out one iteration later, the last when the engine idles",
          "[serving]") {
  // One request alone: its first token waits for the first decode iteration; its last token has no
  // next iteration to wait for, so the request ends when it would without the overlap.
  const std::string one = "arrival = \"offline\"\nrequests = 1\n";
  auto run = [&](bool overlap) {
    return *step::evaluate(test::scenario(eight_b_vllm(1, "tensor = 1", one),
                                          {{"serving.overlap_scheduler", overlap ? "true" : "false"}}))
                .inference;
  };
  const step::InferenceResult plain = run(false);
  const step::InferenceResult overlapped = run(true);
  CHECK(overlapped.e2e.p50.value() == Approx(plain.e2e.p50.value()));
  // The delay is one decode iteration: the plain run's mean time per output token, give or take the
  // growth of the context over the request (128 tokens on 512).
  const double decode_iteration = plain.tpot.p50.value();
  CHECK(overlapped.ttft.p50.value() - plain.ttft.p50.value() == Approx(decode_iteration).epsilon(0.05));
}

TEST_CASE("the runtime's exposed host time is paid once per iteration", "[serving]") {
  // One request: one prefill iteration and output_tokens - 1 decode iterations, 128 in all.
  const std::string one = "arrival = \"offline\"\nrequests = 1\n";
  auto e2e = [&](const std::string& overhead) {
    return step::evaluate(test::scenario(eight_b_vllm(1, "tensor = 1", one), {{"serving.step_overhead", overhead}}))
        .inference->e2e.p50.value();
  };
  const double overhead = 0.5e-3;
  CHECK(e2e("\"0.5 ms\"") - e2e("\"0 ms\"") == Approx(128 * overhead));
}
