// Hardware: validated GPU and link specs and the system they form, plain structs in SI units.
// The catalog builds them from specs/gpus, specs/links and specs/arch (formats in specs/README.md);
// the scenario loader resolves a System with its defaults. Nothing here knows about TOML.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "gpusim/base.hpp"
#include "gpusim/units.hpp"

namespace gpusim::hardware {

enum class Arch { kVolta, kAmpere, kAda, kHopper, kBlackwell };
inline constexpr base::Named<Arch> kArchNames[] = {{Arch::kVolta, "volta"},
                                                   {Arch::kAmpere, "ampere"},
                                                   {Arch::kAda, "ada"},
                                                   {Arch::kHopper, "hopper"},
                                                   {Arch::kBlackwell, "blackwell"}};
constexpr const char* to_string(Arch a) { return base::name_in(kArchNames, a); }

enum class FormFactor { kSxm, kPcie };
inline constexpr base::Named<FormFactor> kFormFactorNames[] = {{FormFactor::kSxm, "sxm"}, {FormFactor::kPcie, "pcie"}};

enum class LinkKind { kPcie, kNvlink, kInfiniband, kEthernet };
inline constexpr base::Named<LinkKind> kLinkKindNames[] = {{LinkKind::kPcie, "pcie"},
                                                           {LinkKind::kNvlink, "nvlink"},
                                                           {LinkKind::kInfiniband, "infiniband"},
                                                           {LinkKind::kEthernet, "ethernet"}};

struct Efficiency {
  double gemm = 0;                 // large GEMM: sustained / dense peak (max achievable matmul)
  std::optional<double> gemm_fp8;  // the same for fp8 GEMMs where it differs (B04); default: gemm
  double attention = 0;            // flash-attention forward+backward: sustained / dense peak
  double dram = 0;                 // stream bandwidth / paper bandwidth
  double l2 = 0;                   // L2-resident bandwidth / spec l2_bandwidth
  double host_link = 0;            // host<->device copy / PCIe per-direction bandwidth
  double peer_link = 0;            // collective bus bandwidth / peer link per-direction bandwidth
  double comm_overlap = 0;         // fraction of data-parallel gradient traffic hidden behind backward
  double training_overhead = 0;    // framework time outside kernels, as a fraction of kernel time
  Seconds kernel_overhead;         // GPU-side gap between dependent kernels
  Seconds launch_eager;            // host time per eager kernel launch
  Seconds launch_graph;            // host time per kernel replayed from a CUDA graph
  Bytes gemv_inflight_per_sm;      // memory-level parallelism of skinny (GEMV-like) kernels, per SM
  Seconds gemm_latency;            // fixed time per GEMM kernel (pipeline fill and drain); 0 when not calibrated
  Seconds peer_latency;            // collective latency per ring step inside a node; 0 = the link spec's latency
  int gemm_tile_m = 128;           // output tile of the architecture's best GEMM kernels (wave quantization)
  int gemm_tile_n = 128;
};

// Board power while busy: idle + activity * (TDP - idle), activity per kind of work.
struct PowerActivity {
  double gemm = 0;    // tensor-core compute-bound kernels
  double memory = 0;  // DRAM-bound kernels
  double simt = 0;    // CUDA-core (non-tensor) compute-bound kernels, e.g. fp32 GEMMs without TF32
  double idle = 0;    // waiting on communication, input or the host
};

struct GpuSpec {
  std::string id;
  std::string name;
  Arch arch = Arch::kAmpere;
  FormFactor form_factor = FormFactor::kPcie;
  int sm_count = 0;
  Hertz boost_clock;
  std::array<std::optional<FlopPerSecond>, units::kDTypeCount> peak{};  // dense; nullopt = unsupported

  std::string memory_type;
  Bytes memory_capacity;
  BytesPerSecond memory_bandwidth;
  Seconds memory_latency;
  Bytes l2_size;
  BytesPerSecond l2_bandwidth;
  Seconds l2_latency;
  Bytes l1_per_sm;
  Seconds l1_latency;
  Bytes shared_per_sm;
  Bytes registers_per_sm;

  int pcie_gen = 4;
  int pcie_lanes = 16;
  std::string peer_link;          // specs/links id or "none"
  BytesPerSecond peer_bandwidth;  // per direction
  bool p2p_over_pcie = false;

  Watts tdp;
  Watts idle_power;
  PowerActivity activity;
  Bytes memory_reserved;     // CUDA context and library workspaces
  double fragmentation = 0;  // allocator overhead as a fraction of live tensors
  Usd purchase;
  std::string purchase_date;
  UsdPerSecond cloud_rate;
  std::string cloud_date;

  Efficiency efficiency;
  std::vector<std::string> sources;
  std::vector<std::string> assumptions;
  std::string origin;  // file the spec came from

  [[nodiscard]] bool supports(DType d) const { return peak[static_cast<std::size_t>(d)].has_value(); }
  [[nodiscard]] FlopPerSecond peak_for(DType d) const { return peak[static_cast<std::size_t>(d)].value(); }
  [[nodiscard]] bool has_nvlink() const { return peer_link != "none"; }
};

struct LinkSpec {
  std::string id;
  std::string name;
  LinkKind kind = LinkKind::kPcie;
  BytesPerSecond bandwidth;  // per direction
  Seconds latency;
  double efficiency = 1.0;  // achievable fraction of bandwidth for bulk transfers
  // PCIe only: GPUs without peer-to-peer stage every transfer through host memory.
  double staged_efficiency = 0;
  Seconds staged_latency;
  std::vector<std::string> sources;
  std::string origin;
};

// The machines a job runs on: `gpus` GPUs of one kind in nodes of `gpus_per_node`.
struct System {
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
  [[nodiscard]] const std::string& gpu_id() const { return gpu.id; }
};

}  // namespace gpusim::hardware
