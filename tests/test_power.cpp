// Board power and the clock a GPU sustains under its power limit (physics/power.cpp).
#include <algorithm>

#include "helpers.hpp"

using namespace gpusim;
using physics::PowerMix;

namespace {

// GPT-2 124M training on one RTX 3090 (a 350 W card), capped at `watts`.
Scenario rtx3090(double watts) {
  return test::scenario(R"(name = "3090"
[system]
gpu = "rtx3090"
gpus = 1
[model]
preset = "gpt2-124m"
[training]
tokens = 1e9
seq_len = 1024
global_batch = 16
micro_batch = 8
precision = "fp16"
)",
                        {{"system.power_limit", base::strfmt("\"%.0f W\"", watts)}});
}

}  // namespace

TEST_CASE("dynamic power goes as f V^2: x^3 above the voltage knee, x knee^2 below it", "[power][dvfs]") {
  const hardware::GpuSpec g = test::catalog().gpu("h100-sxm5-80gb");
  const double knee = g.voltage_knee / g.boost_clock;  // in units of the rated boost clock
  REQUIRE(knee < 1.0);
  CHECK(physics::voltage_factor(g, 1.0) == Approx(1.0));
  CHECK(physics::voltage_factor(g, 0.9) == Approx(0.9 * 0.9 * 0.9));
  const double low = 0.5 * knee;
  CHECK(physics::voltage_factor(g, low) == Approx(low * knee * knee));
}

TEST_CASE("a GPU under its limit runs at its highest clock, and at the limit where the board draws the limit",
          "[power][dvfs]") {
  const hardware::GpuSpec g = test::catalog().gpu("h100-sxm5-80gb");
  PowerMix idle_ish;
  idle_ish.memory = 0.1;
  CHECK(physics::sustained_clock(g, g.tdp, idle_ish) == Approx(physics::max_clock_ratio(g)));
  PowerMix gemm;
  gemm.tensor = 1.0;
  gemm.dram = units::gigabytes_per_second(100);
  const double x = physics::sustained_clock(g, g.tdp, gemm);
  CHECK(x < 1.0);  // a dense GEMM would draw more than 700 W at the rated clock (gemm_activity > 1)
  // P(x) = floor + e_bit 8 DRAM + (TDP - floor) a_gemm v(x) = TDP
  const double p = g.busy_floor.value() + g.dram_energy_per_bit * 8 * 100e9 +
                   (g.tdp - g.busy_floor).value() * g.activity.gemm * physics::voltage_factor(g, x);
  CHECK(p == Approx(g.tdp.value()).epsilon(1e-5));
  CHECK(physics::board_power(g, gemm, x).value() == Approx(g.tdp.value()).epsilon(1e-5));
}

TEST_CASE("a GeForce board below its limit boosts above the rated clock", "[power][dvfs]") {
  // Llama-2-7B decode at batch 1 reads weights: far below 450 W, so the 4090 runs at 2820 MHz
  // (club-3090-issue-697 logs 2820 MHz at ~247 W in decode)
  const Scenario sc = test::scenario(R"(name = "decode"
[system]
gpu = "rtx4090"
gpus = 1
[model]
preset = "llama2-7b"
[inference]
batch = 1
)");
  const step::Evaluation e = step::evaluate(sc);
  CHECK(e.clock == Approx(physics::max_clock_ratio(sc.system.gpu)).epsilon(2e-3));
  CHECK(sc.system.gpu.max_clock.value() == Approx(2820e6));
  CHECK(e.gpu_avg_power < sc.system.gpu.tdp);
}

TEST_CASE("a 50 W cap on a 350 W RTX 3090 costs 5-9 % of speed and lowers the energy per job", "[power][dvfs]") {
  // Dettmers: ~7 % slower for 50 W less on a 350 W card [dettmers-2023]; qwertyforce's ViT sweep
  // 0.950 at 300 W of 350 W (row P05)
  const step::Evaluation full = step::evaluate(rtx3090(350));
  const step::Evaluation capped = step::evaluate(rtx3090(300));
  const double speed = capped.tokens_per_s / full.tokens_per_s;
  CHECK(speed >= 0.91);
  CHECK(speed <= 0.95);
  const double energy_full = full.gpu_avg_power.value() / full.tokens_per_s;
  const double energy_capped = capped.gpu_avg_power.value() / capped.tokens_per_s;
  CHECK(energy_capped < energy_full);
  // deeper caps slow it further
  CHECK(step::evaluate(rtx3090(200)).tokens_per_s < capped.tokens_per_s);
}

