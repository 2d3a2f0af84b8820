// Collectives of GPUs without peer access, staged through host memory by NCCL's SHM transport
// [nccl-env-docs]: every byte is written to the host's memory and read back, so the GPUs of a box
// share its memory bandwidth. Expected values are derived from the host spec.
#include <algorithm>

#include "helpers.hpp"

using namespace gpusim;

TEST_CASE("host-staged collectives share the host's memory bandwidth among the box's GPUs", "[collectives][pcie]") {
  const char* box = R"(name = "box"
[system]
gpu = "rtx4090"
gpus = 4
gpus_per_node = 4
host = "desktop-ddr5"
[model]
preset = "llama2-7b"
[training]
tokens = 1e6
seq_len = 2048
global_batch = 8
micro_batch = 2
)";
  const Scenario desk = test::scenario(box);
  const physics::Fabric f = physics::make_fabric(desk.system);
  REQUIRE(f.host_staged);
  const hardware::HostSpec& host = desk.system.host;
  const double staged = host.memory_bandwidth.value() * host.memory_efficiency / 2.0;
  CHECK(f.staged_host.value() == Approx(staged));
  // Four GPUs each writing and reading every byte: B <= B_host * eta / (2 * 4), below the link's rate.
  const double link = f.intra_bus.value();
  REQUIRE(staged / 4.0 < link);
  CHECK(f.ring_bus(4).value() == Approx(staged / 4.0));
  CHECK(f.ring_bus(2).value() == Approx(std::min(link, staged / 2.0)));
  // The all-gather over the four GPUs slows down with it; a workstation's four channels lift it.
  const Scenario work = test::scenario(box, {{"system.host", "\"workstation-ddr5\""}});
  const physics::Fabric fw = physics::make_fabric(work.system);
  const double ws = work.system.host.memory_bandwidth.value() * work.system.host.memory_efficiency / 2.0;
  CHECK(fw.ring_bus(4).value() == Approx(std::min(fw.intra_bus.value(), ws / 4.0)));
  const Bytes size(1e9);
  CHECK(physics::collective_time(f, physics::Collective::kAllGather, size, 4) >
        physics::collective_time(fw, physics::Collective::kAllGather, size, 4));
  // NVLink and peer-to-peer fabrics are not staged: no host cap.
  const Scenario h100 = test::scenario(box, {{"system.gpu", "\"h100-sxm5-80gb\""}});
  const physics::Fabric fn = physics::make_fabric(h100.system);
  CHECK_FALSE(fn.host_staged);
  CHECK(fn.ring_bus(4).value() == Approx(fn.intra_bus.value()));
}
