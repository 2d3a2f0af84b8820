// Alpha-beta collectives and the cost model.
#include "helpers.hpp"

using namespace gpusim;
using namespace gpusim::cost;
using physics::Collective;
using physics::Fabric;
using physics::make_fabric;

namespace {
Seconds allreduce_time(const Fabric& f, Bytes s, int n) {
  return physics::collective_time(f, Collective::kAllReduce, s, n);
}
Seconds ring_allreduce(Bytes s, int n, BytesPerSecond b, Seconds a) {
  return physics::ring_time(Collective::kAllReduce, s, n, b, a);
}
// Break-even in days (the figure people quote).
std::optional<double> breakeven_days(Usd purchase, double u, UsdPerSecond rate, double k, Watts p, UsdPerJoule price) {
  const auto t = breakeven_time(purchase, u, rate, k, p, price);
  return t ? std::optional<double>(units::to_days(*t)) : std::nullopt;
}
}  // namespace

TEST_CASE("ring all-reduce costs 2(n-1)/n S/B + 2(n-1) alpha", "[comm]") {
  const Bytes S(1e9);
  const BytesPerSecond B(100e9);
  const Seconds alpha(5e-6);
  const int n = 8;
  // 2(n-1)/n * S / B + 2(n-1) * alpha
  CHECK(ring_allreduce(S, n, B, alpha).value() == Approx(2.0 * 7 / 8 * 1e9 / 100e9 + 2.0 * 7 * 5e-6));
  // reduce-scatter: (n-1)/n * S / B + (n-1) * alpha
  CHECK(physics::ring_time(Collective::kReduceScatter, S, n, B, alpha).value() ==
        Approx(7.0 / 8 * 1e9 / 100e9 + 7 * 5e-6));
  CHECK(physics::ring_time(Collective::kAllGather, S, n, B, alpha).value() == Approx(7.0 / 8 * 1e9 / 100e9 + 7 * 5e-6));
  CHECK(ring_allreduce(S, 1, B, alpha).value() == 0);
}

TEST_CASE("multi-node all-reduce is reduce-scatter, inter-node all-reduce of a shard, all-gather", "[comm]") {
  Fabric f;
  f.gpus_per_node = 8;
  f.nodes = 4;
  f.intra_bus = BytesPerSecond(200e9);
  f.intra_alpha = Seconds(1e-6);
  f.inter_bus = BytesPerSecond(20e9);
  f.inter_alpha = Seconds(5e-6);
  const Bytes S(8e9);
  const double rs = 7.0 / 8 * 8e9 / 200e9 + 7 * 1e-6;
  const double inter = 2.0 * 3 / 4 * (8e9 / 8) / 20e9 + 2.0 * 3 * 5e-6;
  CHECK(allreduce_time(f, S, 32).value() == Approx(rs + inter + rs));
}

TEST_CASE("GPUs without P2P stage collectives through host memory", "[comm]") {
  const Scenario ws = test::scenario(R"(name = "ws"
[system]
gpu = "rtx4090"
gpus = 4
gpus_per_node = 4
[model]
preset = "gpt2-124m"
[training]
tokens = 1e9
seq_len = 1024
global_batch = 64
micro_batch = 4
)");
  const Fabric f = make_fabric(ws.system);
  const hardware::LinkSpec pcie4 = test::catalog().link("pcie4");
  CHECK(f.host_staged);
  CHECK(f.intra_bus.value() == Approx(pcie4.bandwidth.value() * pcie4.staged_efficiency));
  CHECK(f.intra_alpha.value() == Approx(pcie4.staged_latency.value()));
  const Scenario nv = test::scenario(test::kSmallTraining);
  CHECK(make_fabric(nv.system).intra_bus > f.intra_bus * 10.0);
}

TEST_CASE("break-even of Dettmers' example: 2,200 USD, 450 W, 15 %, 0.12 USD/kWh vs 2.14 USD/h", "[cost]") {
  // purchase / (24 u (rate - P price)) = 2200 / (24 * 0.15 * (2.14 - 0.45 * 0.12)) = 292.96 days
  const auto days =
      breakeven_days(Usd(2200), 0.15, units::usd_per_hour(2.14), 1.0, Watts(450), units::usd_per_kwh(0.12));
  REQUIRE(days.has_value());
  CHECK(*days == Approx(293).margin(1));
  CHECK(*days == Approx(2200.0 / (24 * 0.15 * (2.14 - 0.45 * 0.12))));
}