TEST_CASE("a kernel's power is floor + DRAM energy + its SM activity at its clock", "[power]") {
  const hardware::GpuSpec g = test::catalog().gpu("a100-sxm4-40gb");
  // a stream kernel (0.25 FLOP/B) runs at the achievable DRAM bandwidth, unthrottled
  const physics::PowerClock pc = physics::intensity_power(g, 0.25, false, g.tdp);
  const double bw = physics::dram_bandwidth(g).value();
  CHECK(pc.mix.memory == 1.0);
  CHECK(pc.mix.dram.value() == Approx(bw));
  CHECK(pc.clock == Approx(physics::max_clock_ratio(g)));
  CHECK(pc.power.value() ==
        Approx(g.busy_floor.value() + g.dram_energy_per_bit * 8 * bw +
               (g.tdp - g.busy_floor).value() * g.activity.memory * physics::voltage_factor(g, pc.clock)));
}

TEST_CASE("below the voltage knee a cap buys clock linearly: x = (cap - floor - DRAM) / ((TDP - floor) A knee^2)",
          "[power][dvfs]") {
  // A deep cap on an RTX 3090: the busy floor (an nvidia-smi reading of a loaded, waiting card
  // [vllm-issue-2289]) and the DRAM energy come first; what is left drives the SMs at the voltage
  // floor, where dynamic power goes as f alone.
  const hardware::GpuSpec g = test::catalog().gpu("rtx3090");
  const Watts cap(150);
  PowerMix gemm;
  gemm.tensor = 1.0;
  gemm.dram = units::gigabytes_per_second(200);
  const double knee = g.voltage_knee / g.boost_clock;
  const double v1 = std::max(1.0, knee);
  const double dram_w = g.dram_energy_per_bit * 8 * 200e9;
  const double expected = (cap.value() - g.busy_floor.value() - dram_w) /
                          ((g.tdp - g.busy_floor).value() * g.activity.gemm) * v1 * v1 / (knee * knee);
  REQUIRE(expected < knee);  // the cap lands below the knee
  CHECK(physics::sustained_clock(g, cap, gemm) == Approx(expected).epsilon(1e-4));
  // no headroom above the floor and the DRAM: the search stops at its lowest clock, and the board
  // still draws more than the cap there
  const Watts starved(g.busy_floor.value() + dram_w);
  const double lowest = physics::sustained_clock(g, starved, gemm);
  CHECK(lowest < 0.1);
  CHECK(physics::board_power(g, gemm, lowest) >= starved);
}

TEST_CASE("a higher clock limit extends the V/F table without moving its knee, so no mix sustains a lower clock",
          "[power][dvfs][monotone]") {
  // The knee is a point of the board's V/F table (0.65 of the RTX 3090's 1950 MHz highest clock,
  // specs/arch/ampere.toml): raising the limit to 2400 MHz leaves the voltage at every clock as it was.
  const hardware::GpuSpec g = test::catalog().gpu("rtx3090");
  hardware::GpuSpec higher = g;
  higher.max_clock = Hertz(2400e6);
  CHECK(higher.voltage_knee.value() == Approx(0.65 * g.max_clock.value()));
  for (const double x : {0.2, 0.6, 1.0, 1.2}) {
    CHECK(physics::voltage_factor(higher, x) == physics::voltage_factor(g, x));
  }
  PowerMix gemm;
  gemm.tensor = 1.0;
  gemm.dram = units::gigabytes_per_second(300);
  for (const double watts : {150.0, 250.0, 350.0, 500.0}) {
    INFO(watts << " W");
    // within the bisection's resolution (physics/power.cpp: 1e-6 of the rated clock)
    CHECK(physics::sustained_clock(higher, Watts(watts), gemm) >=
          physics::sustained_clock(g, Watts(watts), gemm) - 1e-6);
  }
}

TEST_CASE("a power-limited step averages exactly its limit: the board alternates between two clock steps",
          "[power][dvfs][monotone]") {
  // GPT-2 124M on an RTX 3090 capped at 250 W: the limit binds (below), and the step's time and
  // energy are the work-weighted mean of the two clock steps either side of it, so the busy power
  // is the limit itself, not the power of the lower step.
  const Scenario sc = rtx3090(250);
  const step::Evaluation e = step::evaluate(sc);
  REQUIRE(e.clock < physics::max_clock_ratio(sc.system.gpu));
  REQUIRE(e.step.bubble.value() == 0);
  REQUIRE(e.step.input_stall.value() == 0);
  CHECK(e.gpu_avg_power.value() == Approx(250).epsilon(1e-9));
  // A cap a few watts higher buys a little time, not a whole clock step or none.
  const step::Evaluation looser = step::evaluate(rtx3090(252));
  CHECK(looser.step.time < e.step.time);
  CHECK(looser.step.time.value() > e.step.time.value() * (1 - 0.01));
}
