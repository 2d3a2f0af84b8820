// Explain: what bounds a step, what would relieve it, and the roofline picture — as data; the
// report stage puts them into words and pictures.
//
// Bottleneck: capacity when the job does not fit in the GPU's memory, host memory when what it
// offloads does not fit in the host's; otherwise the largest part of the step: compute-bound kernel
// time, bandwidth-bound kernel time, exposed communication, exposed offload traffic, the pipeline
// bubble, input stall and overhead.
// Advice: each suggestion is the scenario with one change, run through the same evaluator, so
// every number in it comes from the model, not from a rule of thumb.
// Roofline [williams-2009]: attainable rate at arithmetic intensity I is min(compute roof,
// I × memory roof); roofs are the achievable ones (paper peak × the spec's measured efficiency),
// with the paper peaks alongside; each op of a step is placed at its own intensity (FLOPs / DRAM
// bytes) and the rate the kernel model gives it, sized by its share of kernel time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusim/scenario.hpp"
#include "gpusim/step.hpp"

namespace gpusim::explain {

enum class Bottleneck {
  kCompute,
  kMemory,
  kCommunication,
  kOffload,
  kBubble,
  kInput,
  kLatency,
  kCapacity,
  kHostMemory
};
inline constexpr base::Named<Bottleneck> kBottleneckNames[] = {{Bottleneck::kCompute, "compute"},
                                                               {Bottleneck::kMemory, "memory"},
                                                               {Bottleneck::kCommunication, "communication"},
                                                               {Bottleneck::kOffload, "offload"},
                                                               {Bottleneck::kBubble, "bubble"},
                                                               {Bottleneck::kInput, "input"},
                                                               {Bottleneck::kLatency, "latency"},
                                                               {Bottleneck::kCapacity, "capacity"},
                                                               {Bottleneck::kHostMemory, "host-memory"}};
constexpr const char* to_string(Bottleneck b) { return base::name_in(kBottleneckNames, b); }

struct Diagnosis {
  Bottleneck bottleneck = Bottleneck::kCompute;
  double share = 0;          // of step time in the bottleneck (0 for capacity and host memory)
  double peak_fraction = 0;  // compute: FLOP/s of the compute-bound kernels / dense peak
};
// `e` with op shares (for the compute fraction of peak).
Diagnosis diagnose(const step::Evaluation& e);

// What a piece of advice is about; each kind documents the fields it fills.
enum class AdviceKind {
  kFitsWith,              // change fits: before/after (memory, activations, optimizer, time per token)
  kNeedsMoreGpus,         // nothing tried fits: after = the tightest variant; gpus_needed, states
  kActivationsTooLarge,   // activations and runtime alone exceed the GPU: after = the tightest variant
  kServesWith,            // serving does not run; this change (format, tensor parallelism, GPUs) does: before/after
  kServesOnNothing,       // no format or tensor-parallel layout up to kMaxAdvisedGpus runs: before, gpus_needed = 0
  kMicroBatch,            // micro_batch doubled: from/to, before/after (MFU, time per token, memory)
  kFp8,                   // precision fp8: before/after time per token
  kFlashAttention,        // flash attention on: before/after time per token
  kPrefillComputeBound,   // inference compute-bound: no figures
  kDecodeBatch,           // batch x4 in decode: from/to, before/after tokens/s and time per output token
  kInt8Weights,           // 8-bit weights: before/after tokens/s
  kFuseElementwise,       // share of the step in bandwidth-bound kernels
  kExposedComm,           // exposed / total communication per step
  kGlobalBatch,           // global batch doubled: from/to, before/after time per token
  kHostStaged,            // collectives staged through host memory
  kTensorInNode,          // serving: the tensor group in one node: to (GPUs per node), before/after tokens/s
  kFewerTensorRanks,      // serving: half the tensor ranks, twice the replicas: from/to (tensor), before/after
  kLaunchBound,           // kernels, host launch time, GPU time
  kCudaGraphs,            // CUDA graphs: before/after time per token
  kKernelGaps,            // kernels, gap per kernel, GPU time
  kBatchAmortizesLaunch,  // inference batch x4: from/to, before/after tokens/s
  kInputWorkers,          // more host workers: from/to, stall
  kInputStorage,          // faster storage: factor, stall
  kInputPcie,             // host-to-device copies are the slowest stage
  kNoCheaperVariant,      // nothing helps: before MFU
  kPlan,                  // multi-GPU training: try `gpusim plan`
  kOffloadLess,           // offloading less fits and is faster: change, before/after (time per token, memory)
  kOffloadBound,          // nothing that offloads less fits: exposed offload time per step, share of the step
  kHostFitsWith,          // change makes the offloaded states fit the host: before/after (memory, time per token)
  kMoreHostMemory,        // nothing tried fits the host: before (the host memory needed and available)
  kPipelineBubble,        // share of the step in the pipeline bubble
  kFillPipeline,          // global batch doubled, twice the micro-batches per step: from/to, before/after
};

// The most GPUs serving advice tries for a replica (one NVL72 rack holds 72).
inline constexpr int kMaxAdvisedGpus = 64;

// One side of a variant, as the evaluator gives it.
struct Effect {
  Seconds step_time;       // one step (training) or one decode step (inference)
  Seconds time_per_token;  // step time per token of the step
  double tokens_per_s = 0;
  double mfu = 0;
  physics::MemoryBreakdown memory;
  bool runs = false;  // step::runs of the evaluation
};

struct Advice {
  AdviceKind kind = AdviceKind::kNoCheaperVariant;
  std::vector<scenario::Override> change;  // the scenario keys it changes (empty: not a variant)
  std::optional<Effect> before;
  std::optional<Effect> after;
  double from = 0;  // the changed count (micro-batch, batch, workers), before and after
  double to = 0;
  double share = 0;     // of the step (kFuseElementwise), or a speed factor (kInputStorage)
  Seconds exposed;      // kExposedComm: exposed; kInput*: the stall; kLaunchBound: host time
  Seconds total;        // kExposedComm: all traffic; kLaunchBound, kKernelGaps: GPU work
  double kernels = 0;   // kLaunchBound, kKernelGaps
  Seconds per_kernel;   // kLaunchBound: host cost per launch; kKernelGaps: gap per kernel
  int gpus_needed = 0;  // kNeedsMoreGpus
  Bytes states;         // kNeedsMoreGpus: weights + gradients + optimizer states of the whole model
};

// Advice for the bottleneck of `e` (the evaluation of `sc`); the variants' serving runs take iteration
// tables from `tables` and keep them there (step::TableCache).
std::vector<Advice> advise(const scenario::Scenario& sc, const step::Evaluation& e, const Diagnosis& d,
                           step::TableCache* tables = nullptr);

struct ComputeRoof {
  DType dtype = DType::kBf16;
  FlopPerSecond paper;
  FlopPerSecond achievable;
  double ridge = 0;  // FLOP/B where it meets the achievable DRAM roof
};

struct MemoryRoof {
  std::string name;  // "DRAM", "L2"
  BytesPerSecond paper;
  BytesPerSecond achievable;
};

struct RooflinePoint {
  std::string name;
  lowering::Phase phase = lowering::Phase::kForward;
  Flop flops;
  Bytes bytes;
  double intensity = 0;        // FLOP per byte
  FlopPerSecond attained;      // flops / time under the kernel model
  BytesPerSecond bandwidth;    // bytes / time: where a kernel without FLOPs sits against the DRAM roof
  bool compute_bound = false;  // intensity at or past the ridge of the step's dtype: under its compute roof
  double share = 0;            // of kernel time
};

struct Roofline {
  std::string gpu_id;
  std::string gpu_name;
  std::vector<ComputeRoof> compute;  // every supported dtype, fastest first
  std::vector<MemoryRoof> memory;    // DRAM and L2
  DType highlight = DType::kBf16;    // the dtype whose ridge point is reported
  std::vector<RooflinePoint> points;
  // With a scenario's step: what ran (GPU count, layout, runtime, the step's dtype), so that the
  // picture says which run its ops are of.
  struct Run {
    int gpus = 1;
    workload::Layout layout;
    std::string runtime;
    DType dtype = DType::kBf16;
  };
  std::optional<Run> run;
};

// Roofs only (no evaluation) or with the ops of an evaluation made with op shares.
Roofline make_roofline(const hardware::GpuSpec& gpu, const step::Evaluation* e, DType highlight);

}  // namespace gpusim::explain
