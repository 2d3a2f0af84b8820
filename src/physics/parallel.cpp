// Tensor, pipeline and data-parallel communication (equations and placement in parallel.hpp).
#include "gpusim/model/parallel.hpp"

#include <algorithm>
#include <cmath>

namespace gpusim {

Fabric data_parallel_fabric(const Fabric& node, int gpus_per_node, const ParallelConfig& p) {
  Fabric f = node;
  const int per_node = std::max(1, gpus_per_node / p.tensor);
  f.gpus_per_node = std::min(per_node, p.data);
  f.nodes = (p.data + f.gpus_per_node - 1) / f.gpus_per_node;
  return f;
}

ParallelComm parallel_comm(const Scenario& sc) {
  return parallel_comm(make_fabric(sc.system), sc.system.gpus_per_node, sc.model, *sc.training, sc.parallel);
}

ParallelComm parallel_comm(const Fabric& node, int gpus_per_node, const ModelShape& m, const TrainingConfig& t,
                           const ParallelConfig& p) {
  ParallelComm c;
  const bool wide = t.precision == DType::kFp32 || t.precision == DType::kTf32;
  const double e = wide ? 4.0 : 2.0;
  const double activation =
      static_cast<double>(t.micro_batch) * static_cast<double>(t.seq_len) * static_cast<double>(m.hidden) * e;
  const double layers = std::ceil(static_cast<double>(m.layers) / p.pipeline);

  if (p.tensor > 1) {
    const double per_layer = 4.0 + (t.recompute == Recompute::kFull ? 2.0 : 0.0);
    // A tensor group larger than a node spans nodes: the hierarchical collective of comm.hpp.
    c.tensor_per_microbatch = allreduce_time(node, Bytes(activation), p.tensor) * (per_layer * layers);
  }
  if (p.pipeline > 1) {
    // Neighbouring stages sit in different nodes once a stage fills a node (pipeline outermost).
    const bool across_nodes = p.tensor * p.data >= gpus_per_node;
    const BytesPerSecond bw = across_nodes ? node.inter_bus : node.intra_bus;
    const Seconds alpha = across_nodes ? node.inter_alpha : node.intra_alpha;
    const Bytes send(activation / p.tensor);
    c.pipeline_per_microbatch = p2p_time(send, bw, alpha) * (2.0 * p.virtual_stages);
  }
  if (p.data > 1) {
    const Fabric f = data_parallel_fabric(node, gpus_per_node, p);
    const Bytes grads(total_params(m) / (static_cast<double>(p.tensor) * p.pipeline) * e);
    switch (p.zero) {
      case 0:
        c.data_total = allreduce_time(f, grads, p.data);
        c.data_overlappable = c.data_total;
        break;
      case 1:
      case 2:
        // Reduce-scatter overlaps the last backward; the all-gather of updated weights follows the
        // optimizer step and is exposed (DeepSpeed ZeRO-1/2 schedule).
        c.data_overlappable = reduce_scatter_time(f, grads, p.data);
        c.data_total = c.data_overlappable + all_gather_time(f, grads, p.data);
        break;
      default: {
        // ZeRO-3 / FSDP: gather weights for forward and backward, reduce-scatter gradients, per micro-batch.
        const double micro = static_cast<double>(t.global_batch) / (static_cast<double>(t.micro_batch) * p.data);
        c.data_total = (all_gather_time(f, grads, p.data) * 2.0 + reduce_scatter_time(f, grads, p.data)) * micro;
        c.data_overlappable = c.data_total;
        c.data_hides_behind_all = true;
        break;
      }
    }
  }
  return c;
}

}  // namespace gpusim
