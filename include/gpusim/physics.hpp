// Physics: what the silicon and the wires do with the work. Each model's equation and source
// opens its file under src/physics/:
//   kernel.cpp       roofline with GEMM wave quantization, split-K, L2 reuse, GEMV concurrency
//   memory.cpp       bytes per GPU: weights, gradients, optimizer states, activations, KV cache
//   collectives.cpp  alpha-beta collectives over a two-level fabric; host copies
//   parallel.cpp     tensor, pipeline and data-parallel communication of a training step
//   power.cpp        board power from activity; clocks under a power limit
//   host.cpp         kernel launches from the host, and the input pipeline
#pragma once

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <string>

#include "gpusim/hardware.hpp"
#include "gpusim/lowering.hpp"
#include "gpusim/units.hpp"
#include "gpusim/workload.hpp"

namespace gpusim::physics {

// ---------------------------------------------------------------- kernel.cpp

struct KernelTime {
  Seconds compute;     // time if only the arithmetic mattered
  Seconds memory;      // time if only DRAM (or L2) traffic mattered
  Seconds time;        // max of the two
  Bytes dram;          // traffic that reaches DRAM (0 for an L2-resident kernel)
  Seconds arithmetic;  // the useful FLOPs at the achievable rate: `compute` without the padding of
                       // partial tiles and waves and without a GEMM's fixed latency
  [[nodiscard]] bool compute_bound() const { return compute >= memory; }
  // Time the arithmetic units are busy, whether the kernel is compute- or bandwidth-bound (so its
  // power is continuous where it turns from one to the other); the rest of it waits on memory or
  // on the idle SMs of a partial wave.
  [[nodiscard]] Seconds busy_arithmetic() const { return arithmetic < time ? arithmetic : time; }
};

// `clock` is the SM clock over the rated boost clock: the compute rate scales with it.
KernelTime kernel_time(const lowering::Op& op, const hardware::GpuSpec& gpu, double clock = 1.0);
// The clock a kernel sustains run back to back under `limit` (benchmarks, power rows).
double kernel_clock(const lowering::Op& op, const hardware::GpuSpec& gpu, Watts limit);
// Whether a bandwidth-bound kernel runs from L2: its whole working set fits there (it reads what
// the previous kernel just wrote; the RTX 4090's 72 MB L2 effect).
bool l2_resident(const lowering::Op& op, const hardware::GpuSpec& gpu);
// Fraction of dense peak a GEMM of this shape reaches from wave quantization alone (0..1].
double wave_efficiency(double m, double n, double batch, const hardware::GpuSpec& gpu);
// Dense tensor FLOPs of `dtype` per clock per SM at the rated clock: peak / (SMs · boost clock).
double tensor_rate_per_sm(const hardware::GpuSpec& gpu, DType dtype);
// Share of a GEMM tile's time in its K loop of depth `k`: loop / (loop + the architecture's fixed
// cycles per tile), with loop = 2·tm·tn·k / tensor_rate_per_sm (1 without a fixed cost).
double tile_efficiency(double m, double n, double k, const hardware::GpuSpec& gpu, DType dtype);
// Share of a GEMM's K loop its MMAs are not waiting on operand staging: 1 / (1 + r / F), with r
// the tensor rate per SM per clock and F the architecture's staging rate for 16-bit operands,
// scaled by 2 / bytes per operand element (1 without a staging rate, or off the tensor cores).
double staging_efficiency(const hardware::GpuSpec& gpu, DType dtype);
// Achievable fraction of the dense peak for large GEMMs of `dtype` (fp8 may have its own): the
// architecture's η_gemm times the staging share.
double gemm_efficiency(const hardware::GpuSpec& gpu, DType dtype);
// Achievable DRAM bandwidth: paper bandwidth × η_dram.
BytesPerSecond dram_bandwidth(const hardware::GpuSpec& gpu);
// The ridge point: arithmetic intensity (FLOP/B) where the achievable DRAM roof meets the
// achievable compute roof of `dtype` [williams-2009].
double ridge_intensity(const hardware::GpuSpec& gpu, DType dtype);

// ---------------------------------------------------------------- memory.cpp

struct MemoryBreakdown {
  Bytes weights;
  Bytes gradients;
  Bytes optimizer;
  Bytes activations;
  Bytes kv_cache;
  Bytes other;  // context, workspaces, fragmentation
  Bytes capacity;
  Bytes budget;         // what the job may take when less than the capacity (a serving engine's memory fraction)
  Bytes host;           // offloaded to the host's memory (ZeRO-Offload, activation offload), per GPU
  Bytes nvme;           // offloaded to NVMe (ZeRO-Infinity), per GPU
  Bytes host_capacity;  // the host's memory per GPU of its node (0: not checked)
  Bytes paged;          // paged optimizer states evicted to the host (part of `host`), paged in for each step
  Bytes unified;        // of `optimizer`, the paged states resident in CUDA unified memory
  [[nodiscard]] Bytes total() const { return weights + gradients + optimizer + activations + kv_cache + other; }
  // What the framework's caching allocator holds in live tensors at the peak (PyTorch's
  // max_memory_allocated): the total without the context, workspaces and fragmentation, and
  // without states in unified memory, which the allocator does not hand out.
  [[nodiscard]] Bytes allocated() const { return total() - other - unified; }
  [[nodiscard]] bool host_fits() const { return host_capacity.value() <= 0 || host <= host_capacity; }
  // The GPU's own memory: what it holds within its capacity (or the engine's share of it).
  [[nodiscard]] bool gpu_fits() const { return total() <= (budget.value() > 0 ? budget : capacity); }
  [[nodiscard]] bool fits() const { return gpu_fits() && host_fits(); }
};

MemoryBreakdown training_memory(const workload::ModelShape& m, const workload::Training& t,
                                const workload::Layout& layout, const workload::Runtime& rt,
                                const hardware::GpuSpec& gpu);
// The same with the parameter counts given (counted once for many layouts).
MemoryBreakdown training_memory(const workload::ModelShape& m, const workload::Training& t,
                                const workload::ModelCounts& counts, const workload::Layout& layout,
                                const workload::Runtime& rt, const hardware::GpuSpec& gpu);
// KV-cache bytes one token of one sequence holds on one GPU: K and V of the pipeline stage's
// layers for the GPU's KV heads (tensor parallelism splits them; a head is replicated on every
// rank when tensor > kv_heads).
Bytes kv_bytes_per_token(const workload::ModelShape& m, const workload::Inference& inf, const workload::Layout& layout);
// Memory of one GPU of a serving replica. A static engine holds `batch` sequences at their full
// context and the workspace of prefilling them together. A continuous engine takes
// memory_fraction of the GPU and leaves its KV pool what the weights, the workspace of one
// iteration's token budget and the reserve do not use; it fits when the pool holds one request.
MemoryBreakdown inference_memory(const workload::ModelShape& m, const workload::Inference& inf,
                                 const hardware::GpuSpec& gpu, const workload::Layout& layout,
                                 const workload::ServingEngine& engine, double batch);
// Activation bytes of one layer for one micro-batch on one tensor-parallel rank.
Bytes layer_activation_bytes(const workload::ModelShape& m, double seq, double micro_batch, double elem_bytes,
                             bool flash, workload::Recompute recompute, double tp = 1.0, bool sp = false);

// ---------------------------------------------------------------- collectives.cpp

// One protocol of the collective library on this fabric [nccl-source]:
//   t = base + (ring steps in a node)·intra_hop + (steps across nodes)·inter_hop + bytes / bus.
struct ProtocolCost {
  hardware::Protocol protocol = hardware::Protocol::kSimple;
  Seconds base;              // per call
  Seconds intra_hop;         // per ring step inside a node
  Seconds inter_hop;         // per ring or tree step across nodes
  BytesPerSecond intra_bus;  // bus bandwidth inside a node
  BytesPerSecond inter_bus;  // per-GPU bus bandwidth across nodes
  bool operator==(const ProtocolCost&) const = default;
};
// The protocols of a fabric, in the library's order: at most one of each, held in place, so that a
// fabric is copied (a collective's group shape) without allocating.
class ProtocolList {
 public:
  void push_back(const ProtocolCost& p) { items_.at(size_++) = p; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] const ProtocolCost& front() const { return items_.front(); }
  [[nodiscard]] const ProtocolCost* begin() const { return items_.data(); }
  [[nodiscard]] const ProtocolCost* end() const { return items_.data() + size_; }
  bool operator==(const ProtocolList&) const = default;

