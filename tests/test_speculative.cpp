// Speculative decoding and prefix caching in the serving model (docs/scenarios.md, [serving.speculative]
// and [serving] prefix_tokens): the expected yield per step, what a step costs, the refusals.
#include <catch2/catch.hpp>
#include <cmath>

#include "helpers.hpp"

using namespace gpusim;

namespace {

const char* kServe = R"(name = "spec"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
preset = "llama3-8b"
[inference]
prompt_tokens = 1024
output_tokens = 256
weight_precision = "bf16"
[serving]
arrival = "concurrency"
concurrency = 1
requests = 40
[runtime]
name = "vllm"
)";

step::Evaluation served(const std::vector<scenario::Override>& o) { return step::evaluate(test::scenario(kServe, o)); }

}  // namespace

TEST_CASE("a speculative step yields the truncated geometric sum of its acceptances", "[speculative]") {
  workload::Speculative s;
  s.method = workload::SpecMethod::kEagle;
  s.tokens = 3;
  s.acceptance = 0.71;
  // 1 + α + α² + α³
  CHECK(workload::tokens_per_step(s) == Approx(1 + 0.71 + 0.71 * 0.71 + 0.71 * 0.71 * 0.71));
  s.acceptance = 1.0;
  CHECK(workload::tokens_per_step(s) == Approx(4.0));  // every proposal accepted: k + 1
  s.method = workload::SpecMethod::kNone;
  CHECK(workload::tokens_per_step(s) == 1.0);
}

TEST_CASE("at batch 1 speculation divides the time per output token by about its yield per step",
          "[speculative][serving]") {
  const step::Evaluation plain = served({});
  // n-grams cost no proposer: a step is the verify pass alone, about one decode at batch 1 (bound by
  // the weights), so TPOT falls by nearly τ.
  const step::Evaluation ngram = served({{"serving.speculative.method", "\"ngram\""}});
  const double tau = (1 - std::pow(0.39, 6)) / (1 - 0.39);
  const double ratio = plain.inference->tpot.p50.value() / ngram.inference->tpot.p50.value();
  CHECK(ratio > 0.85 * tau);
  CHECK(ratio <= tau * 1.02);
  // Output tokens are the user's: the same count with or without speculation.
  CHECK(ngram.tokens == Approx(plain.tokens));
}

TEST_CASE("speculation's speedup falls as the batch grows", "[speculative][serving]") {
  auto speedup = [](int concurrency) {
    const std::string c = std::to_string(concurrency);
    const step::Evaluation plain = served({{"serving.concurrency", c}, {"serving.requests", "200"}});
    const step::Evaluation eagle =
        served({{"serving.concurrency", c}, {"serving.requests", "200"}, {"serving.speculative.method", "\"eagle\""}});
    return eagle.inference->output_tokens_per_s / plain.inference->output_tokens_per_s;
  };
  const double one = speedup(1);
  const double many = speedup(128);
  CHECK(one > 1.5);
  CHECK(many < one);
}

TEST_CASE("a draft model's or EAGLE's weights and KV cache are held beside the target's", "[speculative][memory]") {
  const step::Evaluation plain = served({});
  const step::Evaluation draft =
      served({{"serving.speculative.method", "\"draft\""}, {"serving.speculative.draft_model", "\"llama3.2-1b\""}});
  // Llama 3.2 1B: 16 layers of 4h² (attention at 8 of 32 KV heads: 2h² + 2h²/4) + 3·h·8192, the
  // tied 128256 x 2048 embedding, in bf16.
  const double h = 2048;
  const double per_layer = (h * h * 2 + 2 * h * h / 4) + 3 * h * 8192 + 2 * h;  // + two RMSNorm weights
  const double params = 16 * per_layer + 128256 * h + h;
  CHECK((draft.memory.weights - plain.memory.weights).value() == Approx(params * 2).epsilon(0.01));
  // KV per token grows by the draft's 16 layers x 2 x 8 heads x 64 over the target's 32 x 2 x 8 x 128.
  const double ratio = draft.inference->kv_capacity_tokens / plain.inference->kv_capacity_tokens;
  CHECK(ratio < 1.0 / (1.0 + 16.0 * 64 / (32.0 * 128)) * 1.001);
}

TEST_CASE("a cached shared prefix cuts the time to the first token", "[prefix][serving]") {
  const step::Evaluation plain = served({});
  const step::Evaluation cached = served({{"serving.prefix_tokens", "896"}, {"serving.prefix_hit_rate", "1"}});
  // 128 of 1024 tokens left to prefill: the prompt's pass shrinks, the decode does not.
  CHECK(cached.inference->ttft.p50 < plain.inference->ttft.p50 * 0.6);
  CHECK(cached.inference->tpot.p50.value() == Approx(plain.inference->tpot.p50.value()).epsilon(0.02));
  const step::Evaluation none = served({{"serving.prefix_tokens", "896"}, {"serving.prefix_hit_rate", "0"}});
  CHECK(none.inference->ttft.p50.value() == Approx(plain.inference->ttft.p50.value()));
}

TEST_CASE("speculative and prefix-cache keys out of their range or method are refused with the key", "[speculative]") {
  auto refused = [](const std::vector<scenario::Override>& o, const std::string& words) {
    INFO(words);
    try {
      (void)test::scenario(kServe, o);
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Contains(words));
    }
  };
  refused({{"serving.speculative.method", "\"lookahead\""}}, "expected one of");
  refused({{"serving.speculative.method", "\"eagle\""}, {"serving.speculative.tokens", "0"}},
          "serving.speculative.tokens");
  refused({{"serving.speculative.method", "\"eagle\""}, {"serving.speculative.acceptance", "1.5"}},
          "serving.speculative.acceptance");
  refused({{"serving.speculative.method", "\"draft\""}}, "draft_model");
  refused({{"serving.speculative.method", "\"draft\""}, {"serving.speculative.draft_model", "\"llama2-7b\""}},
          "vocabulary");
  refused({{"serving.speculative.method", "\"draft\""}, {"serving.speculative.draft_model", "\"llama3-70b\""}},
          "no smaller");
  refused({{"serving.speculative.method", "\"eagle\""}, {"serving.speculative.draft_model", "\"llama3.2-1b\""}},
          "method = \"draft\" only");
  refused({{"serving.speculative.tokens", "3"}}, "serving.speculative.method");
  refused({{"serving.prefix_tokens", "1024"}, {"serving.prefix_hit_rate", "0.5"}}, "shorter than");
  refused({{"serving.prefix_tokens", "100"}}, "prefix_hit_rate");
  refused({{"serving.prefix_tokens", "100"}, {"serving.prefix_hit_rate", "2"}}, "0 to 1");
}
