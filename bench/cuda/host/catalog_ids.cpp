// Device name -> catalog id (see catalog_ids.hpp). The names are those the NVIDIA driver reports
// for each board (nvidia-smi --query-gpu=name), listed without the "NVIDIA " prefix.
#include "gpusim_bench/catalog_ids.hpp"

#include <array>
#include <cctype>
#include <utility>

namespace gpusim::bench {
namespace {

std::string normalise(std::string_view name) {
  std::string out;
  bool space = false;
  for (char c : name) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) {
      out += ' ';
      space = false;
    }
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const std::string_view vendor : {"nvidia ", "tesla "}) {
    if (out.rfind(vendor, 0) == 0) {
      out.erase(0, vendor.size());
    }
  }
  return out;
}

// "GeForce RTX 3060" and "GeForce RTX 4060 Ti" are left out: the driver gives the 8 GB boards the
// same names as the 12 GB and 16 GB ones in the catalog, so a name alone cannot tell them apart.
constexpr std::array<std::pair<std::string_view, std::string_view>, 21> kNames{{
    {"h100 80gb hbm3", "h100-sxm5-80gb"},
    {"h100 pcie", "h100-pcie-80gb"},
    {"h100 nvl", "h100-nvl"},
    {"h200", "h200-sxm"},
    {"h800", "h800-sxm5-80gb"},
    {"a100-sxm4-80gb", "a100-sxm4-80gb"},
    {"a100-sxm4-40gb", "a100-sxm4-40gb"},
    {"a100 80gb pcie", "a100-pcie-80gb"},
    {"a100-pcie-40gb", "a100-pcie-40gb"},
    {"geforce rtx 3090", "rtx3090"},
    {"geforce rtx 4090", "rtx4090"},
    {"geforce rtx 5090", "rtx5090"},
    {"rtx 6000 ada generation", "rtx6000-ada"},
    {"l40s", "l40s"},
    {"l4", "l4"},
    {"b200", "b200"},
    {"v100-sxm2-32gb", "v100-sxm2-32gb"},
    {"t4", "t4"},
    {"geforce rtx 2080 ti", "rtx2080ti"},
    {"geforce rtx 4070 ti super", "rtx4070ti-super"},
    {"l40", "l40"},
}};

}  // namespace

std::string catalog_id_for_device(std::string_view device_name) {
  const std::string key = normalise(device_name);
  for (const auto& [name, id] : kNames) {
    if (key == name) {
      return std::string(id);
    }
  }
  return "";
}

}  // namespace gpusim::bench