 private:
  std::array<ProtocolCost, std::size(hardware::kProtocolNames)> items_{};
  std::size_t size_ = 0;
};

// The links a collective sees: GPUs of a node share the intra-node bus, nodes talk over NICs.
// `protocols` empty means one protocol with no fixed latency: intra_bus / intra_alpha and
// inter_bus / inter_alpha per step (the plain alpha-beta model).
struct Fabric {
  BytesPerSecond intra_bus;  // achievable ring (Simple) bus bandwidth between GPUs of a node
  BytesPerSecond intra_p2p;  // achievable point-to-point copy bandwidth between two GPUs of a node
  Seconds intra_alpha;       // point-to-point latency inside a node
  BytesPerSecond inter_bus;  // achievable per-GPU bandwidth across nodes
  Seconds inter_alpha;       // point-to-point latency across nodes
  int gpus_per_node = 1;
  int nodes = 1;
  bool host_staged = false;
  bool nvlink = false;      // the GPUs of a node reach each other over NVLink (a switch or a full mesh)
  bool amd = false;         // AMD GPUs (ROCm): a runtime's custom all-reduce may not run on them
  double overlap_cap = 1;   // the most of a collective that can hide behind compute (host-staged: the link's)
  ProtocolList protocols;   // the library's protocols enabled on these links
  BytesPerSecond nvls_bus;  // in-switch all-reduce bus bandwidth; 0 = no NVLS
  Seconds nvls_latency;
  Seconds nvls_round;  // per round of chunks over all NVLS channels and GPUs
  Bytes nvls_chunk;    // largest chunk
  int nvls_channels = 0;
  Seconds call;  // fixed cost of one collective call
  // xGMI full mesh: links per GPU, one to each peer (0 = a switch or PCIe). intra_bus is then the
  // ring bus bandwidth over all of them and intra_p2p one link's copy bandwidth.
  int mesh_links = 0;
  // Share of intra_bus the rings of `local` GPUs of a node reach. On a full mesh they use the
  // local − 1 links to the group's peers: B(local) = B_all · min(local − 1, links) / links.
  [[nodiscard]] double mesh_share(int local) const {
    return mesh_links > 0 ? std::clamp(local - 1, 1, mesh_links) / static_cast<double>(mesh_links) : 1.0;
  }
  // GPUs without peer access stage every byte through host memory: each GPU's sender writes it
  // there and its receiver reads it back, so `local` GPUs ringing at B per direction move 2·local·B
  // through the host's memory: B ≤ staged_host / local, staged_host = B_host·η_host / 2. 0: not staged.
  BytesPerSecond staged_host;
  [[nodiscard]] BytesPerSecond host_cap(int local, BytesPerSecond bus) const {
    return host_staged && staged_host.value() > 0 ? std::min(bus, staged_host / static_cast<double>(std::max(1, local)))
                                                  : bus;
  }
  [[nodiscard]] BytesPerSecond ring_bus(int local) const { return host_cap(local, intra_bus * mesh_share(local)); }
  // Copy bandwidth to or from `peers` GPUs of the node at once: a switch port is shared by all
  // peers; a mesh gives each peer its own link.
  [[nodiscard]] BytesPerSecond peers_bandwidth(int peers) const {
    return mesh_links > 0 ? intra_p2p * static_cast<double>(std::clamp(peers, 1, mesh_links)) : intra_p2p;
  }
  bool operator==(const Fabric&) const = default;
};
// Throws InputError when the GPUs of a node have no usable link.
Fabric make_fabric(const hardware::System& sys);
// How the GPUs of a node reach each other as make_fabric sees it: the facts a report states
// ("NVLink 4 (450 GB/s per direction)", "PCIe 4.0 x16, no P2P: staged through host memory (12.4
// GB/s achievable)"; report/words.cpp).
struct IntraPath {
  enum class Kind : std::uint8_t {
    kMesh,        // a full mesh of point-to-point links (xGMI)
    kNvlink,      // NVLink through a switch or a bridge
    kPcieP2p,     // PCIe, peer to peer
    kPcieStaged,  // PCIe without peer access: every byte staged through host memory
  };
  Kind kind = Kind::kNvlink;
  std::string link;          // the link's name, as its spec file gives it
  BytesPerSecond bandwidth;  // per direction (a mesh: per link); staged: the achievable bus bandwidth
  int links = 0;             // a mesh's links per GPU
  bool operator==(const IntraPath&) const = default;
};
IntraPath intra_path(const hardware::System& sys);

enum class Collective { kAllReduce, kReduceScatter, kAllGather };
// A ring collective over n ranks costs bytes_factor · S / B + steps · α:
//   all-reduce 2(n−1)/n and 2(n−1) steps; reduce-scatter and all-gather (n−1)/n and n−1 steps.
// bytes_factor is also nccl-tests' bus-bandwidth factor: busbw = S · bytes_factor / t.
struct RingCost {
  double bytes_factor = 0;
  double steps = 0;
};
RingCost ring_cost(Collective c, int ranks);
Seconds ring_time(Collective c, Bytes size, int ranks, BytesPerSecond bus, Seconds alpha);
// Double binary tree all-reduce [sanders-2009]: 2·S/B + 2·⌈log2 n⌉·α; wins for latency-bound sizes.
Seconds tree_allreduce(Bytes size, int ranks, BytesPerSecond bus, Seconds alpha);
// A collective over `ranks` GPUs placed densely on the fabric's nodes, with the protocol (and
// NVLS) that takes the least time, as NCCL chooses [nccl-source]: rings inside a node; across
// nodes hierarchical (reduce-scatter in the node, the 1/g shard across nodes with the faster of
// ring and tree, all-gather in the node); plus the fixed cost of the call.
// How a collective ran: nothing (one rank), a ring (hierarchical across nodes) in one of the
// library's protocols, or NVLS in-switch reduction.
enum class Route { kNone, kRing, kNvls };
struct CollectiveCost {
  Seconds time;
  Route route = Route::kNone;
  hardware::Protocol protocol = hardware::Protocol::kSimple;  // of a ring
};
// Rounds an NVLS all-reduce of `size` bytes over `ranks` GPUs takes: size / (channels · ranks ·
// chunk), with NCCL's chunk shrinking for smaller messages [nccl-source].
double nvls_rounds(const Fabric& fabric, Bytes size, int ranks);
// kRing rules NVLS out (NCCL_NVLS_ENABLE=0); kNvls forces it where the fabric has it.
enum class Algorithm { kAuto, kRing, kNvls };
CollectiveCost collective_cost(const Fabric& fabric, Collective c, Bytes size, int ranks,
                               Algorithm algorithm = Algorithm::kAuto);
Seconds collective_time(const Fabric& fabric, Collective c, Bytes size, int ranks);
// A tensor-parallel all-reduce of a serving engine: its own one-shot or two-shot kernel over peer
// memory for messages up to the engine's allreduce_max inside a node (NVLink or xGMI, or two GPUs
// with peer access; on AMD GPUs only where the engine's build has it: allreduce_on_amd), else the
// collective library [vllm-custom-allreduce]:
//   one-shot  α + (n−1)·S / B_p2p             every GPU reads each peer's whole buffer
//   two-shot  2α + 2(n−1)/n · S / B_p2p       reduce-scatter, then all-gather, through peer memory
Seconds serving_allreduce_time(const Fabric& fabric, const workload::ServingEngine& engine, Bytes size, int ranks);
// All-to-all of `size` bytes per rank: node peers over the intra-node bus and other nodes over the
// NICs at once:  max((local−1)/n · S / B_intra + (local−1)·α_intra, (n−local)/n · S / B_inter +
// (n−local)·α_inter), with `local` ranks per node (a rank keeps its own 1/n).
Seconds all_to_all_time(const Fabric& fabric, Bytes size, int ranks);
// Pipelined broadcast: S / B of the slowest link + ⌈log2 n⌉·α.
Seconds broadcast_time(const Fabric& fabric, Bytes size, int ranks);
// One point-to-point transfer: S / B + α (B: the fabric's point-to-point bandwidth, not its
// collective bus bandwidth, which in-switch reduction can lift above the link).
Seconds p2p_time(Bytes size, BytesPerSecond bus, Seconds alpha);
// Host-to-device (or back) copy bandwidth of one GPU: PCIe per-direction bandwidth × η_host_link,
// halved for pageable memory (copied through a pinned bounce buffer: an assumption).
BytesPerSecond host_copy_bandwidth(const hardware::System& sys, bool pinned);

// ---------------------------------------------------------------- parallel.cpp

struct ParallelComm {
  Seconds tensor_per_microbatch;    // exposed
  Seconds pipeline_per_microbatch;  // exposed
  Seconds expert_per_microbatch;    // MoE all-to-all dispatch and combine (the runtime may overlap it)
  Seconds context_per_microbatch;   // ring attention's K/V passes, hidden behind the attention kernels
  Seconds data_total;               // per step
  Seconds data_overlappable;        // the part that may hide behind backward (or all compute, ZeRO-3)
  bool data_hides_behind_all = false;
  double overlap_cap = 1;  // of the data-parallel fabric (host-staged collectives hide less)
};
ParallelComm parallel_comm(const Fabric& node, int gpus_per_node, const workload::ModelShape& m,
                           const workload::Training& t, const workload::Layout& layout, const workload::Runtime& rt);
ParallelComm parallel_comm(const Fabric& node, int gpus_per_node, const workload::ModelShape& m,
                           const workload::Training& t, const workload::ModelCounts& counts,
                           const workload::Layout& layout, const workload::Runtime& rt);
// The two halves of parallel_comm, for a search that shares them between layouts:
// the per-micro-batch terms (tensor, pipeline, expert, context), which read every field of the
// layout but `zero`,
ParallelComm micro_batch_comm(const Fabric& node, int gpus_per_node, const workload::ModelShape& m,
                              const workload::Training& t, const workload::Layout& layout);
// the same with its one tensor-parallel collective given (tensor_collective of the layout), which
// reads only the layout's tensor, sequence, micro_batch and context,
Seconds tensor_collective(const Fabric& node, const workload::ModelShape& m, const workload::Training& t,
                          const workload::Layout& layout);
ParallelComm micro_batch_comm(const Fabric& node, int gpus_per_node, const workload::ModelShape& m,
                              const workload::Training& t, const workload::Layout& layout, Seconds tensor_one);
// and the data-parallel terms (data_total, data_overlappable, data_hides_behind_all,
// overlap_cap) set on `c`, which read only its data, context, tensor, pipeline, expert, zero and
// micro_batch.
void add_data_comm(const Fabric& node, int gpus_per_node, const workload::Training& t,
                   const workload::ModelCounts& counts, const workload::Layout& layout, const workload::Runtime& rt,
                   ParallelComm& c);
// Bytes per parameter of the gradients and of the weights a rank holds: fp32 under autocast with
// unsharded fp32 parameters (PyTorch AMP keeps the model in fp32), else the training precision's
// (workload::precision_policy(...).weight).
double parameter_bytes(const workload::Training& t, const workload::Layout& layout, const workload::Runtime& rt);
// The fabric a data-parallel group sees: its members inside one node share the intra-node bus;
// across nodes each GPU uses its share of the NICs.
Fabric data_parallel_fabric(const Fabric& node, int gpus_per_node, const workload::Layout& layout);
// The fabric of `ranks` data-parallel ranks `stride` apart (an expert-parallel group: stride 1;
// the ranks holding the same experts: stride ep).
Fabric strided_fabric(const Fabric& node, int gpus_per_node, const workload::Layout& layout, int ranks, int stride);
// Expert parallelism's all-to-all per micro-batch on one rank: dispatch and combine of each MoE
// layer of the stage, forward and backward (and a recomputed forward's), of b·s·k·load rows of h
// elements each over the `expert` ranks [megatron-core-moe].
Seconds expert_alltoall(const Fabric& node, int gpus_per_node, const workload::ModelShape& m,
                        const workload::Training& t, const workload::Layout& layout);

// ---------------------------------------------------------------- power.cpp

// Shares of a period spent in each kind of work (the rest is idle: waiting on the host, the
// network or the input) and the DRAM traffic rate over the period.
struct PowerMix {
  double tensor = 0;  // tensor-core compute-bound kernels
  double simt = 0;    // CUDA-core compute-bound kernels
  double memory = 0;  // bandwidth-bound kernels
  BytesPerSecond dram;
};
// Highest SM clock over the rated boost clock (the clock of the spec's peaks).
double max_clock_ratio(const hardware::GpuSpec& gpu);
// The lowest clock over the rated boost clock the power model considers.
double min_clock_ratio();
// Dynamic power at clock x relative to the rated boost clock: x · max(x, κ)² / max(1, κ)².
double voltage_factor(const hardware::GpuSpec& gpu, double clock);
// Σ share_i · a_i with the idle share at the idle activity.
double core_activity(const hardware::GpuSpec& gpu, const PowerMix& mix);
// Power of the DRAM devices: energy per bit × 8 × bytes per second.
Watts dram_power(const hardware::GpuSpec& gpu, BytesPerSecond dram);
// Board power the mix would draw at `clock` (uncapped).
Watts board_power(const hardware::GpuSpec& gpu, const PowerMix& mix, double clock);
// The highest clock (over the rated boost) at which the mix stays within `limit`.
double sustained_clock(const hardware::GpuSpec& gpu, Watts limit, const PowerMix& mix);
// A kernel of `intensity` FLOP per DRAM byte on tensor cores (bf16) or CUDA cores (fp32), run back
// to back under `limit`: compute-bound above the ridge point at its clock (its DRAM traffic is
// then its FLOP rate / intensity), bandwidth-bound below; its clock, mix and board power.
struct PowerClock {
  double clock = 1;
  PowerMix mix;
  Watts power;
};
PowerClock intensity_power(const hardware::GpuSpec& gpu, double intensity, bool tensor, Watts limit);
// The SM activity a measured board power implies, given the DRAM traffic and the clock it ran at.
double activity_from_power(const hardware::GpuSpec& gpu, Watts measured, BytesPerSecond dram, double clock);
// Whether compute-bound work of `dtype` runs on tensor cores (fp32 runs on CUDA cores).
bool on_tensor_cores(DType dtype);

// ---------------------------------------------------------------- offload.cpp

// What offloading adds to a training step on one GPU (ZeRO-Offload [ren-zero-offload-2021],
// ZeRO-Infinity [rajbhandari-zero-infinity-2021], activation offload). The step model decides what
// hides behind compute.
struct OffloadCost {
  Seconds gradients_out;         // per micro-batch: the 16-bit gradients of the rank's shard to the host
  Seconds optimizer;             // per step: the optimizer on the host's cores (and NVMe state traffic)
  Seconds parameters_in;         // per step: the updated 16-bit parameters back to the GPU
  Seconds parameter_fetch;       // per micro-batch: offloaded parameters to the GPU for forward and backward
  Seconds activations_each_way;  // per micro-batch: saved activations out during forward, back in backward
  Seconds optimizer_paging;      // per step: evicted paged-optimizer states in for the step and out again
  [[nodiscard]] bool any() const {
    return gradients_out.value() > 0 || optimizer.value() > 0 || parameter_fetch.value() > 0 ||
           activations_each_way.value() > 0 || optimizer_paging.value() > 0;
  }
};
OffloadCost offload_cost(const hardware::System& sys, const workload::ModelShape& m, const workload::Training& t,
                         const workload::Layout& layout, const workload::Runtime& rt);
OffloadCost offload_cost(const hardware::System& sys, const workload::ModelShape& m, const workload::Training& t,
                         const workload::ModelCounts& counts, const workload::Layout& layout,
                         const workload::Runtime& rt);

// ---------------------------------------------------------------- host.cpp

// Host time to launch one kernel: eager (CUDA launch + the runtime's dispatch), or replayed from a
// CUDA graph.
Seconds launch_cost(const hardware::GpuSpec& gpu, const workload::Runtime& rt);
// The host launches kernels while the GPU runs earlier ones; when launching takes longer than the
// GPU needs for them, the GPU waits: stall = max(0, host time − GPU time).
Seconds launch_stall(Seconds host_time, Seconds gpu_time);

// The input pipeline ("barrel"): per node, samples per second of host preprocessing
// (workers / CPU time per sample), storage (bandwidth / sample bytes) and host-to-device copies
// (GPUs × copy bandwidth / sample bytes); the slowest stave sets the pace.
enum class Stave { kNone, kCpu, kStorage, kPcie };
inline constexpr base::Named<Stave> kStaveNames[] = {
    {Stave::kNone, ""}, {Stave::kCpu, "cpu"}, {Stave::kStorage, "storage"}, {Stave::kPcie, "pcie"}};
struct InputRate {
  double samples_per_s = 0;
  Stave stave = Stave::kNone;  // the slowest
};
InputRate input_rate(const hardware::System& sys, const workload::InputPipeline& in);

}  // namespace gpusim::physics
