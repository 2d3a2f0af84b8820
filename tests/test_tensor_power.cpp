// Tensor-core power per clock on boards of one die (specs/gpus/l40s.toml, rtx6000-ada.toml, l40.toml):
// the energy a tensor FLOP takes at a given clock is the silicon's, so boards of one die that differ in
// power limit or in tensor work per clock differ in gemm_activity, not in energy per FLOP.
#include <cmath>

#include "helpers.hpp"

using namespace gpusim;
using physics::PowerMix;

namespace {

// Tensor power per tensor FLOP/s at the absolute clock `hz`:
//   (TDP - floor) a_gemm v(x) / (peak x),  x = hz / boost.
double energy_per_tensor_flop(const hardware::GpuSpec& g, double hz) {
  const double x = hz / g.boost_clock.value();
  return (g.tdp - g.busy_floor).value() * g.activity.gemm * physics::voltage_factor(g, x) /
         (g.peak_for(DType::kBf16).value() * x);
}

Catalog with_gpu(const std::string& id, const std::string& text) {
  Catalog c = test::catalog();
  c.add_file(SpecKind::kGpu, id, catalog::SpecFile{"specs/gpus/" + id + ".toml", text});
  return c;
}

}  // namespace

TEST_CASE("boards of one die share the energy per tensor FLOP at a clock, whatever their limit and rate per clock",
          "[power][ada]") {
  const hardware::GpuSpec l40s = test::catalog().gpu("l40s");
  const hardware::GpuSpec rtx6000 = test::catalog().gpu("rtx6000-ada");
  const hardware::GpuSpec l40 = test::catalog().gpu("l40");
  // one AD102 configuration: 142 SMs; the L40 runs half the tensor work per clock
  REQUIRE(l40s.sm_count == rtx6000.sm_count);
  REQUIRE(l40.sm_count == l40s.sm_count);
  const double rate_l40s = physics::tensor_rate_per_sm(l40s, DType::kBf16);
  CHECK(physics::tensor_rate_per_sm(rtx6000, DType::kBf16) == Approx(rate_l40s).epsilon(0.01));
  CHECK(physics::tensor_rate_per_sm(l40, DType::kBf16) == Approx(rate_l40s / 2).epsilon(0.01));
  // at 2 GHz, above every board's voltage knee, the spec values (rounded to two decimals) agree to 1 %
  const double hz = 2.0e9;
  const double e = energy_per_tensor_flop(l40s, hz);
  CHECK(energy_per_tensor_flop(rtx6000, hz) == Approx(e).epsilon(0.01));
  CHECK(energy_per_tensor_flop(l40, hz) == Approx(e).epsilon(0.01));
  // so the board with the smaller SM budget (TDP - floor) carries the larger activity
  CHECK(rtx6000.activity.gemm > l40s.activity.gemm);
}

TEST_CASE(
    "a full-rate board's power limit holds a dense GEMM below its rated clock: x = ((TDP - floor - DRAM) / "
    "((TDP - floor) a))^(1/3)",
    "[power][dvfs][ada]") {
  const hardware::GpuSpec g = test::catalog().gpu("l40s");
  PowerMix gemm;
  gemm.tensor = 1.0;
  gemm.dram = units::gigabytes_per_second(100);
  const double dram_w = g.dram_energy_per_bit * 8 * 100e9;
  const double budget = (g.tdp - g.busy_floor).value();
  const double expected = std::cbrt((g.tdp.value() - g.busy_floor.value() - dram_w) / (budget * g.activity.gemm));
  REQUIRE(expected < 1.0);
  REQUIRE(expected > g.voltage_knee / g.boost_clock);  // above the knee: v(x) = x^3
  CHECK(physics::sustained_clock(g, g.tdp, gemm) == Approx(expected).epsilon(1e-4));
  // with the activity of half the tensor work per clock (the GeForce rate), the same board would not
  // reach its limit and would run the GEMM at its highest clock
  hardware::GpuSpec half = g;
  half.activity.gemm = g.activity.gemm / 2;
  REQUIRE(physics::board_power(half, gemm, physics::max_clock_ratio(half)) < half.tdp);
  CHECK(physics::sustained_clock(half, half.tdp, gemm) == Approx(physics::max_clock_ratio(half)));
}

TEST_CASE("a gemm_activity of zero or below is refused, naming the key", "[power][spec][errors]") {
  for (const char* value : {"0", "-1.72"}) {
    const Catalog c = with_gpu("bad-activity", std::string(R"(base = "l40s"
name = "bad"
[power]
gemm_activity = )") + value + "\n");
    const auto ds = test::diagnostics_of([&] { (void)c.gpu("bad-activity"); });
    REQUIRE(ds.size() == 1);
    CHECK(ds[0].key == "power.gemm_activity");
    CHECK(ds[0].message.find("greater than zero") != std::string::npos);
  }
}
