// The serving engine's decode set and static-batch totals (step/serving_decoders.cpp) against the
// request-by-request rules they stand for (step/serving_continuous.cpp, serving_kv.cpp): over random engines, loads
// and KV pools, including pools short enough to evict, budgets tight enough to split iterations
// and blocks too large for the set, the two give byte-identical reports.
#include <random>
#include <string>

#include "helpers.hpp"

using namespace gpusim;

namespace {

template <typename T>
const T& pick(std::mt19937& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}

std::string random_serving(std::mt19937& rng) {
  auto one_of = [&rng](std::vector<std::string> v) { return pick(rng, v); };
  const std::string gpu = one_of({"h100-sxm5-80gb", "a100-sxm4-80gb", "rtx4090", "l40s", "h200-sxm"});
  const std::string model = one_of({"llama3-8b", "llama2-7b", "qwen2.5-7b", "llama2-13b"});
  std::string t = "name = \"engine\"\n[system]\ngpu = \"" + gpu + "\"\ngpus = 1\n[model]\npreset = \"" + model +
                  "\"\n[inference]\nprompt_tokens = " + one_of({"16", "128", "700", "2048"}) +
                  "\noutput_tokens = " + one_of({"1", "2", "17", "128", "600"}) + "\nweight_precision = \"" +
                  one_of({"bf16", "fp8", "int4"}) + "\"\n";
  const std::string scheduler = one_of({"continuous", "continuous", "continuous", "static"});
  if (scheduler == "static") {
    t += "batch = " + one_of({"1", "8", "64"}) + "\n";
  }
  t += "[serving]\nscheduler = \"" + scheduler + "\"\n";
  const std::string arrival = one_of({"poisson", "poisson", "concurrency", "offline"});
  t += "arrival = \"" + arrival + "\"\n";
  if (arrival == "poisson") {
    t += "rate = \"" + one_of({"0.5", "4", "16", "64", "256"}) + " req/s\"\n";
  } else if (arrival == "concurrency") {
    t += "concurrency = " + one_of({"1", "8", "64", "512"}) + "\n";
  }
  t += "requests = " + one_of({"40", "150", "400"}) + "\n";
  t += "length_spread = " + one_of({"0", "0.5", "0.99"}) + "\n";
  t += "output_spread = " + one_of({"0", "0.9"}) + "\n";
  t += "seed = " + std::to_string(std::uniform_int_distribution<int>(1, 1000)(rng)) + "\n";
  if (scheduler == "continuous") {
    t += "memory_fraction = " + one_of({"0.9", "0.3", "0.25", "0.22", "0.2"}) + "\n";
    t += "kv_block = " + one_of({"1", "16", "32", "5000"}) + "\n";
    t += "max_batched_tokens = " + one_of({"256", "2048", "8192"}) + "\n";
    t += "max_seqs = " + one_of({"16", "256", "1024"}) + "\n";
    t += "chunked_prefill = " + one_of({"true", "false"}) + "\n";
    t += "mixed_batches = " + one_of({"true", "false"}) + "\n";
    t += "reserve_output = " + one_of({"true", "false", "false"}) + "\n";
    t += "scheduler_steps = " + one_of({"1", "1", "4"}) + "\n";
    t += "overlap_scheduler = " + one_of({"true", "false"}) + "\n";
  }
  t += "[runtime]\nname = \"" + one_of({"vllm", "sglang", "tensorrt-llm", "vllm-v0", "llama.cpp"}) + "\"\n";
  return t;
}

// The report of a scenario with the engine's totals, or request by request.
std::string report_of(const Scenario& sc, bool by_request) {
  step::set_serving_by_request(by_request);
  std::string json = report::estimate_json(answer::estimate(sc, answer::Options{false}));
  step::set_serving_by_request(false);
  return json;
}

}  // namespace

TEST_CASE("the decode set and static totals give the request-by-request engine's reports, byte for byte",
          "[serving][engine][random]") {
  std::mt19937 rng(20261126);
  int checked = 0;
  int preempting = 0;
  for (int i = 0; checked < 400 && i < 4000; ++i) {
    const std::string text = random_serving(rng);
    std::optional<Scenario> sc;
    try {
      sc = test::scenario(text);
    } catch (const InputError&) {
      continue;  // a refused combination (a prompt past the model's context, ...)
    }
    INFO(text);
    const answer::Estimate e = answer::estimate(*sc, answer::Options{false});
    if (!e.eval.inference) {
      continue;
    }
    ++checked;
    preempting += e.eval.inference->preemptions > 0 ? 1 : 0;
    CHECK(report_of(*sc, false) == report_of(*sc, true));
  }
  CHECK(checked == 400);
  CHECK(preempting >= 10);  // the eviction rules are exercised, not only the roomy pools
}

TEST_CASE(
    "with prefix caching and speculative decoding the decode set gives the request-by-request engine's reports, "
    "byte for byte",
    "[serving][engine][random][prefix][speculative]") {
  std::mt19937 rng(20261128);
  int checked = 0;
  int hits = 0;
  for (int i = 0; checked < 150 && i < 3000; ++i) {
    std::string text = random_serving(rng);
    const std::size_t runtime = text.find("[runtime]");
    const std::size_t serving = text.find("[serving]\n") + std::string("[serving]\n").size();
    std::string keys = "prefix_tokens = " + pick(rng, std::vector<std::string>{"8", "64", "600"}) +
                       "\nprefix_hit_rate = " + pick(rng, std::vector<std::string>{"0", "0.5", "1"}) + "\n";
    std::string spec;
    const std::string method = pick(rng, std::vector<std::string>{"none", "ngram", "eagle", "medusa"});
    if (method != "none") {
      spec = "[serving.speculative]\nmethod = \"" + method + "\"\ntokens = " +
             pick(rng, std::vector<std::string>{"1", "3", "7"}) + "\n";
    }
    text = text.substr(0, serving) + keys + text.substr(serving, runtime - serving) + spec + text.substr(runtime);
    std::optional<Scenario> sc;
    try {
      sc = test::scenario(text);
    } catch (const InputError&) {
      continue;  // a prefix as long as the prompt, ...
    }
    INFO(text);
    const answer::Estimate e = answer::estimate(*sc, answer::Options{false});
    if (!e.eval.inference) {
      continue;
    }
    ++checked;
    hits += sc->job.inference->prefix.hit_rate > 0 ? 1 : 0;
    CHECK(report_of(*sc, false) == report_of(*sc, true));
  }
  CHECK(checked == 150);
  CHECK(hits >= 50);
}
