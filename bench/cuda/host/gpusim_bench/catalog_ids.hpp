// Mapping from the device name CUDA reports (cudaDeviceProp::name, also what nvidia-smi prints)
// to the id of the GPU's spec file in gpusim's catalog (specs/gpus/<id>.toml).
#pragma once

#include <string>
#include <string_view>

namespace gpusim::bench {

// Catalog id of a device name, or "" when the name is not one the catalog describes (the tool
// then requires --gpu-id). Matching is exact after normalising: case, runs of spaces, and the
// "NVIDIA " / "Tesla " vendor words older drivers leave out or add. Names of other variants
// (a "GeForce RTX 4090 D", an "L40", an "H200 NVL") deliberately map to "" rather than to the
// nearest catalog entry.
std::string catalog_id_for_device(std::string_view device_name);

}  // namespace gpusim::bench
