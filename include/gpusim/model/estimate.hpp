// The whole answer for one scenario (DESIGN §5): step breakdown, throughput, utilization,
// memory, time-to-train, power, energy, carbon, cost, bottleneck and advice. `estimate` runs the
// stage functions in order; reporters only format what is here.
//
// Step model (training, one optimizer step; parallel communication in parallel.hpp):
//   stage    = one micro-batch through the slowest pipeline stage: Σ op time + kernel gaps +
//              training_overhead × kernels + exposed tensor- and pipeline-parallel communication
//   pipeline = m · stage + bubble, bubble = (p − 1) / v · stage (1F1B, v virtual stages)
//   overhead = Σ kernel launches × kernel_overhead + training_overhead × kernels
//              + launch stall: max(0, kernels × host launch cost − GPU time) (eager or CUDA graph)
//   comm     = data-parallel gradient (and ZeRO-3 parameter) collectives, of which
//              comm_overlap × (backward time of the last micro-batch, or all compute for ZeRO-3)
//              is hidden; the rest is exposed
//   input    = host pipeline time per step beyond the GPU step (the slowest "stave")
//   step     = kernels + overhead + exposed comm + input stall
// Power: idle + (TDP − idle) × Σ_i (share of step in work kind i × activity_i), capped at the
// power limit; under a limit compute slows by (limit / TDP)^(1/3) (DESIGN §6 seed).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusim/cost/cost.hpp"
#include "gpusim/model/memory.hpp"
#include "gpusim/spec/catalog.hpp"
#include "gpusim/workload/ops.hpp"
#include "gpusim/workload/scenario.hpp"

namespace gpusim {

enum class Bottleneck { kCompute, kMemory, kCommunication, kInput, kLatency, kCapacity };
const char* to_string(Bottleneck b);

struct StepBreakdown {
  Seconds time;
  Seconds compute;        // all kernels (GEMM, attention, memory-bound, optimizer)
  Seconds gemm;           // compute-bound GEMM and attention kernels
  Seconds memory_bound;   // bandwidth-bound kernels (elementwise, norms, optimizer, skinny GEMMs)
  Seconds communication;  // exposed
  Seconds communication_total;
  Seconds bubble;
  Seconds input_stall;
  Seconds overhead;         // kernel gaps + framework time + launch stall
  Seconds launch_stall;     // GPU idle because the host launches kernels slower than they run
  Seconds host_launch;      // host time to launch the step's kernels (eager or CUDA graph)
  double kernels = 0;       // kernel launches per step
  std::string input_stave;  // which input stage is slowest ("cpu", "storage", "pcie"), if any
};

struct InferenceResult {
  Seconds time_to_first_token;
  Seconds time_per_output_token;
  double output_tokens_per_s = 0;  // decode only: batch / time per output token
  Seconds request_latency;
  double offline_output_tokens_per_s = 0;  // all output tokens / (prefill + decode) of a batch
  double batch = 0;                        // concurrent sequences (resolved when batch = "max")
};

struct OpShare {
  std::string name;
  Phase phase = Phase::kForward;
  OpKind kind = OpKind::kMemoryBound;
  Flop flops;    // per step, all instances
  Bytes bytes;   // per step
  Seconds time;  // per step
  bool compute_bound = false;
};

struct Estimate {
  std::string scenario;
  std::string gpu_id;
  std::string gpu_name;
  int gpus = 1;
  int nodes = 1;
  std::string fabric;  // description of the intra-node path
  DType dtype = DType::kBf16;
  FlopPerSecond peak;  // dense peak of the dtype, per GPU (after power limit)
  bool training = true;

  StepBreakdown step;
  double tokens_per_step = 0;  // all GPUs
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double samples_per_s = 0;
  double mfu = 0;
  double hfu = 0;
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;  // including recomputation (what Megatron-LM reports)
  MemoryBreakdown memory;
  double params = 0;

  double tokens = 0;  // training tokens
  Seconds train_time;
  double gpu_hours = 0;
  std::optional<InferenceResult> inference;

  Watts gpu_avg_power;
  double energy_kwh = 0;  // GPUs + hosts, times PUE
  double carbon_kg = 0;
  CostResult cost;
  CostInputs cost_inputs;   // what the cost was computed from (for the break-even curve)
  std::string cloud_gpu;    // the GPU the cloud price is for
  UsdPerSecond cloud_rate;  // per GPU
  double utilization = 0;   // of the owned machine, for break-even

  std::vector<OpShare> ops;  // aggregated by name and phase, largest time first
  Bottleneck bottleneck = Bottleneck::kCompute;
  std::string bottleneck_reason;
  std::vector<std::string> advice;
};

// Throws InputError only for inputs the scenario loader could not catch (none expected);
// a job that does not fit is reported, not thrown.
Estimate estimate(const Scenario& sc, const Catalog& catalog);
// The same without the cloud-GPU normalization and advice (used inside advice and compare).
Estimate estimate_core(const Scenario& sc);

}  // namespace gpusim
