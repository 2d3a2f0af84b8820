// Hardware: validated GPU and link specs and the system they form, plain structs in SI units.
// The catalog builds them from specs/gpus, specs/links and specs/arch (formats in specs/README.md);
// the scenario loader resolves a System with its defaults. Nothing here knows about TOML.
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "gpusim/base.hpp"
#include "gpusim/units.hpp"

namespace gpusim::hardware {

// NVIDIA generations, then AMD's CDNA data-center generations (MI250X: CDNA2, MI300X: CDNA3).
enum class Arch { kVolta, kTuring, kAmpere, kAda, kHopper, kBlackwell, kCdna2, kCdna3 };
inline constexpr base::Named<Arch> kArchNames[] = {
    {Arch::kVolta, "volta"},   {Arch::kTuring, "turing"},       {Arch::kAmpere, "ampere"}, {Arch::kAda, "ada"},
    {Arch::kHopper, "hopper"}, {Arch::kBlackwell, "blackwell"}, {Arch::kCdna2, "cdna2"},   {Arch::kCdna3, "cdna3"},
};
constexpr const char* to_string(Arch a) { return base::name_in(kArchNames, a); }
constexpr bool is_amd(Arch a) { return a == Arch::kCdna2 || a == Arch::kCdna3; }

enum class FormFactor { kSxm, kPcie };
inline constexpr base::Named<FormFactor> kFormFactorNames[] = {{FormFactor::kSxm, "sxm"}, {FormFactor::kPcie, "pcie"}};
// The market a GPU is sold into, as its vendor places it (GeForce, professional workstation, data
// centre): the class accuracy is reported per, since the three differ in memory (GDDR or HBM),
// links (PCIe or NVLink/Infinity Fabric) and the software people run on them.
enum class Segment { kConsumer, kWorkstation, kDatacenter };
inline constexpr base::Named<Segment> kSegmentNames[] = {
    {Segment::kConsumer, "consumer"}, {Segment::kWorkstation, "workstation"}, {Segment::kDatacenter, "datacenter"}};

// kXgmi: AMD Infinity Fabric (xGMI) peer links wired as a full mesh, one link to each peer and no
// switch, so a GPU reaches one peer at one link's bandwidth and all peers at once at the sum.
enum class LinkKind { kPcie, kNvlink, kInfiniband, kEthernet, kXgmi };
inline constexpr base::Named<LinkKind> kLinkKindNames[] = {{LinkKind::kPcie, "pcie"},
                                                           {LinkKind::kNvlink, "nvlink"},
                                                           {LinkKind::kInfiniband, "infiniband"},
                                                           {LinkKind::kEthernet, "ethernet"},
                                                           {LinkKind::kXgmi, "xgmi"}};

struct Efficiency {
  double gemm = 0;                         // large GEMM: sustained / dense peak (max achievable matmul)
  std::optional<double> gemm_fp8;          // the same for fp8 GEMMs where it differs (B04); default: gemm
  std::optional<double> gemm_fp4;          // the same for block-scaled fp4 GEMMs (NVFP4, MXFP4); default: gemm_fp8's
  double attention = 0;                    // flash-attention forward+backward: sustained / dense peak
  std::optional<double> attention_flash3;  // the same for FlashAttention-3-class kernels; default: attention
  double dram = 0;                         // stream bandwidth / paper bandwidth
  double l2 = 0;                           // L2-resident bandwidth / spec l2_bandwidth
  double host_link = 0;                    // host<->device copy / PCIe per-direction bandwidth
  double peer_link = 0;          // ring (Simple protocol) collective bus bandwidth / peer link per-direction bandwidth
  double nvls = 0;               // in-switch (NVLS) all-reduce bus bandwidth / peer link bandwidth; 0 = none
  std::optional<double> ll128;   // LL128 bus bandwidth / Simple bus bandwidth; default: the library's payload
  Seconds nvls_round;            // NVLS: time per round of chunks over all channels and GPUs (synchronisation)
  Seconds collective_call;       // fixed time per collective call (launch, proxy, synchronisation)
  Seconds simple_step;           // Simple protocol: latency per ring step beyond the library's hop latency
  Seconds kernel_overhead;       // GPU-side gap between dependent kernels
  Seconds launch_eager;          // host time per eager kernel launch
  Seconds launch_graph;          // host time per kernel replayed from a CUDA graph
  Bytes gemv_inflight_per_sm;    // bytes in flight per SM of a latency-bound kernel (a GEMV, a reduction)
  Seconds gemm_latency;          // fixed time per GEMM kernel (launch to first tile); 0 when not calibrated
  Cycles gemm_tile_cycles;       // fixed SM cycles per output tile besides its K loop (pipeline fill, epilogue)
  double gemm_staging_rate = 0;  // tensor FLOPs per clock per SM the operand staging of a K loop keeps up with
                                 // (16-bit operands); 0 = no staging term
  int gemm_tile_m = 128;         // output tile of the architecture's best GEMM kernels (wave quantization)
  int gemm_tile_n = 128;
  // Rate of the warp-level mma.sync instruction over the tensor peak: 1 where it is the
  // architecture's full-rate tensor instruction (Volta to Ada); below 1 on Hopper, whose full rate
  // needs the asynchronous warpgroup wgmma. Kernels written with mma.sync (llama.cpp's MMQ) run at it.
  double mma_sync = 1.0;
  bool operator==(const Efficiency&) const = default;
};

// The plausible range of each uncertain efficiency value (the [uncertainty] table of an
// architecture file, under a GPU file's own; specs/README.md), each a fraction of the value: the
// value lies within value x (1 ± range) with about 80 % probability. The band of an estimate
// (answer/uncertainty.cpp) re-runs the evaluator at both ends of each range.
struct EfficiencyRanges {
  double gemm = 0;
  std::optional<double> gemm_fp8;  // default: gemm's
  std::optional<double> gemm_fp4;  // default: gemm_fp8's
  double attention = 0;            // FlashAttention-2 and -3-class kernels
  double dram = 0;                 // DRAM and L2 bandwidth
  double gemv_inflight = 0;        // bytes a skinny GEMM keeps in flight per SM
  double peer_link = 0;            // ring and in-switch collective bandwidth inside a node
  double kernel_overhead = 0;
  double launch = 0;                     // host launch cost, eager and from a CUDA graph
  double between_gpus = 0;               // a GPU none of whose rows measured these values: all of gemm, attention, dram
  std::vector<std::string> measured_on;  // GPU ids whose rows set or calibrated the values
  std::vector<std::string> assumed;      // keys whose range is an assumption, not a measured spread
  bool operator==(const EfficiencyRanges&) const = default;
};

// Power of the SMs (everything but the busy floor and DRAM traffic) at the rated boost clock, as a
// fraction of TDP − busy floor, per kind of work. May exceed 1: work that would draw more than the TDP at the rated
// clock runs at a lower one.
struct PowerActivity {
  double gemm = 0;    // tensor-core compute-bound kernels
  double memory = 0;  // DRAM-bound kernels
  double simt = 0;    // CUDA-core (non-tensor) compute-bound kernels, e.g. fp32 GEMMs without TF32
  double idle = 0;    // waiting on communication, input or the host
  bool operator==(const PowerActivity&) const = default;
};

struct GpuSpec {
  std::string id;
  std::string name;
  Arch arch = Arch::kAmpere;
  FormFactor form_factor = FormFactor::kPcie;
  Segment segment = Segment::kDatacenter;
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
  std::string host = "server-ddr5";  // specs/hosts id of the platform this GPU usually sits in
  std::string peer_link;             // specs/links id or "none"
  BytesPerSecond peer_bandwidth;     // per direction
  int peer_domain = 0;               // GPUs one peer-link domain joins (GB200 NVL72: 72); 0 = the form factor's default
  bool p2p_over_pcie = false;

