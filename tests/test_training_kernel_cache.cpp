// A training evaluation keeps its kernel sums by lowering and clock in a step::TableCache: one entry
// per GPU (but its kernel gap, launch costs and ranges), model, training and runtime (but its
// remainder): what the lowering and the kernel model read. Calibration's remainder search and an estimate's advice and
// band runs share them. An evaluation that takes its kernel sums from a cache must come out exactly as one that makes
// its own: these tests evaluate variants of every shipped training scenario (remainders, layouts, a power cap that
// moves the clock, kernel gaps, a GEMM efficiency) in a shuffled order through one cache, and each again without it.
#include <algorithm>
#include <random>

#include "helpers.hpp"

using namespace gpusim;

namespace {

void check_same(const step::Evaluation& kept, const step::Evaluation& fresh) {
  const step::StepBreakdown& a = kept.step;
  const step::StepBreakdown& b = fresh.step;
  for (Seconds step::StepBreakdown::*f :
       {&step::StepBreakdown::time, &step::StepBreakdown::compute, &step::StepBreakdown::gemm,
        &step::StepBreakdown::memory_bound, &step::StepBreakdown::communication, &step::StepBreakdown::bubble,
        &step::StepBreakdown::input_stall, &step::StepBreakdown::offload, &step::StepBreakdown::overhead,
        &step::StepBreakdown::launch_stall, &step::StepBreakdown::host_launch}) {
    CHECK((a.*f).value() == (b.*f).value());
  }
  CHECK(a.kernels == b.kernels);
  CHECK(kept.clock == fresh.clock);
  CHECK(kept.gpu_avg_power.value() == fresh.gpu_avg_power.value());
  CHECK(kept.hfu == fresh.hfu);
  CHECK(kept.job_time.value() == fresh.job_time.value());
  REQUIRE(kept.ops.size() == fresh.ops.size());
  for (std::size_t i = 0; i < kept.ops.size(); ++i) {
    CHECK(kept.ops[i].name == fresh.ops[i].name);
    CHECK(kept.ops[i].time.value() == fresh.ops[i].time.value());
  }
}

// A scenario's variants that one cache entry must serve (remainders, layouts, a power cap) and
// one that needs an entry of its own (a GEMM efficiency).
std::vector<Scenario> variants(const Scenario& sc) {
  std::vector<Scenario> out{sc};
  for (const double r : {0.0, 0.13, 0.71}) {
    Scenario v = sc;
    v.runtime.remainder = r;
    out.push_back(v);
  }
  Scenario micro = sc;
  micro.layout.micro_batch = sc.layout.micro_batch * 2;
  micro.job.training->global_batch = std::max(sc.job.training->global_batch, micro.layout.micro_batch * sc.layout.data);
  micro.job.training->global_batch -= micro.job.training->global_batch % (micro.layout.micro_batch * sc.layout.data);
  out.push_back(micro);
  out.push_back(scenario::load_scenario_file(test::catalog(), sc.origin,
                                             {{"system.power_limit", test::halfway_power_limit(sc)}}));
  Scenario gaps = sc;
  gaps.system.gpu.efficiency.kernel_overhead = gaps.system.gpu.efficiency.kernel_overhead * 3.0;
  gaps.system.gpu.efficiency.launch_eager = gaps.system.gpu.efficiency.launch_eager * 2.0;
  out.push_back(gaps);
  Scenario gemm = sc;
  gemm.system.gpu.efficiency.gemm *= 0.9;
  gemm.runtime.remainder = 0.2;
  out.push_back(gemm);
  return out;
}

}  // namespace

TEST_CASE("a training evaluation with kernel sums from a shared cache equals one that makes its own, bit for bit",
          "[step][cache]") {
  std::mt19937 rng(20261127);
  std::vector<Scenario> all;
  for (const std::string& path : test::shipped_training_scenarios()) {
    const std::vector<Scenario> v = variants(scenario::load_scenario_file(test::catalog(), path));
    all.insert(all.end(), v.begin(), v.end());
  }
  std::shuffle(all.begin(), all.end(), rng);
  step::TableCache cache;
  step::Options shared;
  shared.tables = &cache;
  shared.op_shares = true;
  step::Options own;
  own.op_shares = true;
  int compared = 0;
  for (const Scenario& sc : all) {
    INFO(sc.origin << " remainder " << sc.runtime.remainder << " micro-batch " << sc.layout.micro_batch);
    check_same(step::evaluate(sc, shared), step::evaluate(sc, own));
    ++compared;
  }
  CHECK(compared >= 70);
  CHECK(cache.training_entries() > 0);
}

TEST_CASE("one training kernel entry serves remainders, layouts and kernel gaps, and a GEMM efficiency makes another",
          "[step][cache]") {
  const Scenario sc = scenario::load_scenario_file(
      test::catalog(), std::string(GPUSIM_SOURCE_DIR) + "/scenarios/llama2-7b-pretrain-a100.toml");
  step::TableCache cache;
  step::Options o;
  o.tables = &cache;
  const double base = step::evaluate(sc, o).job_time.value();
  CHECK(cache.training_entries() == 1);
  Scenario remainder = sc;
  remainder.runtime.remainder = sc.runtime.remainder + 0.25;
  // The remainder moves the step, and shares the entry.
  CHECK(step::evaluate(remainder, o).job_time.value() > base);
  CHECK(cache.training_entries() == 1);
  Scenario zero = sc;
  zero.layout.zero = sc.layout.zero == 0 ? 1 : 0;
  (void)step::evaluate(zero, o);
  CHECK(cache.training_entries() == 1);
  // So do the kernel gaps and launch costs, which the step adds to the kernels.
  Scenario gaps = sc;
  gaps.system.gpu.efficiency.kernel_overhead = sc.system.gpu.efficiency.kernel_overhead * 3.0 + Seconds(1e-6);
  CHECK(step::evaluate(gaps, o).job_time.value() > base);
  CHECK(cache.training_entries() == 1);
  // Anything the kernel sums read makes an entry of its own.
  Scenario gemm = sc;
  gemm.system.gpu.efficiency.gemm *= 0.9;
  CHECK(step::evaluate(gemm, o).job_time.value() > base);
  CHECK(cache.training_entries() == 2);
  Scenario attention = sc;
  attention.runtime.attention = attention.runtime.attention == workload::AttentionKernel::kFlash2
                                    ? workload::AttentionKernel::kUnfused
                                    : workload::AttentionKernel::kFlash2;
  (void)step::evaluate(attention, o);
  CHECK(cache.training_entries() == 3);
  Scenario tokens = sc;
  tokens.job.training->seq_len = sc.job.training->seq_len / 2;
  (void)step::evaluate(tokens, o);
  CHECK(cache.training_entries() == 4);
}
