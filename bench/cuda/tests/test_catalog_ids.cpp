// Device name -> gpusim catalog id.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "gpusim_bench/catalog_ids.hpp"

using gpusim::bench::catalog_id_for_device;

TEST_CASE("CUDA device names map to catalog ids", "[catalog]") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"},
      {"NVIDIA H100 PCIe", "h100-pcie-80gb"},
      {"NVIDIA H100 NVL", "h100-nvl"},
      {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"},
      {"NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"},
      {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
      {"NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"},
      {"NVIDIA GeForce RTX 4090", "rtx4090"},
      {"NVIDIA GeForce RTX 3090", "rtx3090"},
      {"NVIDIA GeForce RTX 5090", "rtx5090"},
      {"NVIDIA RTX 6000 Ada Generation", "rtx6000-ada"},
      {"NVIDIA L40S", "l40s"},
      {"NVIDIA L4", "l4"},
      {"NVIDIA H200", "h200-sxm"},
      {"NVIDIA H800", "h800-sxm5-80gb"},
      {"NVIDIA B200", "b200"},
      {"Tesla V100-SXM2-32GB", "v100-sxm2-32gb"},
      {"Tesla T4", "t4"},
      {"NVIDIA GeForce RTX 2080 Ti", "rtx2080ti"},
      {"NVIDIA GeForce RTX 4070 Ti SUPER", "rtx4070ti-super"},
      {"NVIDIA L40", "l40"},
  };
  for (const auto& [name, id] : cases) {
    INFO(name);
    CHECK(catalog_id_for_device(name) == id);
  }
}

TEST_CASE("names are matched regardless of case, spacing and vendor word", "[catalog]") {
  CHECK(catalog_id_for_device("  nvidia   h100 80gb hbm3 ") == "h100-sxm5-80gb");
  CHECK(catalog_id_for_device("A100-SXM4-40GB") == "a100-sxm4-40gb");  // drivers before R510
  CHECK(catalog_id_for_device("NVIDIA GEFORCE RTX 4090") == "rtx4090");
}

TEST_CASE("unknown and near-miss names map to no id", "[catalog]") {
  for (const char* name :
       {"", "NVIDIA L40 extra", "NVIDIA GeForce RTX 3060", "NVIDIA GeForce RTX 4060 Ti", "NVIDIA GeForce RTX 4090 D",
        "NVIDIA GeForce RTX 4090 Laptop GPU", "NVIDIA H200 NVL", "NVIDIA H800 PCIe", "NVIDIA A10", "NVIDIA L4 extra",
        "AMD Instinct MI300X", "Tesla V100-PCIE-16GB"}) {
    INFO(name);
    CHECK(catalog_id_for_device(name).empty());
  }
}
