// The user's question (DESIGN §4), validated and with every default resolved. Built by
// load_scenario from a TOML file plus command-line overrides; nothing downstream sees TOML.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusim/spec/catalog.hpp"
#include "gpusim/spec/hardware.hpp"
#include "gpusim/units/units.hpp"
#include "gpusim/workload/model_shape.hpp"

namespace gpusim {

enum class Optimizer { kAdamW, kSgd, kAdafactor };
enum class Recompute { kNone, kSelective, kFull };

struct SystemConfig {
  std::string gpu_id;
  GpuSpec gpu;
  int gpus = 1;
  int gpus_per_node = 1;
  LinkSpec intra_node;  // GPU-to-GPU inside a node (NVLink, or PCIe)
  LinkSpec inter_node;  // NIC between nodes
  LinkSpec pcie;        // the GPU's host link (PCIe generation x16): host copies, and GPU-to-GPU without NVLink
  int nics_per_node = 1;
  double oversubscription = 1.0;  // of the inter-node fabric (2 = a 2:1 tapered fat tree)
  Watts power_limit;              // default: TDP
  [[nodiscard]] int nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
};

struct TrainingConfig {
  double tokens = 0;
  std::int64_t seq_len = 0;
  std::int64_t global_batch = 0;  // sequences per optimizer step
  std::int64_t micro_batch = 1;   // sequences per GPU per forward/backward
  DType precision = DType::kBf16;
  Optimizer optimizer = Optimizer::kAdamW;
  Recompute recompute = Recompute::kNone;
  bool flash_attention = true;
  bool cuda_graphs = false;  // kernels replayed from a CUDA graph instead of launched eagerly
};

struct InferenceConfig {
  std::int64_t batch = 1;
  bool batch_max = false;  // batch = "max": as many concurrent sequences as the memory holds
  std::int64_t prompt_tokens = 512;
  std::int64_t output_tokens = 128;
  DType weight_precision = DType::kFp16;  // int8/int4 are stored formats, computed in fp16
  double weight_bytes = 2;                // bytes per weight as stored
  double kv_bytes = 2;                    // bytes per KV-cache element
  bool cuda_graphs = false;               // decode steps replayed from a CUDA graph
};

struct ParallelConfig {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  int zero = 0;
  bool sequence = false;
  int virtual_stages = 1;
  bool uneven_stages = false;  // allow stages with different layer counts (the slowest holds ⌈L/p⌉)
};

struct InputConfig {
  Bytes sample_bytes;
  Seconds cpu_time_per_sample;  // per core
  int workers = 1;              // per node
  BytesPerSecond storage_bandwidth;
  bool pinned_memory = true;
};

struct CostConfig {
  UsdPerJoule electricity;
  double utilization = 0;   // fraction of the year the owned machine is busy
  UsdPerSecond cloud_rate;  // per GPU-hour, of the cloud GPU
  std::string cloud_gpu;    // the GPU rented in the cloud (default: the same GPU)
  Usd purchase;             // the whole owned system
  Watts host_power;         // per node
  double pue = 1;
  Seconds lifetime;
  KgPerJoule carbon_intensity;
};

struct Scenario {
  std::string name;
  std::string origin;  // file path
  SystemConfig system;
  ModelShape model;
  std::optional<TrainingConfig> training;
  std::optional<InferenceConfig> inference;
  ParallelConfig parallel;
  std::optional<InputConfig> input;
  CostConfig cost;
};

// One `--set KEY=VALUE` override; VALUE is TOML (a bare word is taken as a string).
struct Override {
  std::string key;
  std::string value;
};

// Loads, applies overrides (and --gpu), resolves defaults and validates. Throws InputError with
// every problem found (file:line:col, key, value). `text` is the file's content.
Scenario load_scenario(const Catalog& catalog, const std::string& path, const std::string& text,
                       const std::vector<Override>& overrides = {}, const std::string& gpu_override = "");
// A system of `gpus` GPUs with every [system] default resolved; gpus_per_node 0 = the default.
SystemConfig make_system(const Catalog& catalog, const std::string& gpu, int gpus, int gpus_per_node = 0);
Scenario load_scenario_file(const Catalog& catalog, const std::string& path,
                            const std::vector<Override>& overrides = {}, const std::string& gpu_override = "");

}  // namespace gpusim
