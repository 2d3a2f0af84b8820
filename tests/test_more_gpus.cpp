// AMD Instinct GPUs on an Infinity Fabric (xGMI) mesh with RCCL, the GB200 NVL72 NVLink domain
// and fp4 on Blackwell (specs/gpus/mi300x.toml, mi250x.toml, gb200.toml; specs/links/xgmi-*.toml;
// specs/comm/rccl.toml; physics/collectives.cpp).
#include "helpers.hpp"

using namespace gpusim;
using physics::Collective;
using physics::Fabric;
using physics::make_fabric;

namespace {

hardware::System system_of(const std::string& gpu, int gpus, int gpus_per_node = 0) {
  return scenario::make_system(test::catalog(), gpu, gpus, gpus_per_node);
}

double tflops(const hardware::GpuSpec& g, DType d) { return g.peak_for(d).value() / 1e12; }

// Llama-3-70B served with a given weight format on a given GPU.
std::string seventy_b_on(const std::string& gpu, int gpus, const std::string& format) {
  return R"(name = "70b"
[system]
gpu = ")" +
         gpu + R"("
gpus = )" +
         std::to_string(gpus) +
         R"(
[model]
preset = "llama3-70b"
[parallelism]
tensor = )" +
         std::to_string(gpus) +
         R"(
[inference]
batch = 8
prompt_tokens = 1024
output_tokens = 128
weight_precision = ")" +
         format + R"("
[runtime]
name = "vllm"
)";
}

}  // namespace

TEST_CASE("MI300X peaks are AMD's dense figures: CUs x FLOP per clock x 2.1 GHz, not the sparse twins",
          "[catalog][amd]") {
  const hardware::GpuSpec g = test::catalog().gpu("mi300x");
  CHECK(g.arch == hardware::Arch::kCdna3);
  const double cu = g.sm_count;
  const double clock_ghz = g.boost_clock.value() / 1e9;
  // 304 CUs x 2048 dense FP16 FLOP per clock per CU x 2.1 GHz = 1307.4 TFLOP/s; fp8 twice that
  CHECK(tflops(g, DType::kFp16) == Approx(cu * 2048 * clock_ghz / 1e3).epsilon(1e-3));
  CHECK(tflops(g, DType::kFp8) == Approx(2 * tflops(g, DType::kFp16)).epsilon(1e-3));
  CHECK(tflops(g, DType::kFp16) < 2000);  // 2614.9 is the structured-sparsity headline
  CHECK_FALSE(g.supports(DType::kFp4));   // CDNA3 has no fp4 matrix format
  // The peer bandwidth is the sum over the seven links, one per peer.
  const hardware::LinkSpec l = test::catalog().link(g.peer_link);
  CHECK(l.kind == hardware::LinkKind::kXgmi);
  CHECK(g.peer_bandwidth.value() == Approx(l.mesh_links * 64e9));
}

TEST_CASE("an MI250X GPU is one GCD: half the package's peaks, memory and power", "[catalog][amd]") {
  const hardware::GpuSpec g = test::catalog().gpu("mi250x");
  CHECK(g.arch == hardware::Arch::kCdna2);
  // package: 383 TFLOP/s fp16, 128 GB at 3.2 TB/s, 560 W peak board power
  CHECK(tflops(g, DType::kFp16) == Approx(383.0 / 2));
  CHECK(g.memory_capacity.value() == Approx(128e9 / 2));
  CHECK(g.memory_bandwidth.value() == Approx(3.2e12 / 2));
  CHECK(g.tdp.value() == Approx(560.0 / 2));
  CHECK_FALSE(g.supports(DType::kFp8));
  CHECK_FALSE(g.supports(DType::kTf32));
}

TEST_CASE("AMD GPUs default to RCCL over their xGMI mesh, NVIDIA GPUs to NCCL", "[comm][amd]") {
  const hardware::System mi = system_of("mi300x", 8);
  CHECK(mi.comm.id == "rccl");
  CHECK(mi.intra_node.kind == hardware::LinkKind::kXgmi);
  CHECK(mi.inter_node.id == "ib-ndr");
  CHECK(system_of("h100-sxm5-80gb", 8).comm.id == "nccl");
  // RCCL enables LL128 only on gfx90a with a platform model that opts in: not by default.
  const Fabric f = make_fabric(mi);
  REQUIRE(f.protocols.size() == 2);
  for (const auto& p : f.protocols) {
    CHECK(p.protocol != hardware::Protocol::kLL128);
  }
  CHECK(f.nvls_bus.value() == 0);  // no switch, no in-switch reduction
}

