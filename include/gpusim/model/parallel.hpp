// Communication of tensor, pipeline and data parallelism in one training step (Narayanan et al.
// 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM").
// Placement: tensor-parallel ranks innermost (inside a node), then data-parallel, then pipeline
// stages outermost, as Megatron-LM orders its process groups.
//   tensor:   per layer and micro-batch, 2 all-reduces of b·s·h elements forward and 2 backward
//             (+2 when the forward is recomputed); with sequence parallelism the same volume as
//             reduce-scatter + all-gather pairs. Not overlapped with compute (Megatron-LM 2021).
//   pipeline: per micro-batch and virtual stage, the activation forward and its gradient back,
//             b·s·h/t elements each over the link between stages (scatter-gather optimization).
//   data:     gradients of the rank's N/(t·p) parameters, all-reduced (ZeRO-1/2: reduce-scatter
//             + all-gather; ZeRO-3: also parameter all-gathers per micro-batch) over the d ranks of
//             the same shard, d_node of them per node.
#pragma once

#include "gpusim/model/comm.hpp"
#include "gpusim/workload/scenario.hpp"

namespace gpusim {

struct ParallelComm {
  Seconds tensor_per_microbatch;    // exposed
  Seconds pipeline_per_microbatch;  // exposed
  Seconds data_total;               // per step
  Seconds data_overlappable;        // the part that may hide behind backward (or all compute, ZeRO-3)
  bool data_hides_behind_all = false;
};

ParallelComm parallel_comm(const Scenario& sc);
// The same for any layout over a node fabric built once (the planner's fast path).
ParallelComm parallel_comm(const Fabric& node, int gpus_per_node, const ModelShape& m, const TrainingConfig& t,
                           const ParallelConfig& p);

// The fabric a data-parallel group sees: its members inside one node share NVLink; across nodes
// each GPU uses its share of the NICs.
Fabric data_parallel_fabric(const Fabric& node, int gpus_per_node, const ParallelConfig& p);

}  // namespace gpusim