  Watts tdp;
  Watts idle_power;
  PowerActivity activity;
  Watts busy_floor;  // board power while a job runs (memory clocked up) with the SMs idle at their lowest clock
  Hertz max_clock;   // highest SM clock the board reaches below its power limit (GeForce: above boost)
  // SM clock below which the voltage stays at its floor: a point of the board's V/F table, which a
  // higher clock limit extends without moving (specs give it as a fraction of the SKU's max_clock).
  Hertz voltage_knee;
  double dram_energy_per_bit = 0;  // joules per bit moved by the DRAM devices
  Bytes memory_reserved;           // CUDA context and library workspaces
  double fragmentation = 0;        // allocator overhead as a fraction of live tensors
  Usd purchase;
  std::string purchase_date;
  UsdPerSecond cloud_rate;
  std::string cloud_date;

  Efficiency efficiency;
  EfficiencyRanges ranges;
  std::vector<std::string> sources;
  std::vector<std::string> assumptions;
  std::string origin;  // file the spec came from

  [[nodiscard]] bool supports(DType d) const { return peak[static_cast<std::size_t>(d)].has_value(); }
  [[nodiscard]] FlopPerSecond peak_for(DType d) const { return peak[static_cast<std::size_t>(d)].value(); }
  [[nodiscard]] bool has_nvlink() const { return peer_link != "none"; }
  // Whether rows of this GPU measured its efficiency values (else it runs on its architecture's).
  [[nodiscard]] bool measured() const {
    return std::find(ranges.measured_on.begin(), ranges.measured_on.end(), id) != ranges.measured_on.end();
  }
  bool operator==(const GpuSpec&) const = default;
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
  double staged_overlap = 0;         // share of a host-staged collective that can hide behind compute
  bool in_switch_reduction = false;  // NVSwitch with NVLink SHARP: all-reduce reduced in the switch (NVLS)
  int mesh_links = 0;                // xGMI full mesh: links per GPU (one per peer); bandwidth is their sum
  int joins = 0;                     // the most GPUs the link connects (a bridge: 2); 0: no limit
  std::vector<std::string> sources;
  std::string origin;
  bool operator==(const LinkSpec&) const = default;
};

// A collective library's cost model (specs/comm): per protocol, a fixed latency per call, a latency
// per ring step on each kind of link, and the share of the link's bus bandwidth the wire format
// carries as payload [nccl-source].
enum class Protocol { kLL, kLL128, kSimple };
inline constexpr base::Named<Protocol> kProtocolNames[] = {
    {Protocol::kLL, "ll"}, {Protocol::kLL128, "ll128"}, {Protocol::kSimple, "simple"}};
inline constexpr std::size_t kArchCount = 8;
static_assert(std::size(kArchNames) == kArchCount);

struct ProtocolSpec {
  Seconds base_latency;  // per call
  Seconds hop_nvlink;    // per ring step over NVLink
  Seconds hop_pcie;      // per ring step over PCIe (peer-to-peer or through the host)
  Seconds hop_network;   // per ring or tree step across nodes
  double payload = 1.0;  // bus bandwidth fraction carried as data
  bool nvlink_only = false;
  bool enabled = true;  // false: the library never picks this protocol by default
  std::array<std::optional<BytesPerSecond>, kArchCount> cap{};  // bus bandwidth cap inside a node, by Arch
  std::optional<BytesPerSecond> cap_across_nodes;               // bus bandwidth cap across nodes
  bool operator==(const ProtocolSpec&) const = default;
};

struct CommLibrary {
  std::string id;
  std::string name;
  std::array<ProtocolSpec, 3> protocols;        // indexed by Protocol
  Seconds nvls_latency;                         // in-switch all-reduce, per call
  Bytes nvls_chunk;                             // largest NVLS chunk (NCCL_NVLS_CHUNKSIZE)
  std::array<int, kArchCount> nvls_channels{};  // NVLS channels by Arch; 0 = no NVLS on that architecture
  std::vector<std::string> sources;
  std::vector<std::string> assumptions;
  std::string origin;
  [[nodiscard]] const ProtocolSpec& protocol(Protocol p) const { return protocols[static_cast<std::size_t>(p)]; }
  bool operator==(const CommLibrary&) const = default;
};

// The host a GPU sits in (specs/hosts): what ZeRO-Offload and activation offload lean on. The
// optimizer step on the CPU streams its states through host memory [ren-zero-offload-2021]; NVMe offload
// streams them through the drives [rajbhandari-zero-infinity-2021].
struct HostSpec {
  std::string id;
  std::string name;
  int cores = 0;                    // physical cores of all sockets
  Bytes memory;                     // DRAM capacity
  BytesPerSecond memory_bandwidth;  // peak: channels x transfer rate x 8 bytes, all sockets
  double memory_efficiency = 0;     // sustained (STREAM-like) / peak
  BytesPerSecond nvme_bandwidth;    // all drives, sequential, the lower of read and write
  std::vector<std::string> sources;
  std::vector<std::string> assumptions;
  std::string origin;
  bool operator==(const HostSpec&) const = default;
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
  CommLibrary comm;               // the collective library (specs/comm)
  HostSpec host;                  // the CPU side of each node (specs/hosts)
  [[nodiscard]] int nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
  [[nodiscard]] const std::string& gpu_id() const { return gpu.id; }
};

// The system with another GPU count (a node never holds more GPUs than the system).
inline System with_gpus(const System& s, int gpus) {
  System out = s;
  out.gpus = gpus;
  out.gpus_per_node = std::min(s.gpus_per_node, gpus);
  return out;
}

}  // namespace gpusim::hardware
