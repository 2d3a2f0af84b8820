// Board power while known kernels run, from NVML, plus the NVML parts of [meta] (driver version,
// maximum SM and memory clocks, enforced power limit). Read-only: nothing here sets a clock, a
// power limit or any other device setting.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>

#include "common.cuh"
#include "gpusim_bench/format.hpp"
#include "gpusim_bench/stats.hpp"
#include "gpusim_bench/sweep.hpp"

#ifdef GPUSIM_HAVE_NVML
#include <nvml.h>
#define GPUSIM_NVML_CHECK(call)                                                               \
  do {                                                                                        \
    const nvmlReturn_t gpusim_status_ = (call);                                               \
    if (gpusim_status_ != NVML_SUCCESS)                                                       \
      ::gpusim::bench::fail_call(__FILE__, __LINE__, #call, nvmlErrorString(gpusim_status_)); \
  } while (0)
// Checked, but a failure only leaves a [meta] field out: true when the call succeeded.
#define GPUSIM_NVML_OK(call) ::gpusim::bench::nvml_ok((call), __FILE__, __LINE__, #call)
#endif

namespace gpusim::bench {

#ifndef GPUSIM_HAVE_NVML

bool nvml_start() {
  std::fprintf(stderr, "gpusim-bench: built without NVML: no power benchmark, no power limit in [meta]\n");
  return false;
}
void nvml_stop() {}
NvmlInfo nvml_info(int) { return {}; }
void run_power(Context&) { std::fprintf(stderr, "  power: skipped, gpusim-bench was built without NVML\n"); }

#else

namespace {

bool g_nvml = false;

bool nvml_ok(nvmlReturn_t status, const char* file, int line, const char* call) {
  if (status == NVML_SUCCESS) return true;
  warn_call(file, line, call, nvmlErrorString(status));
  return false;
}

// NVML handle of a CUDA device, matched by PCI bus id (CUDA and NVML may number devices
// differently, e.g. under CUDA_VISIBLE_DEVICES).
nvmlDevice_t nvml_device(int cuda_device) {
  char bus_id[64] = {};
  GPUSIM_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_device));
  nvmlDevice_t dev{};
  GPUSIM_NVML_CHECK(nvmlDeviceGetHandleByPciBusId_v2(bus_id, &dev));
  return dev;
}

// Samples nvmlDeviceGetPowerUsage (board power, mW) every `period` on a background thread.
class PowerSampler {
 public:
  PowerSampler(nvmlDevice_t dev, std::chrono::milliseconds period)
      : thread_([this, dev, period] {
          try {
            while (!stop_.load()) {
              unsigned int mw = 0;
              GPUSIM_NVML_CHECK(nvmlDeviceGetPowerUsage(dev, &mw));
              watts_.push_back(mw * 1e-3);
              std::this_thread::sleep_for(period);
            }
          } catch (...) {
            error_ = std::current_exception();
          }
        }) {}
  ~PowerSampler() {
    if (thread_.joinable()) {
      stop_ = true;
      thread_.join();
    }
  }
  PowerSampler(const PowerSampler&) = delete;
  PowerSampler& operator=(const PowerSampler&) = delete;

  // Stops sampling and returns the samples in watts (rethrows a sampling error).
  std::vector<double> finish() {
    stop_ = true;
    thread_.join();
    if (error_) std::rethrow_exception(error_);
    return watts_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<double> watts_;
  std::exception_ptr error_;
  std::thread thread_;  // last: starts after the members it uses exist
};

using Clock = std::chrono::steady_clock;

// Keeps `w` running back to back for `seconds`, synchronising every ~20 ms of work so the queue
// never runs far ahead of the clock.
void run_for(Workload& w, cudaStream_t s, int batch, double seconds) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    for (int i = 0; i < batch; ++i) w.launch(s);
    GPUSIM_CUDA_CHECK(cudaStreamSynchronize(s));
  }
}

}  // namespace

bool nvml_start() {
  const nvmlReturn_t status = nvmlInit_v2();
  if (status != NVML_SUCCESS) {
    std::fprintf(stderr, "gpusim-bench: nvmlInit failed (%s): no power benchmark, no power limit in [meta]\n",
                 nvmlErrorString(status));
    return false;
  }
  g_nvml = true;
  return true;
}

void nvml_stop() {
  if (g_nvml) GPUSIM_NVML_OK(nvmlShutdown());
  g_nvml = false;
}

