// Serving iteration tables kept between evaluations (step::TableCache): an entry serves every
// evaluation that differs from the one that made it in the load, the inference's batch and the
// engine's max_seqs alone, and any other input makes an entry of its own. An evaluation that takes
// its tables (and the requests its load draws) from a cache must come out exactly as one that
// makes its own: these tests evaluate variants of serving scenarios (loads, batch limits, layouts,
// weight formats, a power limit that moves the clocks) in a shuffled order through one cache, and
// each again without it.
#include <algorithm>
#include <random>

#include "helpers.hpp"

using namespace gpusim;

namespace {

// Serving scenarios of several engines and GPUs: the shipped examples and measured rows' scenarios
// of SGLang, TensorRT-LLM and vLLM's V0 engine on MI300X.
std::vector<std::string> serving_scenarios() {
  const std::string root = std::string(GPUSIM_SOURCE_DIR) + "/";
  return {root + "scenarios/llama3-70b-fp8-4xh100-serve.toml",
          root + "scenarios/mi300x-llama3-70b-serve.toml",
          root + "scenarios/llama2-7b-decode-rtx4090.toml",
          root + "scenarios/tiny-model-launch-bound.toml",
          root + "measurements/scenarios/serving/gpustack-qwen3-8b-h100-sglang-c4.toml",
          root + "measurements/scenarios/serving/datacrunch-llama3.3-70b-4xh200-random1024-rps4.toml",
          root + "measurements/scenarios/serving/azure-vllm-llama3.1-70b-8xmi300x-fp8-128-2048.toml"};
}

void check_same(const step::Evaluation& kept, const step::Evaluation& fresh) {
  REQUIRE(kept.inference.has_value() == fresh.inference.has_value());
  const step::InferenceResult& a = *kept.inference;
  const step::InferenceResult& b = *fresh.inference;
  for (const step::Percentiles step::InferenceResult::*d :
       {&step::InferenceResult::ttft, &step::InferenceResult::tpot, &step::InferenceResult::e2e,
        &step::InferenceResult::queue}) {
    CHECK((a.*d).mean.value() == (b.*d).mean.value());
    CHECK((a.*d).p50.value() == (b.*d).p50.value());
    CHECK((a.*d).p90.value() == (b.*d).p90.value());
    CHECK((a.*d).p99.value() == (b.*d).p99.value());
  }
  for (double step::InferenceResult::*f :
       {&step::InferenceResult::output_tokens_per_s, &step::InferenceResult::decode_tokens_per_s,
        &step::InferenceResult::prefill_tokens_per_s, &step::InferenceResult::requests_per_s,
        &step::InferenceResult::tokens_per_s_per_user, &step::InferenceResult::mbu, &step::InferenceResult::batch,
        &step::InferenceResult::kv_utilization, &step::InferenceResult::preemptions,
        &step::InferenceResult::saturation_requests_per_s}) {
    CHECK(a.*f == b.*f);
  }
  CHECK(a.saturated == b.saturated);
  CHECK(a.makespan.value() == b.makespan.value());
  CHECK(kept.step.time.value() == fresh.step.time.value());
  CHECK(kept.step.communication.value() == fresh.step.communication.value());
  CHECK(kept.step.kernels == fresh.step.kernels);
  CHECK(kept.clock == fresh.clock);
  CHECK(kept.gpu_avg_power.value() == fresh.gpu_avg_power.value());
}

// The scenario under a short load of each arrival kind, as the serving search and the band vary it.
std::vector<Scenario> loads(const Scenario& sc) {
  std::vector<Scenario> out;
  for (const workload::Arrival arrival :
       {workload::Arrival::kOffline, workload::Arrival::kConcurrency, workload::Arrival::kPoisson}) {
    Scenario s = sc;
    workload::Load& l = s.job.inference->load;
    l.arrival = arrival;
    l.requests = 150;
    l.concurrency = 6;
    l.rate = l.rate > 0 ? l.rate : 2.0;
    out.push_back(s);
  }
  // Another seed, and another length spread: other requests, which a cache keeps apart.
  Scenario reseeded = out.back();
  reseeded.job.inference->load.seed += 1;
  out.push_back(reseeded);
  Scenario spread = out.back();
  spread.job.inference->load.length_spread = 0.3;
  spread.job.inference->load.output_spread = 0.3;
  out.push_back(spread);
  return out;
}

// The scenario with each input a model adds on top of its tables moved (the band moves them): the
// kernel gap, the launch costs and path, the dispatch, the remainder and the engine's host costs.
std::vector<Scenario> host_side(const Scenario& sc) {
  std::vector<Scenario> out(7, sc);
  out[0].system.gpu.efficiency.kernel_overhead = sc.system.gpu.efficiency.kernel_overhead * 1.5;
  out[1].system.gpu.efficiency.launch_eager = sc.system.gpu.efficiency.launch_eager * 2.0;
  out[1].system.gpu.efficiency.launch_graph = sc.system.gpu.efficiency.launch_graph * 2.0;
  out[2].runtime.remainder = sc.runtime.remainder + 0.1;
  out[3].runtime.dispatch = sc.runtime.dispatch + Seconds(5e-6);
  out[4].runtime.serving.step_overhead = sc.runtime.serving.step_overhead + Seconds(1e-3);
  out[4].runtime.serving.schedule_per_sequence = sc.runtime.serving.schedule_per_sequence + Seconds(2e-5);
  out[5].runtime.cuda_graphs = !sc.runtime.cuda_graphs;
  out[6].runtime.serving.max_batched_tokens = sc.runtime.serving.max_batched_tokens / 2;
  return out;
}

// Variants of a serving scenario: loads, batch limits (a static batch or max_seqs), tensor splits,
// weight formats and a power limit halfway to idle (other clocks).
std::vector<Scenario> variants(const Scenario& sc) {
  std::vector<Scenario> out;
  std::vector<Scenario> bases{sc};
  Scenario capped = sc;
  capped.system.power_limit = Watts(0.5 * (sc.system.gpu.tdp + sc.system.gpu.idle_power).value());
  bases.push_back(capped);
  for (const char* format : {"fp8", "bf16"}) {
    try {
      bases.push_back(scenario::with_weight_format(sc, format));
    } catch (const InputError&) {  // a format the GPU cannot compute in
    }
  }
  for (const Scenario& moved : host_side(sc)) {
    bases.push_back(moved);
  }
  const workload::ModelShape& m = sc.job.model;
  if (sc.system.gpus >= 2 && m.heads % 2 == 0 && m.ffn_hidden % 2 == 0 && (m.kv_heads <= 0 || m.kv_heads % 2 == 0)) {
    workload::Layout half = sc.layout;
    half.tensor = std::max(1, sc.layout.tensor / 2);
    half.data = sc.system.gpus / (half.tensor * half.pipeline);
    if (half.tensor * half.pipeline * half.data == sc.system.gpus) {
      bases.push_back(scenario::with_layout(sc, half, sc.system.gpus));
    }
  }
  for (const Scenario& base : bases) {
    for (const std::int64_t limit : {std::int64_t{2}, std::int64_t{16}}) {
      for (Scenario s : loads(base)) {
        if (s.runtime.serving.scheduler == workload::Scheduler::kStatic) {
          s.job.inference->batch = limit;
          s.job.inference->batch_max = false;
        } else {
          s.runtime.serving.max_seqs = limit;
        }
        out.push_back(s);
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a serving evaluation with tables from a shared cache equals one that makes its own, bit for bit",
          "[serving][cache]") {
  std::mt19937 rng(20261127);
  int evaluated = 0;
  for (const std::string& path : serving_scenarios()) {
    INFO(path);
    std::vector<Scenario> all = variants(scenario::load_scenario_file(test::catalog(), path));
    std::shuffle(all.begin(), all.end(), rng);
    step::TableCache cache;
    step::Options shared;
    shared.tables = &cache;
    for (const Scenario& s : all) {
      check_same(step::evaluate(s, shared), step::evaluate(s));
      ++evaluated;
    }
    // Tables were shared: fewer entries than evaluations (each makes one or two: prefill, decode).
    CHECK(cache.size() < all.size());
  }
  CHECK(evaluated > 150);
}

TEST_CASE("one table entry serves evaluations that differ in load, batch, engine settings and host costs alone",
          "[serving][cache]") {
  // Under a power limit the batch moves the clocks, and tables at another clock are others: here
  // the limit is above what the GPUs draw, and every run is at the top clock.
  Scenario sc = scenario::load_scenario_file(
      test::catalog(), std::string(GPUSIM_SOURCE_DIR) + "/scenarios/llama3-70b-fp8-4xh100-serve.toml");
  sc.system.power_limit = sc.system.gpu.tdp * 4.0;
  step::TableCache cache;
  step::Options o;
  o.tables = &cache;
  (void)step::evaluate(sc, o);
  const std::size_t entries = cache.size();
  REQUIRE(entries >= 1);
  for (Scenario s : loads(sc)) {
    s.runtime.serving.max_seqs = 7;
    s.job.inference->batch = 3;
    (void)step::evaluate(s, o);
  }
  CHECK(cache.size() == entries);
  for (const Scenario& s : host_side(sc)) {
    (void)step::evaluate(s, o);
  }
  CHECK(cache.size() == entries);
}

TEST_CASE("every other input the tables read makes a table entry of its own", "[serving][cache]") {
  const Scenario sc = scenario::load_scenario_file(
      test::catalog(), std::string(GPUSIM_SOURCE_DIR) + "/scenarios/llama3-70b-fp8-4xh100-serve.toml");
  step::TableCache cache;
  step::Options o;
  o.tables = &cache;
  (void)step::evaluate(sc, o);
  std::size_t entries = cache.size();
  auto moved = [&](const char* what, const Scenario& s) {
    INFO(what);
    check_same(step::evaluate(s, o), step::evaluate(s));
    CHECK(cache.size() > entries);
    entries = cache.size();
  };
  Scenario gemm = sc;
  gemm.system.gpu.efficiency.gemm *= 0.9;
  moved("a GPU's GEMM efficiency", gemm);
  Scenario kv = sc;
  kv.job.inference->kv_bytes = sc.job.inference->kv_bytes == 1 ? 2 : 1;
  moved("the KV cache's bytes per element", kv);
  Scenario allreduce = sc;
  allreduce.runtime.serving.allreduce_latency = allreduce.runtime.serving.allreduce_latency * 2.0;
  moved("the runtime's all-reduce latency", allreduce);
  Scenario link = sc;
  link.system.inter_node.bandwidth = link.system.inter_node.bandwidth * 0.5;
  moved("the fabric (its links between nodes)", link);
  workload::Layout two = sc.layout;
  two.tensor = 2;
  two.data = 2;
  moved("the tensor split", scenario::with_layout(sc, two, sc.system.gpus));
}
