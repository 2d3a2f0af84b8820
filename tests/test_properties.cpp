// Properties the step model must keep whatever its parameters.
#include "gpusim/model/estimate.hpp"
#include "gpusim/model/plan.hpp"
#include "helpers.hpp"

using namespace gpusim;

TEST_CASE("more memory bandwidth is never slower", "[properties]") {
  for (const char* file : {"gpt2-124m", "llama2-7b"}) {
    Scenario sc =
        test::scenario(std::string(test::kSmallTraining), {{"model.preset", std::string("\"") + file + "\""}});
    const Estimate base = estimate_core(sc);
    sc.system.gpu.memory_bandwidth = sc.system.gpu.memory_bandwidth * 2.0;
    const Estimate fast = estimate_core(sc);
    CHECK(fast.step.time <= base.step.time);
    CHECK(fast.step.memory_bound < base.step.memory_bound);
  }
}

TEST_CASE("more interconnect bandwidth is never slower", "[properties]") {
  Scenario sc = test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""}, {"parallelism.zero", "3"}});
  const Estimate base = estimate_core(sc);
  sc.system.gpu.peer_bandwidth = sc.system.gpu.peer_bandwidth * 0.1;
  const Estimate slow = estimate_core(sc);
  CHECK(slow.step.communication_total > base.step.communication_total);
  CHECK(slow.step.time >= base.step.time);
}

TEST_CASE("more GPUs never raise per-GPU memory under ZeRO-3", "[properties]") {
  double last = 1e300;
  for (const int gpus : {8, 16, 32, 64, 128}) {
    const Scenario sc = test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""},
                                                              {"parallelism.zero", "3"},
                                                              {"system.gpus", std::to_string(gpus)},
                                                              {"training.global_batch", "1024"}});
    const double bytes = estimate_core(sc).memory.total().value();
    CHECK(bytes <= last);
    last = bytes;
  }
}

TEST_CASE("time to train scales linearly with tokens", "[properties]") {
  const Estimate one = estimate_core(test::scenario(test::kSmallTraining, {{"training.tokens", "1e9"}}));
  const Estimate ten = estimate_core(test::scenario(test::kSmallTraining, {{"training.tokens", "1e10"}}));
  CHECK(ten.train_time.value() == Approx(10 * one.train_time.value()));
  CHECK(ten.gpu_hours == Approx(10 * one.gpu_hours));
  CHECK(ten.energy_kwh == Approx(10 * one.energy_kwh));
  CHECK(ten.step.time.value() == Approx(one.step.time.value()));
}

TEST_CASE("MFU stays within 0..1 and HFU is never below MFU", "[properties]") {
  for (const char* recompute : {"\"none\"", "\"selective\"", "\"full\""}) {
    const Estimate e = estimate_core(test::scenario(test::kSmallTraining, {{"training.recompute", recompute}}));
    CHECK(e.mfu > 0);
    CHECK(e.mfu < 1);
    CHECK(e.hfu >= e.mfu);
  }
}

TEST_CASE("a power limit lowers clocks by (limit/TDP)^(1/3) for compute-bound work", "[properties][power]") {
  const Estimate full = estimate_core(test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""}}));
  const Estimate capped = estimate_core(
      test::scenario(test::kSmallTraining, {{"model.preset", "\"llama2-7b\""}, {"system.power_limit", "\"200 W\""}}));
  // DESIGN §6 seed: compute-bound time grows by (TDP / limit)^(1/3) = (400 / 200)^(1/3)
  CHECK(capped.step.gemm.value() == Approx(full.step.gemm.value() * std::cbrt(400.0 / 200.0)).epsilon(0.01));
  CHECK(capped.gpu_avg_power.value() <= 200.0);
}

TEST_CASE("average board power lies between idle and TDP", "[properties][power]") {
  const Estimate e = estimate_core(test::scenario(test::kSmallTraining));
  const GpuSpec g = test::catalog().gpu("a100-sxm4-80gb");
  CHECK(e.gpu_avg_power > g.idle_power);
  CHECK(e.gpu_avg_power <= g.tdp);
}

TEST_CASE("a tiny model at batch 1 is launch-bound and CUDA graphs relieve it", "[properties][latency]") {
  const std::string toml = R"(name = "tiny"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
preset = "gpt2-124m"
[inference]
batch = 1
prompt_tokens = 128
output_tokens = 128
)";
  const Estimate eager = estimate(test::scenario(toml), test::catalog());
  const GpuSpec g = test::catalog().gpu("h100-sxm5-80gb");
  // host time = kernels x eager launch cost; the GPU waits for whatever exceeds its own work
  CHECK(eager.step.host_launch.value() == Approx(eager.step.kernels * g.efficiency.launch_eager.value()));
  CHECK(eager.step.launch_stall.value() == Approx(eager.step.host_launch.value() - eager.step.compute.value() -
                                                  eager.step.kernels * g.efficiency.kernel_overhead.value()));
  CHECK(eager.bottleneck == Bottleneck::kLatency);
  CHECK_THAT(eager.bottleneck_reason, Catch::StartsWith("launch-bound"));
  const Estimate graphs = estimate_core(test::scenario(toml, {{"inference.cuda_graphs", "true"}}));
  CHECK(graphs.step.time < eager.step.time);
}

TEST_CASE("plan times a layout exactly as estimate does", "[plan]") {
  const Scenario sc = test::scenario(R"(name = "plan"
[system]
gpu = "a100-sxm4-80gb"
gpus = 64
[model]
preset = "llama2-13b"
[training]
tokens = 1e10
seq_len = 4096
global_batch = 256
micro_batch = 1
)");
  PlanOptions o;
  o.top = 5;
  const PlanResult r = plan(sc, o);
  REQUIRE(r.best.size() == 5);
  CHECK(r.evaluated > 100);
  for (const PlanRow& row : r.best) {
    INFO(describe(row.layout));
    const Estimate e = estimate_core(with_layout(sc, row.layout));
    CHECK(e.step.time.value() == Approx(row.step.time.value()).epsilon(1e-9));
    CHECK(e.memory.total().value() == Approx(row.memory.value()).epsilon(1e-9));
    CHECK(e.memory.fits());
  }
  for (std::size_t i = 1; i < r.best.size(); ++i) {
    CHECK(r.best[i - 1].train_time <= r.best[i].train_time);
  }
}

TEST_CASE("plan with nothing that fits says what was closest", "[plan]") {
  const Scenario sc = test::scenario(R"(name = "too big"
[system]
gpu = "rtx4090"
gpus = 2
gpus_per_node = 2
[model]
preset = "llama2-70b"
[training]
tokens = 1e9
seq_len = 4096
global_batch = 8
micro_batch = 1
)");
  const PlanResult r = plan(sc, PlanOptions{});
  CHECK(r.best.empty());
  REQUIRE(r.closest.has_value());
  CHECK(r.closest->memory > sc.system.gpu.memory_capacity);
  REQUIRE_FALSE(r.infeasible.empty());
  CHECK_THAT(r.infeasible[0], Catch::Contains("do not fit"));
}

TEST_CASE("plan searches more GPU counts when asked", "[plan]") {
  const Scenario sc = test::scenario(test::kSmallTraining);
  PlanOptions o;
  o.max_gpus = 64;
  const PlanResult r = plan(sc, o);
  REQUIRE_FALSE(r.best.empty());
  CHECK(r.best.front().layout.gpus >= 8);
  bool more = false;
  for (const auto& row : r.best) {
    more = more || row.layout.gpus > 8;
  }
  CHECK(more);
}
