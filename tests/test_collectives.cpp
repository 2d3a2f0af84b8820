// NCCL's per-protocol collective model (physics/collectives.cpp, specs/comm/nccl.toml).
#include "helpers.hpp"

using namespace gpusim;
using physics::Algorithm;
using physics::Collective;
using physics::collective_cost;
using physics::Fabric;
using physics::make_fabric;

namespace {

hardware::System system_of(const std::string& gpu, int gpus) {
  return scenario::make_system(test::catalog(), gpu, gpus);
}

const physics::ProtocolCost& protocol(const Fabric& f, hardware::Protocol p) {
  for (const auto& c : f.protocols) {
    if (c.protocol == p) {
      return c;
    }
  }
  FAIL("protocol not enabled");
  return f.protocols.front();
}

}  // namespace

TEST_CASE("protocols take the library's latencies and the link's bus bandwidth times their payload share",
          "[comm][nccl]") {
  const hardware::System sys = system_of("a100-sxm4-80gb", 8);
  const Fabric f = make_fabric(sys);
  const hardware::CommLibrary& lib = sys.comm;
  const hardware::Efficiency& e = sys.gpu.efficiency;
  const double bus = sys.gpu.peer_bandwidth.value() * e.peer_link;  // Simple: link x ring efficiency
  REQUIRE(f.protocols.size() == 3);                                 // NVLink: LL, LL128 and Simple
  const auto& ll = protocol(f, hardware::Protocol::kLL);
  const auto& ll128 = protocol(f, hardware::Protocol::kLL128);
  const auto& simple = protocol(f, hardware::Protocol::kSimple);
  CHECK(simple.intra_bus.value() == Approx(bus));
  // LL carries half the bus, capped per architecture (NCCL's llMaxBws)
  const auto& ll_spec = lib.protocol(hardware::Protocol::kLL);
  CHECK(ll.intra_bus.value() ==
        Approx(std::min(0.5 * bus, ll_spec.cap[static_cast<std::size_t>(hardware::Arch::kAmpere)]->value())));
  CHECK(ll128.intra_bus.value() == Approx(bus * e.ll128.value()));
  CHECK(ll.base == lib.protocol(hardware::Protocol::kLL).base_latency);
  CHECK(ll.intra_hop == ll_spec.hop_nvlink);
  // Simple's hop carries the calibrated handshake on top of the library's
  CHECK(simple.intra_hop.value() ==
        Approx((lib.protocol(hardware::Protocol::kSimple).hop_nvlink + e.simple_step).value()));
}

TEST_CASE("a collective takes the fastest protocol: LL for small messages, Simple for large", "[comm][nccl]") {
  const hardware::System sys = system_of("a100-sxm4-80gb", 8);
  const Fabric f = make_fabric(sys);
  const int n = 8;
  const double factor = 2.0 * (n - 1) / n;
  auto time_of = [&](hardware::Protocol p, double bytes) {
    const auto& c = protocol(f, p);
    // base + 2(n-1) hops + 2(n-1)/n S / B + the call's fixed cost
    return c.base.value() + 2.0 * (n - 1) * c.intra_hop.value() + factor * bytes / c.intra_bus.value() + f.call.value();
  };
  const double small = 8 * units::kKibi;
  const physics::CollectiveCost s = collective_cost(f, Collective::kAllReduce, Bytes(small), n);
  CHECK(s.route == physics::Route::kRing);
  CHECK(s.protocol == hardware::Protocol::kLL);
  CHECK(s.time.value() == Approx(time_of(hardware::Protocol::kLL, small)));
  const double large = 1.0 * units::kGibi;
  const physics::CollectiveCost l = collective_cost(f, Collective::kAllReduce, Bytes(large), n);
  CHECK(l.route == physics::Route::kRing);
  CHECK(l.protocol == hardware::Protocol::kSimple);
  CHECK(l.time.value() == Approx(time_of(hardware::Protocol::kSimple, large)));
  for (const double bytes : {small, 1.0 * units::kMebi, 16.0 * units::kMebi, large}) {
    INFO(bytes);
    const double best = std::min({time_of(hardware::Protocol::kLL, bytes), time_of(hardware::Protocol::kLL128, bytes),
                                  time_of(hardware::Protocol::kSimple, bytes)});
    CHECK(collective_cost(f, Collective::kAllReduce, Bytes(bytes), n).time.value() == Approx(best));
  }
}

TEST_CASE("LL128 runs over NVLink only", "[comm][nccl]") {
  const Fabric pcie = make_fabric(system_of("rtx4090", 1));  // PCIe: no NVLink between the GPUs
  for (const auto& c : pcie.protocols) {
    CHECK(c.protocol != hardware::Protocol::kLL128);
  }
  CHECK(pcie.protocols.size() == 2);
}

TEST_CASE("NVLS all-reduce costs latency + 2(n-1)/n S / B + rounds x round time, its chunks shrinking below 64 rounds",
          "[comm][nccl]") {
  const hardware::System sys = system_of("h100-sxm5-80gb", 8);
  const Fabric f = make_fabric(sys);
  REQUIRE(f.nvls_bus.value() > 0);
  const int n = 8;
  const double ops = f.nvls_channels * n;  // chunks in flight: channels x GPUs
  // 1 GiB is 64 rounds of the full 128 KiB chunk: it keeps the full chunk
  CHECK(physics::nvls_rounds(f, units::gibibytes(1), n) == Approx(units::kGibi / (ops * 128 * units::kKibi)));
  // 16 MiB is below 8 rounds of 64 KiB chunks: NCCL drops to 32 KiB
  const Bytes mid(16 * units::kMebi);
  CHECK(physics::nvls_rounds(f, mid, n) == Approx(mid.value() / (ops * 32 * units::kKibi)));
  const physics::CollectiveCost c = collective_cost(f, Collective::kAllReduce, mid, n, Algorithm::kNvls);
  CHECK(c.route == physics::Route::kNvls);
  CHECK(c.time.value() == Approx(f.nvls_latency.value() + 2.0 * (n - 1) / n * mid.value() / f.nvls_bus.value() +
                                 physics::nvls_rounds(f, mid, n) * f.nvls_round.value() + f.call.value()));
  // a ring-only run (NCCL_NVLS_ENABLE=0) never takes it; reduce-scatter and all-gather never do
  CHECK(collective_cost(f, Collective::kAllReduce, mid, n, Algorithm::kRing).route == physics::Route::kRing);
  CHECK(collective_cost(f, Collective::kAllGather, mid, n).route == physics::Route::kRing);
}

TEST_CASE("a collective over one GPU costs nothing, not even the call", "[comm][nccl]") {
  const Fabric f = make_fabric(system_of("h100-sxm5-80gb", 8));
  CHECK(collective_cost(f, Collective::kAllReduce, units::gibibytes(1), 1).time.value() == 0);
}

TEST_CASE("an unknown collective library is an error naming the known ones", "[comm][errors]") {
  const auto ds = test::diagnostics_of([] {
    (void)test::scenario(std::string(test::kSmallTraining), {{"system.collectives", "\"mscclpp\""}});
  });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].key == "system.collectives");
  CHECK(ds[0].message == "unknown collective library \"mscclpp\" (known: nccl, rccl)");
}
