// The request path of a serving engine (`api_latency` and `tokenize_per_token`, step/serving.cpp
// summarize): a fixed part per request and the tokenizer's time per prompt token, which delay every
// token a client of a networked load sees.
#include "helpers.hpp"

using namespace gpusim;
using catalog::SpecFile;
using test::diagnostics_of;

TEST_CASE("the request path adds its fixed part and the prompt's tokenization to the first token and the request",
          "[serving][request-path]") {
  // Poisson arrivals, fixed lengths: every request's path is api + P x t with P = 256 prompt tokens.
  const std::string base = test::serving_scenario("vllm");
  const auto run_with = [&](const std::string& api, const std::string& per_token) {
    return *step::evaluate(
                test::scenario(base, {{"serving.api_latency", api}, {"serving.tokenize_per_token", per_token}}))
                .inference;
  };
  const step::InferenceResult none = run_with("\"0 ms\"", "\"0 us\"");
  const step::InferenceResult path = run_with("\"8 ms\"", "\"10 us\"");
  const double expected = 8e-3 + 256 * 10e-6;  // 10.56 ms
  CHECK(path.ttft.p50.value() - none.ttft.p50.value() == Approx(expected));
  CHECK(path.ttft.mean.value() - none.ttft.mean.value() == Approx(expected));
  CHECK(path.e2e.p50.value() - none.e2e.p50.value() == Approx(expected));
  CHECK(path.tpot.p50.value() == Approx(none.tpot.p50.value()));
  CHECK(path.output_tokens_per_s == Approx(none.output_tokens_per_s));
  // A queue filled at once is the offline API: no server, no tokenizer on the path.
  auto offline_ttft = [&](const std::string& per_token) {
    const std::vector<scenario::Override> o = {
        {"serving.rate", "", true}, {"serving.arrival", "\"offline\""}, {"serving.tokenize_per_token", per_token}};
    return step::evaluate(test::scenario(base, o)).inference->ttft.p50.value();
  };
  CHECK(offline_ttft("\"100 us\"") == Approx(offline_ttft("\"0 us\"")));
}

TEST_CASE("an evicted request's tokenization is of the prompt its user sent, not of what it recomputes",
          "[serving][request-path]") {
  // A KV pool of a few requests under a load that outgrows it: requests are preempted and their
  // generated tokens recomputed as prompt, but the tokenizer saw each prompt once, as sent.
  const std::string base = test::serving_scenario("vllm");
  const std::vector<scenario::Override> tight{{"serving.rate", "\"40 req/s\""},
                                              {"serving.requests", "200"},
                                              {"inference.output_tokens", "512"},
                                              {"serving.memory_fraction", "0.23"}};
  auto with = [&](const std::string& per_token) {
    std::vector<scenario::Override> o = tight;
    o.push_back({"serving.api_latency", "\"0 ms\""});
    o.push_back({"serving.tokenize_per_token", per_token});
    return *step::evaluate(test::scenario(base, o)).inference;
  };
  const step::InferenceResult none = with("\"0 us\"");
  REQUIRE(none.preemptions > 0);
  const step::InferenceResult path = with("\"10 us\"");
  CHECK(path.ttft.mean.value() - none.ttft.mean.value() == Approx(256 * 10e-6));
  CHECK(path.e2e.mean.value() - none.e2e.mean.value() == Approx(256 * 10e-6));
}

TEST_CASE("a runtime file's request-path time per token outside its declared range is refused",
          "[serving][request-path][spec][errors]") {
  Catalog c = test::catalog();
  c.add_file(SpecKind::kRuntime, "slow",
             SpecFile{"slow.toml", "base = \"vllm\"\n[serving]\ntokenize_per_token = \"5 ms\"\n"});
  const auto ds = diagnostics_of([&] { (void)c.runtime("slow"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].format() ==
        "slow.toml:3:22: serving.tokenize_per_token: must be between 1 ns and 1 ms (tokenizers take 0.1 to 20 us per "
        "token of one CPU thread), got \"5 ms\"");
}