TEST_CASE("on a full mesh k GPUs ring over k - 1 links: B(k) = min(k - 1, links) x link x efficiency", "[comm][amd]") {
  const hardware::System sys = system_of("mi300x", 8);
  const Fabric f = make_fabric(sys);
  const double links = sys.intra_node.mesh_links;
  const double link = sys.gpu.peer_bandwidth.value() / links;  // 64 GB/s per direction
  const double eff = sys.gpu.efficiency.peer_link;
  CHECK(f.mesh_links == 7);
  CHECK(f.ring_bus(8).value() == Approx(7 * link * eff));
  CHECK(f.ring_bus(4).value() == Approx(3 * link * eff));
  CHECK(f.ring_bus(2).value() == Approx(1 * link * eff));
  // A pair copies over its one link; a switch (H100) gives a pair the whole port.
  CHECK(f.intra_p2p.value() == Approx(link * sys.intra_node.efficiency));
  CHECK(f.peers_bandwidth(7).value() == Approx(7 * f.intra_p2p.value()));
  const Fabric h100 = make_fabric(system_of("h100-sxm5-80gb", 8));
  CHECK(h100.ring_bus(2).value() == h100.ring_bus(8).value());
  // A large all-reduce over 2 GPUs is 7x slower in bus bandwidth than over 8 (Simple, S/B dominates).
  const Bytes s(4.0 * (1ull << 30));
  auto busbw = [&](int n) {
    const Seconds t = physics::collective_time(f, Collective::kAllReduce, s, n);
    return s.value() * physics::ring_cost(Collective::kAllReduce, n).bytes_factor / t.value();
  };
  CHECK(busbw(8) / busbw(2) == Approx(7.0).epsilon(0.03));
}

TEST_CASE("measured MI300X all-reduce bus bandwidth at 2 and 8 GPUs within 10 percent (rows AM07, AM08)",
          "[comm][amd][measured]") {
  const Fabric f = make_fabric(system_of("mi300x", 8));
  const Bytes s(4.0 * (1ull << 30));
  auto busbw = [&](int n) {
    const Seconds t = physics::collective_time(f, Collective::kAllReduce, s, n);
    return s.value() * physics::ring_cost(Collective::kAllReduce, n).bytes_factor / t.value() / 1e9;
  };
  CHECK(busbw(8) == Approx(312.912).epsilon(0.10));  // stas00 all_reduce_bench, 8 GPUs [AM07]
  CHECK(busbw(2) == Approx(47.671).epsilon(0.10));   // 2 GPUs: one Infinity Fabric link [AM08]
}

TEST_CASE("vLLM's one-shot all-reduce on a mesh reads each peer over its own link", "[serving][comm][amd]") {
  const Fabric f = make_fabric(system_of("mi300x", 8));
  const workload::ServingEngine engine = test::catalog().runtime("vllm").serving;
  const Bytes small(64 * 1024.0);
  const double alpha = engine.allreduce_latency.value();
  // one-shot over n GPUs: alpha + (n - 1) S / ((n - 1) x one link) = alpha + S / link
  for (const int n : {2, 4, 8}) {
    CHECK(physics::serving_allreduce_time(f, engine, small, n).value() ==
          Approx(alpha + small.value() / f.intra_p2p.value()));
  }
}

TEST_CASE("a 72-GPU job on a GB200 NVL72 rack keeps every collective on NVLink", "[comm][nvl72]") {
  const hardware::System rack = system_of("gb200", 72, 72);
  const Fabric f = make_fabric(rack);
  CHECK(f.nodes == 1);
  CHECK(f.nvlink);
  CHECK(f.nvls_bus.value() > 0);     // NVLink switches reduce in the switch
  const Bytes grads(70e9 * 2 / 72);  // a bf16 gradient shard of a 70B model
  const auto rs = physics::collective_cost(f, Collective::kReduceScatter, grads * 72.0, 72);
  // one node: a ring over NVLink, (n - 1)/n S / B plus its hops; no NIC term
  const double ring_floor = (grads * 72.0).value() * 71.0 / 72 / f.intra_bus.value();
  CHECK(rs.time.value() >= ring_floor);
  CHECK(rs.time.value() < 1.2 * ring_floor);
  // The same 72 GPUs as 18 four-GPU nodes: the 1/4 shard crosses 18 nodes over each GPU's NIC
  // share, (1/4)(17/18) S / B_nic, which alone exceeds the whole in-rack reduce-scatter.
  const Fabric trays = make_fabric(system_of("gb200", 72, 4));
  CHECK(trays.nodes == 18);
  const double across = (grads * 72.0).value() / 4 * 17.0 / 18 / trays.inter_bus.value();
  CHECK(physics::collective_time(trays, Collective::kReduceScatter, grads * 72.0, 72).value() >= across);
  CHECK(across > 3 * rs.time.value());
}

