// gpusim-bench: measures the GPUs of this machine and writes gpusim's measurement TOML
// (format: docs/measurements.md). This file holds main(), the [meta] table, the shared timer (median of
// CUDA-event-timed samples after warm-up) and the RAII / error helpers of common.cuh.
// It reads device properties only: it never changes clocks, power limits or device settings.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common.cuh"
#include "gpusim_bench/catalog_ids.hpp"
#include "gpusim_bench/format.hpp"
#include "gpusim_bench/meta.hpp"
#include "gpusim_bench/stats.hpp"
#include "gpusim_bench/sweep.hpp"

namespace gpusim::bench {

void fail_call(const char* file, int line, const char* call, const std::string& error) {
  throw BenchError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + error);
}

void warn_call(const char* file, int line, const char* call, const std::string& error) {
  std::fprintf(stderr, "gpusim-bench: warning: %s:%d: %s: %s\n", file, line, call, error.c_str());
}

const char* curand_status_name(curandStatus_t status) {
  switch (status) {
    case CURAND_STATUS_SUCCESS:
      return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH:
      return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED:
      return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED:
      return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR:
      return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE:
      return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE:
      return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED:
      return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE:
      return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE:
      return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED:
      return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH:
      return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR:
      return "CURAND_STATUS_INTERNAL_ERROR";
  }
  return "unknown cuRAND status";
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) { GPUSIM_CUDA_CHECK(cudaMallocHost(&ptr_, bytes)); }
PinnedBuffer::~PinnedBuffer() { GPUSIM_CUDA_WARN(cudaFreeHost(ptr_)); }
Stream::Stream() { GPUSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::~Stream() { GPUSIM_CUDA_WARN(cudaStreamDestroy(s_)); }
Event::Event() { GPUSIM_CUDA_CHECK(cudaEventCreate(&e_)); }
Event::~Event() { GPUSIM_CUDA_WARN(cudaEventDestroy(e_)); }

double elapsed_s(const Event& start, const Event& stop) {
  float ms = 0.0f;
  GPUSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) * 1e-3;
}

Measurement Context::row(std::string id, std::string benchmark, std::string value) const {
  Measurement m;
  m.id = std::move(id);
  m.gpu = gpu_id;
  m.benchmark = std::move(benchmark);
  m.value = std::move(value);
  return m;
}

// Median of event-timed samples after warm-up (the timing discipline of every benchmark here).
Timing time_op(const Context& ctx, cudaStream_t stream, const std::function<void()>& op, int fixed_inner) {
  Event start, stop;
  for (int i = 0; i < ctx.warmup; ++i) {
    op();
  }
  GPUSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  int inner = fixed_inner;
  if (inner <= 0) {
    GPUSIM_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    op();
    GPUSIM_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    GPUSIM_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    inner = plan_inner_iterations(elapsed_s(start, stop), ctx.sample_target_s, 10000);
  }
  std::vector<double> samples;
  for (int r = 0; r < ctx.reps; ++r) {
    GPUSIM_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    for (int i = 0; i < inner; ++i) {
      op();
    }
    GPUSIM_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    GPUSIM_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    samples.push_back(elapsed_s(start, stop) / inner);
  }
  return {median(samples), inner};
}

std::string timing_note(const Context& ctx, const Timing& t) {
  std::ostringstream s;
  s << "median of " << ctx.reps << " samples";
  if (t.inner > 1) {
    s << " (" << t.inner << " operations each)";
  }
  s << " after " << ctx.warmup << " warm-up, CUDA events";
  return s.str();
}

void fill_uniform(float* dst, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  curandGenerator_t gen = nullptr;
  GPUSIM_CURAND_CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  try {
    GPUSIM_CURAND_CHECK(curandSetStream(gen, stream));
    GPUSIM_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(gen, seed));
    GPUSIM_CURAND_CHECK(curandGenerateUniform(gen, dst, n));
  } catch (...) {
    curandDestroyGenerator(gen);
    throw;
  }
  GPUSIM_CURAND_CHECK(curandDestroyGenerator(gen));
}

