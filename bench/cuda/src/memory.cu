// Memory-system benchmarks: DRAM/L2 bandwidth over working sets (STREAM kernels), L2 bandwidth on
// an L2-resident set, and load-to-use latency per level (pointer chase).
#include <algorithm>
#include <cstdio>

#include "common.cuh"
#include "gpusim_bench/format.hpp"
#include "gpusim_bench/stats.hpp"
#include "gpusim_bench/sweep.hpp"

namespace gpusim::bench {
namespace {

constexpr int kThreads = 256;
constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGiB = 1ull << 30;

// STREAM Copy (McCalpin, "Memory Bandwidth and Machine Balance", 1995): b[i] = a[i]. 16-byte
// (float4) accesses, grid-stride loop over a grid that fills every SM.
__global__ void stream_copy_kernel(const float4* __restrict__ a, float4* __restrict__ b, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    b[i] = a[i];
  }
}

// STREAM Triad (McCalpin): a[i] = b[i] + s * c[i]; 2 FLOPs per 12 bytes of traffic per float.
__global__ void stream_triad_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                                    float s, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float4 x = b[i];
    const float4 y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

// Read-only stream: sums a[i]. The data are in (0, 1], so the sum is never negative and the store
// to `sink` never happens, but the compiler cannot know that and must keep every load.
__global__ void stream_read_kernel(const float4* __restrict__ a, std::size_t n, float* sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  float acc = 0.0f;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float4 v = a[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc < 0.0f) *sink = acc;
}

// L2 bandwidth: `passes` reads of an L2-resident set with ld.global.cg (__ldcg: cached in L2 only,
// so repeated passes cannot hit in L1). Method of Jia et al., "Dissecting the NVIDIA Volta GPU
// Architecture via Microbenchmarking" (2018), §3.
__global__ void l2_read_kernel(const float4* __restrict__ a, std::size_t n, int passes, float* sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  float acc = 0.0f;
  for (int p = 0; p < passes; ++p) {
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
      const float4 v = __ldcg(a + i);
      acc += v.x + v.y + v.z + v.w;
    }
  }
  if (acc < 0.0f) *sink = acc;
}

// Writes the pointer-chase chain: node i (at base + i*stride) holds the address of node next[i].
__global__ void chase_build_kernel(char* base, const std::uint32_t* next, std::size_t nodes, std::size_t stride) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < nodes; i += step) {
    *reinterpret_cast<unsigned long long*>(base + i * stride) =
        reinterpret_cast<unsigned long long>(base + static_cast<std::size_t>(next[i]) * stride);
  }
}