NvmlInfo nvml_info(int cuda_device) {
  NvmlInfo info;
  if (!g_nvml) return info;
  try {
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    if (GPUSIM_NVML_OK(nvmlSystemGetDriverVersion(driver, sizeof driver))) info.driver = driver;
    const nvmlDevice_t dev = nvml_device(cuda_device);
    unsigned int mhz = 0, mw = 0;
    if (GPUSIM_NVML_OK(nvmlDeviceGetMaxClockInfo(dev, NVML_CLOCK_SM, &mhz))) {
      info.sm_clock = std::to_string(mhz) + " MHz";
    }
    if (GPUSIM_NVML_OK(nvmlDeviceGetMaxClockInfo(dev, NVML_CLOCK_MEM, &mhz))) {
      info.memory_clock = std::to_string(mhz) + " MHz";
    }
    if (GPUSIM_NVML_OK(nvmlDeviceGetEnforcedPowerLimit(dev, &mw))) {
      info.power_limit = format_quantity(mw * 1e-3, Unit::kPower);
    }
  } catch (const BenchError& e) {
    // [meta] falls back to CUDA's clocks; the run goes on.
    std::fprintf(stderr, "gpusim-bench: warning: %s\n", e.what());
  }
  return info;
}

// Median board power while one kernel runs back to back: 1 s (0.5 s with --quick) of the kernel
// to let power settle, then nvmlDeviceGetPowerUsage every 20 ms for 2 s (1 s) while it keeps
// running. NVML reports board power averaged by the driver (over up to 1 s on recent GPUs).
void run_power(Context& ctx) {
  if (!g_nvml) {
    std::fprintf(stderr, "  power: skipped, NVML is not available\n");
    return;
  }
  const double settle_s = ctx.quick() ? 0.5 : 1.0;
  const double sample_s = ctx.quick() ? 1.0 : 2.0;
  const nvmlDevice_t dev = nvml_device(ctx.device);
  const std::size_t stream_bytes = std::min<std::size_t>(1ull << 30, free_device_bytes() / 4);

  struct Plan {
    const char* kind;  // "stream_copy", "stream_triad" or a GEMM dtype
    std::int64_t edge;
  };
  std::vector<Plan> plans{{"stream_copy", 0}, {"bf16", 8192}};
  if (!ctx.quick()) {
    plans = {{"stream_copy", 0}, {"stream_triad", 0}, {"fp32", 8192}, {"tf32", 8192}, {"fp16", 8192},
             {"bf16", 1024},     {"bf16", 2048},      {"bf16", 4096}, {"bf16", 8192}, {"fp8", 8192}};
  }
  Stream s;
  for (const Plan& plan : plans) {
    const std::string kind = plan.kind;
    std::unique_ptr<Workload> w = kind.rfind("stream_", 0) == 0
                                      ? make_stream_workload(ctx, kind, stream_bytes)
                                      : make_gemm_workload(ctx, kind, plan.edge, plan.edge, plan.edge);
    if (!w) {
      std::fprintf(stderr, "  power %s %lld: skipped (dtype not supported here or not enough memory)\n", plan.kind,
                   static_cast<long long>(plan.edge));
      continue;
    }
    Event start, stop;
    GPUSIM_CUDA_CHECK(cudaEventRecord(start.get(), s.get()));
    w->launch(s.get());
    GPUSIM_CUDA_CHECK(cudaEventRecord(stop.get(), s.get()));
    GPUSIM_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    const int batch = plan_inner_iterations(elapsed_s(start, stop), 0.02, 100000);

    run_for(*w, s.get(), batch, settle_s);
    PowerSampler sampler(dev, std::chrono::milliseconds(20));
    run_for(*w, s.get(), batch, sample_s);
    const std::vector<double> watts = sampler.finish();
    if (watts.empty()) {
      std::fprintf(stderr, "  power %s: no samples\n", w->name.c_str());
      continue;
    }
    Measurement m = ctx.row("power-" + w->name, "power", format_quantity(median(watts), Unit::kPower));
    m.set("kernel", w->name);
    if (w->intensity) m.set("intensity", std::stod(format_number(*w->intensity, 4)));
    m.conditions = "median of " + std::to_string(watts.size()) + " nvmlDeviceGetPowerUsage samples every 20 ms over " +
                   format_number(sample_s, 2) + " s after " + format_number(settle_s, 2) +
                   " s of the kernel running back to back (" + std::to_string(batch) +
                   " launches between synchronisations); p10 " + format_quantity(percentile(watts, 10), Unit::kPower) +
                   ", p90 " + format_quantity(percentile(watts, 90), Unit::kPower);
    std::fprintf(stderr, "  %-24s %s\n", m.id.c_str(), m.value.c_str());
    ctx.results.push_back(std::move(m));
  }
}

#endif

}  // namespace gpusim::bench