std::size_t free_device_bytes() {
  std::size_t free = 0, total = 0;
  GPUSIM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

namespace {

std::string mhz(int khz) { return khz > 0 ? std::to_string((khz + 500) / 1000) + " MHz" : ""; }

Meta collect_meta(const Context& ctx) {
  Meta meta;
  meta.gpu_name = ctx.prop.name;
  meta.source = "gpusim-bench on " + meta.gpu_name;
  meta.date = year_month(std::time(nullptr));
  int runtime = 0;
  GPUSIM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  meta.cuda_runtime = cuda_version_string(runtime);
  const NvmlInfo nvml = nvml_info(ctx.device);
  meta.driver = nvml.driver;
  if (meta.driver.empty()) {
    std::ifstream proc("/proc/driver/nvidia/version");
    std::stringstream text;
    text << proc.rdbuf();
    meta.driver = parse_proc_driver_version(text.str());
  }
  int sm_khz = 0, mem_khz = 0;
  GPUSIM_CUDA_CHECK(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, ctx.device));
  GPUSIM_CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, ctx.device));
  meta.sm_clock = nvml.sm_clock.empty() ? mhz(sm_khz) : nvml.sm_clock;
  meta.memory_clock = nvml.memory_clock.empty() ? mhz(mem_khz) : nvml.memory_clock;
  meta.power_limit = nvml.power_limit;
  return meta;
}

using Runner = void (*)(Context&);

Runner runner_for(const std::string& group) {
  if (group == "stream") return run_stream;
  if (group == "l2") return run_l2;
  if (group == "latency") return run_latency;
  if (group == "gemm") return run_gemm;
  if (group == "launch") return run_launch;
  if (group == "copy") return run_copy;
  if (group == "p2p") return run_p2p;
  if (group == "nccl") return run_nccl;
  return run_power;
}

int run(const Options& opts) {
  int count = 0;
  GPUSIM_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 1) {
    std::fprintf(stderr, "gpusim-bench: no CUDA device\n");
    return 1;
  }
  Context ctx;
  ctx.opts = opts;
  ctx.device = 0;
  GPUSIM_CUDA_CHECK(cudaSetDevice(ctx.device));
  GPUSIM_CUDA_CHECK(cudaGetDeviceProperties(&ctx.prop, ctx.device));
  ctx.gpu_id = opts.gpu_id.value_or(catalog_id_for_device(ctx.prop.name));
  if (ctx.gpu_id.empty()) {
    std::fprintf(stderr,
                 "gpusim-bench: '%s' is not a GPU of gpusim's catalog; pass --gpu-id ID (see `gpusim specs "
                 "list`)\n",
                 ctx.prop.name);
    return 2;
  }
  if (opts.quick) {
    ctx.warmup = 2;
    ctx.reps = 5;
  }
  std::fprintf(stderr, "gpusim-bench: %s (compute capability %d.%d, %d SMs) as '%s', %d device(s)\n", ctx.prop.name,
               ctx.prop.major, ctx.prop.minor, ctx.prop.multiProcessorCount, ctx.gpu_id.c_str(), count);
  const bool have_nvml = nvml_start();
  const Meta meta = collect_meta(ctx);

  bool failed = false;
  for (const auto& group : opts.only) {
    std::fprintf(stderr, "gpusim-bench: [%s]\n", group.c_str());
    try {
      GPUSIM_CUDA_CHECK(cudaSetDevice(ctx.device));
      runner_for(group)(ctx);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpusim-bench: %s failed: %s\n", group.c_str(), e.what());
      failed = true;
    }
  }
  if (have_nvml) {
    nvml_stop();
  }

  if (opts.output) {
    std::ofstream out(*opts.output);
    write_measurements(out, meta, ctx.results);
    out.close();
    if (!out) {
      std::fprintf(stderr, "gpusim-bench: cannot write %s\n", opts.output->c_str());
      return 1;
    }
    std::fprintf(stderr, "gpusim-bench: %zu measurements written to %s\n", ctx.results.size(), opts.output->c_str());
  } else {
    write_measurements(std::cout, meta, ctx.results);
    std::cout.flush();
  }
  if (failed) {
    std::fprintf(stderr, "gpusim-bench: some benchmarks failed (see above); the file holds the others\n");
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace gpusim::bench

int main(int argc, char** argv) {
  using namespace gpusim::bench;
  Options opts;
  try {
    opts = parse_args(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const CliError& e) {
    std::fprintf(stderr, "gpusim-bench: %s\n\n%s", e.what(), usage().c_str());
    return 2;
  }
  if (opts.help) {
    std::fputs(usage().c_str(), stdout);
    return 0;
  }
  try {
    return run(opts);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpusim-bench: %s\n", e.what());
    return 1;
  }
}
