// The built-in catalog: every documented GPU id is present, loads cleanly, and avoids the
// datasheet traps (dense peaks, GeForce FP32-accumulate halving, per-direction link bandwidth).
#include <toml++/toml.h>

#include "helpers.hpp"

using namespace gpusim;
using hardware::GpuSpec;

TEST_CASE("every documented GPU id is in the catalog and validates", "[catalog]") {
  for (const char* id : {"rtx3090",
                         "rtx4090",
                         "rtx5090",
                         "rtx6000-ada",
                         "l40s",
                         "l4",
                         "a100-pcie-40gb",
                         "a100-sxm4-40gb",
                         "a100-sxm4-80gb",
                         "a100-pcie-80gb",
                         "h100-pcie-80gb",
                         "h100-sxm5-80gb",
                         "h100-nvl",
                         "h800-sxm5-80gb",
                         "h200-sxm",
                         "b200",
                         "v100-sxm2-32gb",
                         "t4",
                         "rtx2080ti",
                         "rtx3060-12gb",
                         "rtx4060ti-16gb",
                         "rtx4070ti-super",
                         "l40",
                         "gb200",
                         "mi300x",
                         "mi250x"}) {
    INFO(id);
    REQUIRE(test::catalog().has(SpecKind::kGpu, id));
    const GpuSpec g = test::catalog().gpu(id);
    CHECK(g.memory_bandwidth.value() > 0);
    CHECK(g.efficiency.gemm > 0);
    CHECK(g.idle_power < g.tdp);
  }
  CHECK(test::catalog().check_all().empty());
}

TEST_CASE("GeForce tensor peaks are the halved FP32-accumulate figures", "[catalog][traps]") {
  // [nvidia-ada-whitepaper] App. A: 4090 = 165.2 (FP32 accumulate) vs 330.3 (FP16 accumulate) dense.
  const GpuSpec g4090 = test::catalog().gpu("rtx4090");
  CHECK(g4090.peak_for(DType::kBf16).value() == Approx(165.2e12));
  const GpuSpec a6000ada = test::catalog().gpu("rtx6000-ada");  // same die, not halved
  CHECK(a6000ada.peak_for(DType::kBf16).value() == Approx(364.2e12));
}

TEST_CASE("peaks are dense, not the 2:4 sparse headline", "[catalog][traps]") {
  // [nvidia-h100-whitepaper] Table 1: H100 SXM BF16 989.4 dense (1,979 with 2:4 sparsity).
  CHECK(test::catalog().gpu("h100-sxm5-80gb").peak_for(DType::kBf16).value() == Approx(989.4e12));
  CHECK(test::catalog().gpu("b200").peak_for(DType::kBf16).value() == Approx(2250e12));
}

TEST_CASE("link bandwidths are per direction", "[catalog][traps]") {
  // [nvidia-hopper-indepth]: NVLink 4 900 GB/s counts both directions; 450 per direction.
  CHECK(test::catalog().link("nvlink4").bandwidth.value() == Approx(450e9));
  CHECK(test::catalog().link("pcie4").bandwidth.value() == Approx(31.5e9));
  CHECK(test::catalog().link("ib-ndr").bandwidth.value() == Approx(50e9));
}

TEST_CASE("GPUs without FP8 do not claim it", "[catalog]") {
  CHECK_FALSE(test::catalog().gpu("a100-sxm4-80gb").supports(DType::kFp8));
  CHECK(test::catalog().gpu("h100-sxm5-80gb").supports(DType::kFp8));
  CHECK_FALSE(test::catalog().gpu("v100-sxm2-32gb").supports(DType::kBf16));
}

TEST_CASE("architecture defaults fill efficiency keys a GPU file leaves out", "[catalog][inheritance]") {
  const GpuSpec h100 = test::catalog().gpu("h100-sxm5-80gb");   // no [efficiency] table of its own
  const GpuSpec h100p = test::catalog().gpu("h100-pcie-80gb");  // overrides dram and peer_link (A09, C11)
  const toml::table hopper = toml::parse(test::catalog().file(catalog::SpecKind::kArch, "hopper").text);
  const toml::table pcie = toml::parse(test::catalog().file(catalog::SpecKind::kGpu, "h100-pcie-80gb").text);
  CHECK(h100.efficiency.dram == Approx(hopper["efficiency"]["dram"].value<double>().value()));
  CHECK(h100p.efficiency.dram == Approx(pcie["efficiency"]["dram"].value<double>().value()));
  CHECK(h100p.efficiency.dram != Approx(h100.efficiency.dram));
  CHECK(h100p.efficiency.gemm == h100.efficiency.gemm);
  CHECK(h100p.efficiency.gemm_tile_cycles == h100.efficiency.gemm_tile_cycles);
}