TEST_CASE("break-even normalizes for speed when the cloud GPU differs", "[cost]") {
  // A cloud GPU half as fast needs k = 2 hours per owned hour: the saving doubles (less power).
  const auto same =
      breakeven_days(Usd(2200), 0.15, units::usd_per_hour(2.14), 1.0, Watts(450), units::usd_per_kwh(0.12));
  const auto slow =
      breakeven_days(Usd(2200), 0.15, units::usd_per_hour(2.14), 2.0, Watts(450), units::usd_per_kwh(0.12));
  CHECK(*slow == Approx(2200.0 / (24 * 0.15 * (2 * 2.14 - 0.45 * 0.12))));
  CHECK(*slow < *same);
}

TEST_CASE("owning never pays back when electricity costs more than renting", "[cost]") {
  CHECK_FALSE(breakeven_days(Usd(2200), 0.15, units::usd_per_hour(0.01), 1.0, Watts(450), units::usd_per_kwh(0.12)));
  CHECK_FALSE(breakeven_days(Usd(2200), 0.0, units::usd_per_hour(2.14), 1.0, Watts(450), units::usd_per_kwh(0.12)));
}

TEST_CASE("a utilization too small for any representable pay-back time never breaks even", "[cost]") {
  // 2200 / (1e-308 x saving per second) overflows a double: never, as no saving at all.
  CHECK_FALSE(breakeven_days(Usd(2200), 1e-308, units::usd_per_hour(2.14), 1.0, Watts(450), units::usd_per_kwh(0.12)));
  CHECK(breakeven_days(Usd(2200), 1e-6, units::usd_per_hour(2.14), 1.0, Watts(450), units::usd_per_kwh(0.12)));
}

TEST_CASE("job cost is cloud hours times rate, and owned is electricity plus a hardware share", "[cost]") {
  CostInputs in;
  in.job_time = units::hours(10);
  in.cloud_job_time = units::hours(10);
  in.gpus = 8;
  in.cloud_rate = units::usd_per_hour(2.0);
  in.system_power = Watts(4000);
  in.pue = 1.2;
  in.electricity = units::usd_per_kwh(0.1);
  in.purchase = Usd(100000);
  in.lifetime = Seconds(5 * units::kSecondsPerYear);
  in.utilization = 0.5;
  const CostResult r = compute_cost(in);
  CHECK(r.cloud.value() == Approx(10 * 8 * 2.0));
  CHECK(r.owned_electricity.value() == Approx(4.0 * 10 * 1.2 * 0.1));  // kW x h x PUE x price
  CHECK(r.owned_hardware.value() == Approx(100000 * 10 / (5 * 365.25 * 24 * 0.5)));
}

TEST_CASE("ZeRO-1 exposes the weight all-gather that follows the optimizer step", "[comm]") {
  const Scenario sc = test::scenario(
      test::kSmallTraining, {{"parallelism.zero", "1"}, {"system.gpu", "\"rtx4090\""}, {"system.gpus_per_node", "8"}});
  const step::Evaluation e = step::evaluate(sc);
  const Fabric f = make_fabric(sc.system);
  // the model's parameters at their stored width (fp32 under the default runtime's autocast)
  const Bytes weights(workload::total_params(sc.job.model) *
                      physics::parameter_bytes(*sc.job.training, sc.layout, sc.runtime));
  const Seconds gather = physics::collective_time(f, Collective::kAllGather, weights, 8);
  const Seconds scatter = physics::collective_time(f, Collective::kReduceScatter, weights, 8);
  CHECK(e.step.communication.value() >= Approx(gather.value()));
  CHECK(e.step.communication_total.value() == Approx(scatter.value() + gather.value()));
}

