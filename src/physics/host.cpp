// The host side of a step: kernel launches and the input pipeline.
// Launch: the host issues kernels while the GPU runs earlier ones; an eager launch costs the CUDA
// launch itself (the GPU spec's) plus the runtime's own dispatch (Python, dispatcher, allocator),
// a CUDA graph replays kernels for less [nvidia-cuda-graphs]; the GPU waits only for the launch
// time beyond its own work.
// Input ("barrel"): per node, the pipeline delivers min(CPU, storage, host-to-device) samples per
// second; the GPU step overlaps with the next batch's preparation, so only the excess stalls.
#include <algorithm>

#include "gpusim/physics.hpp"

namespace gpusim::physics {

Seconds launch_cost(const hardware::GpuSpec& gpu, const workload::Runtime& rt) {
  return rt.cuda_graphs ? gpu.efficiency.launch_graph : gpu.efficiency.launch_eager + rt.dispatch;
}

Seconds launch_stall(Seconds host_time, Seconds gpu_time) {
  return host_time > gpu_time ? host_time - gpu_time : Seconds(0);
}

InputRate input_rate(const hardware::System& sys, const workload::InputPipeline& in) {
  const double cpu = in.workers / in.cpu_time_per_sample.value();
  const double storage = in.storage_bandwidth.value() / in.sample_bytes.value();
  const double pcie = sys.gpus_per_node * host_copy_bandwidth(sys, in.pinned_memory).value() / in.sample_bytes.value();
  InputRate r{cpu, Stave::kCpu};
  if (storage < r.samples_per_s) {
    r = {storage, Stave::kStorage};
  }
  if (pcie < r.samples_per_s) {
    r = {pcie, Stave::kPcie};
  }
  return r;
}

}  // namespace gpusim::physics
