// Disaggregated prefill and decode ([serving.disaggregated], src/step/disaggregated.cpp): the
// handoff's size and time from the KV rule and the link, the pools' effect on the latencies, the
// plan's split search, and the refusals.
#include <catch2/catch.hpp>

#include "helpers.hpp"

using namespace gpusim;

namespace {

const char* kPools = R"(name = "pools"
[system]
gpu = "h100-sxm5-80gb"
gpus = 8
[model]
preset = "llama3-70b"
[inference]
prompt_tokens = 2048
output_tokens = 256
weight_precision = "fp8"
[parallelism]
tensor = 4
[serving]
arrival = "poisson"
rate = "6 req/s"
requests = 300
[serving.disaggregated]
prefill_replicas = 1
decode_replicas = 1
[runtime]
name = "vllm"
)";

}  // namespace

TEST_CASE("a disaggregated request's KV handoff is its prompt's KV bytes over the shards' links",
          "[disaggregated][serving]") {
  const Scenario sc = test::scenario(kPools);
  const step::Evaluation e = step::evaluate(sc);
  REQUIRE(e.inference);
  // Llama-3-70B: 80 layers x 2 (K and V) x 8 KV heads x 128 x 2 bytes (fp16 cache) per token, for
  // 2048 prompt tokens.
  const double bytes = 80.0 * 2 * 8 * 128 * 2 * 2048;
  CHECK(e.inference->kv_transfer_bytes == Approx(bytes));
  // Both pools in one node: NVLink, 4 shards in parallel; at least the bytes over 4 links at the
  // fabric's copy bandwidth, plus its latency.
  const physics::Fabric fabric = physics::make_fabric(sc.system);
  const double expected = physics::p2p_time(Bytes(bytes / 4), fabric.intra_p2p, fabric.intra_alpha).value();
  CHECK(e.inference->kv_transfer.value() == Approx(expected));
}

TEST_CASE("separate pools take prompts out of the decoding iterations: a lower time per output token",
          "[disaggregated][serving]") {
  const step::Evaluation pooled = step::evaluate(test::scenario(kPools));
  const step::Evaluation aggregated = step::evaluate(test::scenario(kPools, {{"serving.disaggregated", "", true}}));
  CHECK(pooled.inference->tpot.p50 < aggregated.inference->tpot.p50);
  // The same requests, all of them served.
  CHECK(pooled.inference->requests == Approx(aggregated.inference->requests));
  CHECK(pooled.tokens == Approx(aggregated.tokens));
}

TEST_CASE("plan searches the prefill:decode splits beside the aggregated deployments", "[disaggregated][plan]") {
  const Scenario sc = test::scenario(kPools);
  search::PlanOptions o;
  o.formats = {"fp8"};
  const search::ServingPlanResult r = search::plan_serving(sc, o);
  CHECK(r.disaggregated);
  bool split = false;
  bool aggregated = false;
  for (const search::ServingPlanRow& row : r.frontier) {
    split = split || row.pools.on();
    aggregated = aggregated || !row.pools.on();
    if (row.pools.on()) {
      CHECK(row.pools.gpus() == row.gpus);  // the pools take every GPU of the row
    }
  }
  CHECK(split);
  CHECK(aggregated);
}

TEST_CASE("disaggregated pools that do not add up or cannot run are refused with the key", "[disaggregated]") {
  auto refused = [](const std::vector<scenario::Override>& o, const std::string& words) {
    INFO(words);
    try {
      (void)test::scenario(kPools, o);
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Contains(words));
    }
  };
  refused({{"serving.disaggregated.decode_replicas", "2"}}, "must be equal");
  refused({{"serving.disaggregated.prefill_tensor", "3"}}, "prefill_tensor 3 must divide");
  refused({{"serving.disaggregated.decode_replicas", "0"}}, "serving.disaggregated.decode_replicas");
  refused({{"serving.arrival", "\"concurrency\""}, {"serving.concurrency", "8"}}, "open load");
  refused({{"serving.disaggregated.prefill_replicas", "1"}, {"serving.disaggregated.decode_replicas", "\"two\""}},
          "decode_replicas");
}
