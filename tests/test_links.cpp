// Links that join a bounded number of GPUs (specs/links/*.toml `joins`): an NVLink bridge carries a
// pair's traffic, and a node of more cards than it joins rings over PCIe (physics/collectives.cpp).
#include "helpers.hpp"

using namespace gpusim;
using catalog::SpecFile;
using gpusim::test::diagnostics_of;

namespace {

physics::Fabric fabric_of(int gpus) {
  const Scenario sc = test::scenario(test::kSmallTraining, {{"system.gpu", "\"a100-pcie-80gb\""},
                                                            {"system.gpus", std::to_string(gpus)},
                                                            {"system.gpus_per_node", std::to_string(gpus)},
                                                            {"system.intra_node", "\"nvlink-bridge\""}});
  return physics::make_fabric(sc.system);
}

}  // namespace

TEST_CASE("a bridge joins a pair over NVLink, and a larger node rings over PCIe", "[links]") {
  const hardware::LinkSpec bridge = test::catalog().link("nvlink-bridge");
  REQUIRE(bridge.joins == 2);
  const physics::Fabric pair = fabric_of(2);
  CHECK(pair.nvlink);
  CHECK(pair.intra_p2p.value() == Approx(bridge.bandwidth.value() * bridge.efficiency));
  const physics::Fabric four = fabric_of(4);
  CHECK_FALSE(four.nvlink);
  CHECK(four.intra_bus < pair.intra_bus);             // PCIe 4.0 x16 against the bridge's 300 GB/s
  CHECK(test::catalog().link("nvlink4").joins == 0);  // a switched NVLink joins the whole node
}

TEST_CASE("a link that joins fewer than two GPUs is refused with its position and range", "[links][errors]") {
  Catalog c = test::catalog();
  c.add_file(SpecKind::kLink, "one", SpecFile{"specs/links/one.toml", R"(name = "one"
kind = "nvlink"
bandwidth = "50 GB/s"
latency = "1 us"
efficiency = 0.8
joins = 1
)"});
  const auto ds = diagnostics_of([&] { (void)c.link("one"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].pos.line == 6);
  CHECK(ds[0].key == "joins");
  CHECK_THAT(ds[0].message, Catch::Contains("2") && Catch::Contains("1"));
}
