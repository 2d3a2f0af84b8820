// Measured results (DESIGN §8): the rows `gpusim validate` compares against and `gpusim
// calibrate` fits to. Loaded from measurement TOML files (gpusim-bench output or
// measurements/*.toml); every problem is reported with file:line:col, key and value.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "gpusim/spec/catalog.hpp"
#include "gpusim/spec/diagnostics.hpp"
#include "gpusim/units/parse.hpp"

namespace gpusim {

enum class Benchmark {
  kStreamCopy,
  kStreamTriad,
  kStreamRead,
  kL2Bandwidth,
  kLatencyL1,
  kLatencyL2,
  kLatencyDram,
  kGemm,
  kAttention,
  kLaunchOverhead,
  kH2d,
  kD2h,
  kP2p,
  kAllreduce,
  kReduceScatter,
  kAllGather,
  kPower,
  kScenario,
};

const char* to_string(Benchmark b);
// The summary category of a benchmark: "bandwidth", "latency", "gemm", "attention", "launch",
// "host link", "communication", "power", "end-to-end".
const char* category_of(Benchmark b);

// Whether calibration may use a row (fit) or the row is held out as evidence (check).
enum class Role { kFit, kCheck };

struct Measurement {
  std::string id;
  std::string file;  // the measurement file
  SourcePos pos;     // of the [[measurement]] entry
  std::string gpu;   // catalog id
  int gpus = 1;
  Benchmark benchmark = Benchmark::kStreamCopy;
  // The measured figure in SI units (B/s, FLOP/s, s, W, or the report key's unit for
  // scenarios) or, for latencies given in cycles, in cycles (value_in_cycles).
  double value = 0;
  bool value_in_cycles = false;
  std::optional<Bytes> bytes;
  std::optional<DType> dtype;
  double m = 0, n = 0, k = 0;
  double batch = 0, seq_len = 0, heads = 0, head_dim = 0;
  bool causal = false;
  bool graph = false;
  bool pinned = true;
  bool bidirectional = false;
  std::string algorithm = "auto";
  std::optional<double> intensity;  // FLOP per byte (power rows)
  std::string kernel;
  std::string scenario;  // resolved path of the scenario file
  std::string metric;    // report key for scenario rows
  std::string conditions;
  std::string source;
  std::string note;
  bool scored = true;
  Role role = Role::kCheck;
};

// GPUs of a measured multi-GPU row share one box up to 8 of them (PCIe workstations and bridged
// pairs included), whatever a scenario's default node size would be.
inline int box_size(int gpus) { return gpus <= 8 ? std::max(1, gpus) : 8; }

// Loads files and directories (every *.toml directly inside a directory). Throws InputError with
// all problems of all files.
std::vector<Measurement> load_measurements(const Catalog& catalog, const std::vector<std::string>& paths);

}  // namespace gpusim
