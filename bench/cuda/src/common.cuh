// Shared pieces of gpusim-bench's CUDA side: error-checking macros, RAII wrappers, the run
// context, the median-of-samples timer and the benchmark entry points of each .cu file.
#pragma once

#include <cuda_runtime.h>
#include <curand.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpusim_bench/cli.hpp"
#include "gpusim_bench/toml_writer.hpp"

namespace gpusim::bench {

// A failed CUDA / cuBLAS / cuRAND / NCCL / NVML call: "file:line: call: error string". main()
// prints it and exits non-zero.
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail_call(const char* file, int line, const char* call, const std::string& error);
void warn_call(const char* file, int line, const char* call, const std::string& error);
const char* curand_status_name(curandStatus_t status);

#define GPUSIM_CUDA_CHECK(call)                                                                  \
  do {                                                                                           \
    const cudaError_t gpusim_status_ = (call);                                                   \
    if (gpusim_status_ != cudaSuccess)                                                           \
      ::gpusim::bench::fail_call(__FILE__, __LINE__, #call, cudaGetErrorString(gpusim_status_)); \
  } while (0)

// For destructors, which must not throw: prints and goes on.
#define GPUSIM_CUDA_WARN(call)                                                                   \
  do {                                                                                           \
    const cudaError_t gpusim_status_ = (call);                                                   \
    if (gpusim_status_ != cudaSuccess)                                                           \
      ::gpusim::bench::warn_call(__FILE__, __LINE__, #call, cudaGetErrorString(gpusim_status_)); \
  } while (0)

#define GPUSIM_KERNEL_CHECK() GPUSIM_CUDA_CHECK(cudaGetLastError())

#define GPUSIM_CURAND_CHECK(call)                                                                                 \
  do {                                                                                                            \
    const curandStatus_t gpusim_status_ = (call);                                                                 \
    if (gpusim_status_ != CURAND_STATUS_SUCCESS)                                                                  \
      ::gpusim::bench::fail_call(__FILE__, __LINE__, #call, ::gpusim::bench::curand_status_name(gpusim_status_)); \
  } while (0)

// Device memory of `count` elements of T on the current device.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    void* p = nullptr;
    GPUSIM_CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
    ptr_ = static_cast<T*>(p);
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) GPUSIM_CUDA_WARN(cudaFree(ptr_));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) { o.ptr_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Page-locked host memory (cudaMallocHost).
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

// A stream and a pair of events on the current device.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// Seconds between two recorded, completed events.
double elapsed_s(const Event& start, const Event& stop);

struct Context {
  Options opts;
  int device = 0;
  cudaDeviceProp prop{};
  std::string gpu_id;
  int warmup = 5;                 // untimed operations before the samples
  int reps = 20;                  // timed samples; the median is reported
  double sample_target_s = 2e-3;  // short operations are batched to about this per sample
  std::vector<Measurement> results;

  // A row with id, gpu, benchmark and value filled in.
  Measurement row(std::string id, std::string benchmark, std::string value) const;
  bool quick() const { return opts.quick; }
};

struct Timing {
  double seconds = 0.0;  // median time of one operation
  int inner = 1;         // operations per timed sample
};

// Median time of `op` (which enqueues one operation on `stream`, current device): ctx.warmup
// untimed calls, then ctx.reps samples of `inner` calls each between two CUDA events. inner is
// fixed_inner when > 0, otherwise planned from one timed call so a sample lasts about
// ctx.sample_target_s.
Timing time_op(const Context& ctx, cudaStream_t stream, const std::function<void()>& op, int fixed_inner = 0);

// "median of 20 samples (12 operations each) after 5 warm-up, CUDA events"
std::string timing_note(const Context& ctx, const Timing& t);

// Fills n floats with cuRAND Philox uniform values in (0, 1] on the current device.
void fill_uniform(float* dst, std::size_t n, std::uint64_t seed, cudaStream_t stream);

// cudaMemGetInfo's free bytes on the current device.
std::size_t free_device_bytes();

// A kernel run back to back by the power benchmark.
class Workload {
 public:
  virtual ~Workload() = default;
  virtual void launch(cudaStream_t stream) = 0;
  std::string name;                 // "gemm-bf16-8192", "stream_copy"
  std::optional<double> intensity;  // FLOP per byte of DRAM traffic
};

// memory.cu
void run_stream(Context& ctx);
void run_l2(Context& ctx);
void run_latency(Context& ctx);
// kind is "stream_copy" or "stream_triad"; arrays of array_bytes each.
std::unique_ptr<Workload> make_stream_workload(const Context& ctx, const std::string& kind, std::size_t array_bytes);

// compute.cu
void run_gemm(Context& ctx);
void run_launch(Context& ctx);
// nullptr when the dtype is not supported on this GPU or cuBLASLt has no algorithm.
std::unique_ptr<Workload> make_gemm_workload(const Context& ctx, const std::string& dtype, std::int64_t m,
                                             std::int64_t n, std::int64_t k);

// transfer.cu
void run_copy(Context& ctx);
void run_p2p(Context& ctx);
void run_nccl(Context& ctx);

// power.cu
struct NvmlInfo {
  std::string driver, sm_clock, memory_clock, power_limit;
};
bool nvml_start();  // false (with a message) when built without NVML or nvmlInit fails
void nvml_stop();
NvmlInfo nvml_info(int cuda_device);  // fields left empty when unavailable
void run_power(Context& ctx);

}  // namespace gpusim::bench