TEST_CASE("a GB200 scenario's node is its NVL72 rack unless it says otherwise", "[scenario][nvl72]") {
  CHECK(system_of("gb200", 144).gpus_per_node == 72);  // the spec's peer_link.domain
  CHECK(system_of("gb200", 144).nodes() == 2);
  CHECK(system_of("gb200", 8, 4).gpus_per_node == 4);
  CHECK(system_of("b200", 16).gpus_per_node == 8);  // an HGX baseboard
  // 100 GPUs do not fill whole racks: the loader says so
  const auto d = test::diagnostics_of([] { (void)system_of("gb200", 100); });
  REQUIRE(d.size() == 1);
  CHECK(d[0].message.find("multiple of gpus_per_node (72)") != std::string::npos);
}

TEST_CASE("fp4 peaks are the dense halves of Blackwell's sparse headlines", "[catalog][fp4]") {
  // B200 18 PF, GB200 20 PF fp4 with sparsity; RTX 5090 3352 "AI TOPS" sparse, not halved by
  // GeForce's FP32-accumulate rule
  CHECK(tflops(test::catalog().gpu("b200"), DType::kFp4) == Approx(18000.0 / 2));
  CHECK(tflops(test::catalog().gpu("gb200"), DType::kFp4) == Approx(20000.0 / 2));
  CHECK(tflops(test::catalog().gpu("rtx5090"), DType::kFp4) == Approx(3352.0 / 2));
  for (const char* id : {"h100-sxm5-80gb", "a100-sxm4-80gb", "rtx4090", "mi300x"}) {
    CHECK_FALSE(test::catalog().gpu(id).supports(DType::kFp4));
  }
}

TEST_CASE("nvfp4 weights are 4.5 bits and run fp4 GEMMs on Blackwell", "[serving][fp4]") {
  const Scenario sc = test::scenario(seventy_b_on("b200", 2, "nvfp4"));
  const workload::Inference& inf = *sc.job.inference;
  CHECK(inf.weight_precision == DType::kFp4);
  CHECK(inf.weight_bytes == Approx((4.0 + 8.0 / 16) / 8));  // an fp8 scale per 16 values
  CHECK(test::scenario(seventy_b_on("b200", 2, "mxfp4")).job.inference->weight_bytes ==
        Approx((4.0 + 8.0 / 32) / 8));  // an 8-bit scale per 32 values
  // Half the weight bytes of fp8: a memory-bound decode step is faster.
  const step::Evaluation fp4 = step::evaluate(sc);
  const step::Evaluation fp8 = step::evaluate(test::scenario(seventy_b_on("b200", 2, "fp8")));
  CHECK(fp4.step.time < fp8.step.time);
}

TEST_CASE("a GPU without fp4 tensor cores refuses an fp4 weight format, naming the GPU and the format",
          "[serving][fp4][errors]") {
  const auto d = test::diagnostics_of([] { (void)test::scenario(seventy_b_on("h100-sxm5-80gb", 4, "nvfp4")); });
  REQUIRE(d.size() == 1);
  CHECK(d[0].key == "inference.weight_precision");
  CHECK(d[0].message.find("H100") != std::string::npos);
  CHECK(d[0].message.find("fp4") != std::string::npos);
  CHECK(d[0].message.find("nvfp4") != std::string::npos);
  const auto mi = test::diagnostics_of([] { (void)test::scenario(seventy_b_on("mi300x", 1, "mxfp4")); });
  REQUIRE(mi.size() == 1);
  CHECK(mi[0].message.find("MI300X") != std::string::npos);
}

TEST_CASE("mesh_links belongs to xGMI links only, and an xGMI link must give it", "[catalog][errors][amd]") {
  auto link_errors = [](const std::string& kind, const std::string& extra) {
    Catalog c = test::catalog();
    c.add_file(catalog::SpecKind::kLink, "x", catalog::SpecFile{"specs/links/x.toml", R"(name = "x"
kind = ")" + kind + R"("
bandwidth = "448 GB/s"
latency = "1 us"
efficiency = 0.8
)" + extra});
    return test::diagnostics_of([&] { (void)c.link("x"); });
  };
  const auto on_nvlink = link_errors("nvlink", "mesh_links = 7\n");
  REQUIRE(on_nvlink.size() == 1);
  CHECK(on_nvlink[0].key == "mesh_links");
  CHECK(on_nvlink[0].pos.line == 6);
  const auto missing = link_errors("xgmi", "");
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].key == "mesh_links");
  CHECK(link_errors("xgmi", "mesh_links = 0\n").size() == 1);  // a mesh has at least one link
  CHECK(link_errors("xgmi", "mesh_links = 7\n").empty());
}