TEST_CASE("small all-reduces take the tree: 2 S/B + 2 ceil(log2 n) alpha", "[comm]") {
  const Bytes S(1e3);
  const BytesPerSecond B(100e9);
  const Seconds alpha(5e-6);
  const int n = 64;
  CHECK(physics::tree_allreduce(S, n, B, alpha).value() == Approx(2 * 1e3 / 100e9 + 2 * 6 * 5e-6));
  // across nodes (one GPU per node): latency-bound sizes take the tree's 12 alpha, not the ring's 126
  Fabric f;
  f.gpus_per_node = 1;
  f.inter_bus = B;
  f.inter_alpha = alpha;
  CHECK(allreduce_time(f, S, n).value() == Approx(physics::tree_allreduce(S, n, B, alpha).value()));
  // bandwidth-bound: the ring's 2(n-1)/n S/B beats the tree's 2 S/B
  const Bytes big(1e10);
  CHECK(allreduce_time(f, big, n).value() == Approx(ring_allreduce(big, n, B, alpha).value()));
}

TEST_CASE("all-to-all sends (local-1)/n over NVLink and (n-local)/n over the NICs at once", "[comm]") {
  Fabric f;
  f.gpus_per_node = 8;
  f.intra_bus = BytesPerSecond(300e9);
  f.intra_alpha = Seconds(1e-6);
  f.inter_bus = BytesPerSecond(25e9);
  f.inter_alpha = Seconds(5e-6);
  const Bytes S(1e9);
  const double n = 16;
  const double intra = 1e9 * 7 / n / 300e9 + 7 * 1e-6;
  const double inter = 1e9 * 8 / n / 25e9 + 8 * 5e-6;
  CHECK(physics::all_to_all_time(f, S, 16).value() == Approx(std::max(intra, inter)));
  CHECK(physics::broadcast_time(f, S, 16).value() == Approx(1e9 / 25e9 + 4 * 5e-6));
  CHECK(physics::p2p_time(S, BytesPerSecond(50e9), Seconds(2e-6)).value() == Approx(1e9 / 50e9 + 2e-6));
}

TEST_CASE("an oversubscribed fabric divides each GPU's inter-node bandwidth", "[comm]") {
  const Scenario a = test::scenario(test::kSmallTraining, {{"system.gpus", "64"}, {"training.micro_batch", "1"}});
  const Scenario b = test::scenario(
      test::kSmallTraining, {{"system.gpus", "64"}, {"training.micro_batch", "1"}, {"system.oversubscription", "2"}});
  CHECK(make_fabric(b.system).inter_bus.value() == Approx(make_fabric(a.system).inter_bus.value() / 2));
  const auto ds = test::diagnostics_of([] {
    (void)test::scenario(test::kSmallTraining, {{"system.oversubscription", "0.5"}});
  });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].key == "system.oversubscription");
}

TEST_CASE("owning beats renting above purchase / (lifetime_h x (cloud - electricity per hour))", "[cost]") {
  CostInputs in;
  in.job_time = units::hours(1);
  in.cloud_job_time = units::hours(1);
  in.gpus = 1;
  in.cloud_rate = units::usd_per_hour(2.14);
  in.system_power = Watts(450);
  in.electricity = units::usd_per_kwh(0.12);
  in.purchase = Usd(2200);
  in.lifetime = Seconds(5 * units::kSecondsPerYear);
  const double lifetime_h = 5 * 365.25 * 24;
  const double u_star = 2200 / (lifetime_h * (2.14 - 0.45 * 0.12));
  REQUIRE(crossover_utilization(in).has_value());
  CHECK(*crossover_utilization(in) == Approx(u_star));
  const auto curve = breakeven_curve(in, {u_star, 0.15});
  // at the crossover the owned busy hour costs what the rented one does
  CHECK(curve[0].owned_per_busy_hour.value() == Approx(curve[0].cloud_per_busy_hour.value()));
  CHECK(curve[1].owned_per_busy_hour.value() == Approx(2200 / (lifetime_h * 0.15) + 0.45 * 0.12));
  CHECK(units::to_days(*curve[1].breakeven) == Approx(293).margin(1));  // Dettmers' example again
  in.cloud_rate = units::usd_per_hour(0.01);
  CHECK_FALSE(crossover_utilization(in).has_value());
}