template <bool kCacheInL1>
__device__ __forceinline__ unsigned long long chase_load(unsigned long long p) {
  unsigned long long r;
  if (kCacheInL1) {
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(r) : "l"(p));
  } else {
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(r) : "l"(p));
  }
  return r;
}

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Load-to-use latency by pointer chasing (Wong et al., "Demystifying GPU Microarchitecture through
// Microbenchmarking", ISPASS 2010; Jia et al. 2018): one thread, each load's address is the
// previous load's value, so loads cannot overlap. `warm` untimed steps fill the level under
// test, then `steps` timed steps; cycles by clock64 (SM clock), nanoseconds by %globaltimer.
// *pos carries the position from one launch to the next so DRAM samples keep meeting new nodes.
template <bool kCacheInL1>
__global__ void chase_kernel(unsigned long long* pos, int warm, int steps, unsigned long long* result) {
  unsigned long long p = *pos;
  for (int i = 0; i < warm; ++i) p = chase_load<kCacheInL1>(p);
  const long long c0 = clock64();
  const unsigned long long t0 = globaltimer_ns();
  for (int i = 0; i < steps; ++i) p = chase_load<kCacheInL1>(p);
  const long long c1 = clock64();
  const unsigned long long t1 = globaltimer_ns();
  *pos = p;
  result[0] = static_cast<unsigned long long>(c1 - c0);
  result[1] = t1 - t0;
}

template <class Kernel>
int full_grid(const Context& ctx, Kernel kernel) {
  int per_sm = 0;
  GPUSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  return ctx.prop.multiProcessorCount * std::max(per_sm, 1);
}

std::string grid_note(const Context& ctx, int blocks) {
  return "grid " + std::to_string(ctx.prop.multiProcessorCount) + "x" +
         std::to_string(blocks / ctx.prop.multiProcessorCount) + " blocks of " + std::to_string(kThreads);
}

// Largest usable working set: the request, capped at 80 % of free device memory.
std::uint64_t capped(std::uint64_t want) {
  const auto room = static_cast<std::uint64_t>(static_cast<double>(free_device_bytes()) * 0.8);
  return std::min(want, room) / 16 * 16;
}

class StreamWorkload final : public Workload {
 public:
  StreamWorkload(const Context& ctx, const std::string& kind, std::size_t array_bytes)
      : triad_(kind == "stream_triad"), n_(array_bytes / sizeof(float4)), a_(n_), b_(n_), c_(triad_ ? n_ : 0) {
    name = kind;
    intensity = triad_ ? 2.0 / 12.0 : 0.0;  // triad: 2 FLOPs per 12 bytes; copy: none
    Stream s;
    fill_uniform(reinterpret_cast<float*>(a_.get()), 4 * n_, 11, s.get());
    fill_uniform(reinterpret_cast<float*>(b_.get()), 4 * n_, 12, s.get());
    if (triad_) fill_uniform(reinterpret_cast<float*>(c_.get()), 4 * n_, 13, s.get());
    GPUSIM_CUDA_CHECK(cudaStreamSynchronize(s.get()));
    blocks_ = triad_ ? full_grid(ctx, stream_triad_kernel) : full_grid(ctx, stream_copy_kernel);
  }
  void launch(cudaStream_t s) override {
    if (triad_) {
      stream_triad_kernel<<<blocks_, kThreads, 0, s>>>(a_.get(), b_.get(), c_.get(), 3.0f, n_);
    } else {
      stream_copy_kernel<<<blocks_, kThreads, 0, s>>>(a_.get(), b_.get(), n_);
    }
    GPUSIM_KERNEL_CHECK();
  }

 private:
  bool triad_;
  std::size_t n_;
  DeviceBuffer<float4> a_, b_, c_;
  int blocks_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_stream_workload(const Context& ctx, const std::string& kind, std::size_t array_bytes) {
  return std::make_unique<StreamWorkload>(ctx, kind, array_bytes);
}

void run_stream(Context& ctx) {
  const std::uint64_t max_ws = capped(ctx.opts.max_bytes.value_or(4 * kGiB));
  if (max_ws < kMiB) {
    std::fprintf(stderr, "  stream: skipped, less than 1 MiB of free device memory\n");
    return;
  }
  // One pool holds the arrays of every kernel: copy uses [a b], triad [a b c], read [a].
  DeviceBuffer<float4> pool(max_ws / sizeof(float4));
  DeviceBuffer<float> sink(1);
  Stream s;
  fill_uniform(reinterpret_cast<float*>(pool.get()), pool.size() * 4, 1, s.get());
  const std::uint64_t factor = ctx.quick() ? 4 : 2;
  struct Kind {
    const char* name;
    int arrays;
  };
  for (const Kind kind : {Kind{"stream_copy", 2}, Kind{"stream_triad", 3}, Kind{"stream_read", 1}}) {
    const std::string name = kind.name;
    const int blocks = name == "stream_copy"    ? full_grid(ctx, stream_copy_kernel)
                       : name == "stream_triad" ? full_grid(ctx, stream_triad_kernel)
                                                : full_grid(ctx, stream_read_kernel);
    for (const std::uint64_t array_bytes : stream_array_sizes(kMiB, max_ws, kind.arrays, factor)) {
      const std::size_t n = array_bytes / sizeof(float4);
      float4* a = pool.get();
      float4* b = a + n;
      float4* c = b + n;
      const std::function<void()> op = [&] {
        if (name == "stream_copy") {
          stream_copy_kernel<<<blocks, kThreads, 0, s.get()>>>(a, b, n);
        } else if (name == "stream_triad") {
          stream_triad_kernel<<<blocks, kThreads, 0, s.get()>>>(a, b, c, 3.0f, n);
        } else {
          stream_read_kernel<<<blocks, kThreads, 0, s.get()>>>(a, n, sink.get());
        }
        GPUSIM_KERNEL_CHECK();
      };
      const Timing t = time_op(ctx, s.get(), op);
      // STREAM counts every byte read and written: copy 2, triad 3, read 1 x the array.
      const std::uint64_t bytes = array_bytes * static_cast<std::uint64_t>(kind.arrays);
      Measurement m = ctx.row(name + "-" + bytes_tag(bytes), name,
                              format_quantity(static_cast<double>(bytes) / t.seconds, Unit::kBandwidth));
      m.bytes = format_bytes(bytes);
      m.conditions = timing_note(ctx, t) + "; " + grid_note(ctx, blocks) + "; float4 accesses; " +
                     std::to_string(kind.arrays) + " arrays of " + format_bytes(array_bytes) +
                     ", bytes read + written counted as STREAM does";
      std::fprintf(stderr, "  %-24s %s\n", m.id.c_str(), m.value.c_str());
      ctx.results.push_back(std::move(m));
    }
  }
}

void run_l2(Context& ctx) {
  // A quarter of the L2: resident even where the L2 is split into two partitions (A100, H100).
  const std::uint64_t ws = static_cast<std::uint64_t>(ctx.prop.l2CacheSize) / 4 / (64 * 1024) * (64 * 1024);
  if (ws == 0) {
    std::fprintf(stderr, "  l2: skipped, L2 size unknown\n");
    return;
  }
  DeviceBuffer<float4> a(ws / sizeof(float4));
  DeviceBuffer<float> sink(1);
  Stream s;
  fill_uniform(reinterpret_cast<float*>(a.get()), a.size() * 4, 2, s.get());
  const int passes = static_cast<int>(std::max<std::uint64_t>(1, kGiB / ws));  // ~1 GiB read per launch
  const int blocks = full_grid(ctx, l2_read_kernel);
  const std::function<void()> op = [&] {
    l2_read_kernel<<<blocks, kThreads, 0, s.get()>>>(a.get(), a.size(), passes, sink.get());
    GPUSIM_KERNEL_CHECK();
  };
  const Timing t = time_op(ctx, s.get(), op);
  const double bytes = static_cast<double>(ws) * passes;
  Measurement m =
      ctx.row("l2_bandwidth-" + bytes_tag(ws), "l2_bandwidth", format_quantity(bytes / t.seconds, Unit::kBandwidth));
  m.bytes = format_bytes(ws);
  m.conditions = timing_note(ctx, t) + "; " + grid_note(ctx, blocks) + "; " + std::to_string(passes) +
                 " passes of float4 ld.global.cg reads over a quarter of the " +
                 format_bytes(static_cast<std::uint64_t>(ctx.prop.l2CacheSize)) + " L2";
  std::fprintf(stderr, "  %-24s %s\n", m.id.c_str(), m.value.c_str());
  ctx.results.push_back(std::move(m));
}

void run_latency(Context& ctx) {
  constexpr std::size_t kStride = 256;  // > the 128 B cache line: every hop touches a new line
  const auto l2 = static_cast<std::uint64_t>(ctx.prop.l2CacheSize);
  struct Level {
    const char* benchmark;
    std::uint64_t bytes;
    bool l1;    // ld.ca (cached in L1) or ld.cg (L2 only)
    bool warm;  // walk the whole chain once before timing
    int steps;
    const char* why;
  };
  const Level levels[] = {
      {"latency_l1", 16 * 1024, true, true, 1 << 16, "fits in L1"},
      {"latency_l2", std::clamp<std::uint64_t>(l2 / 4, kMiB, 4 * kMiB), false, true, 1 << 15,
       "fits in L2, L1 bypassed"},
      {"latency_dram", std::max<std::uint64_t>(16 * l2, 256 * kMiB), false, false, 1 << 15,
       "16x the L2 (or 256 MiB), L2 flushed first; includes TLB misses"},
  };
  Stream s;
  for (const Level& level : levels) {
    const std::uint64_t bytes = std::min<std::uint64_t>(level.bytes, capped(level.bytes) / kStride * kStride);
    const std::size_t nodes = bytes / kStride;
    if (nodes < 2) {
      std::fprintf(stderr, "  %s: skipped, not enough free device memory\n", level.benchmark);
      continue;
    }
    DeviceBuffer<char> chain(nodes * kStride);
    {
      const std::vector<std::uint32_t> next = single_cycle_permutation(nodes, 0x5eed + nodes);
      DeviceBuffer<std::uint32_t> next_d(nodes);
      GPUSIM_CUDA_CHECK(cudaMemcpy(next_d.get(), next.data(), nodes * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
      chase_build_kernel<<<256, kThreads, 0, s.get()>>>(chain.get(), next_d.get(), nodes, kStride);
      GPUSIM_KERNEL_CHECK();
      GPUSIM_CUDA_CHECK(cudaStreamSynchronize(s.get()));
    }
    DeviceBuffer<unsigned long long> pos(1), result(2);
    const auto start = reinterpret_cast<unsigned long long>(chain.get());
    GPUSIM_CUDA_CHECK(cudaMemcpy(pos.get(), &start, sizeof start, cudaMemcpyHostToDevice));
    if (!level.warm) {
      // Evict the freshly written chain from L2 by writing twice the L2 elsewhere.
      DeviceBuffer<char> scratch(2 * l2);
      GPUSIM_CUDA_CHECK(cudaMemsetAsync(scratch.get(), 1, scratch.size(), s.get()));
      GPUSIM_CUDA_CHECK(cudaStreamSynchronize(s.get()));
    }
    const int warm = level.warm ? static_cast<int>(std::min<std::size_t>(2 * nodes, 1 << 20)) : 0;
    std::vector<double> cycles, ns;
    for (int r = 0; r < ctx.reps; ++r) {
      if (level.l1) {
        chase_kernel<true><<<1, 1, 0, s.get()>>>(pos.get(), warm, level.steps, result.get());
      } else {
        chase_kernel<false><<<1, 1, 0, s.get()>>>(pos.get(), warm, level.steps, result.get());
      }
      GPUSIM_KERNEL_CHECK();
      unsigned long long host[2] = {0, 0};
      GPUSIM_CUDA_CHECK(cudaMemcpyAsync(host, result.get(), sizeof host, cudaMemcpyDeviceToHost, s.get()));
      GPUSIM_CUDA_CHECK(cudaStreamSynchronize(s.get()));
      cycles.push_back(static_cast<double>(host[0]) / level.steps);
      ns.push_back(static_cast<double>(host[1]) / level.steps);
    }
    Measurement m = ctx.row(level.benchmark, level.benchmark, format_quantity(median(cycles), Unit::kCycles));
    m.bytes = format_bytes(nodes * kStride);
    m.set("ns", std::stod(format_number(median(ns), 4)));
    m.conditions = "single-thread pointer chase (Wong et al. 2010, Jia et al. 2018), " + std::to_string(level.steps) +
                   " dependent 8-byte " + (level.l1 ? "ld.global.ca" : "ld.global.cg") +
                   " loads per sample over a random single-cycle permutation of " + std::to_string(nodes) +
                   " nodes 256 B apart (" + level.why + "); median of " + std::to_string(ctx.reps) +
                   " samples; cycles by clock64, ns by %globaltimer";
    std::fprintf(stderr, "  %-24s %s (%s ns)\n", m.id.c_str(), m.value.c_str(), format_number(median(ns), 4).c_str());
    ctx.results.push_back(std::move(m));
  }
}

}  // namespace gpusim::bench
