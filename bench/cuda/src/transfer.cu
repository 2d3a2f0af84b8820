// Data-movement benchmarks: host<->device copies (pinned and pageable), peer copies between every
// GPU pair, and NCCL collectives over message sizes with nccl-tests' bus bandwidth.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "common.cuh"
#include "gpusim_bench/collectives.hpp"
#include "gpusim_bench/format.hpp"
#include "gpusim_bench/stats.hpp"
#include "gpusim_bench/sweep.hpp"

#ifdef GPUSIM_HAVE_NCCL
#include <nccl.h>
#define GPUSIM_NCCL_CHECK(call)                                                                  \
  do {                                                                                           \
    const ncclResult_t gpusim_status_ = (call);                                                  \
    if (gpusim_status_ != ncclSuccess)                                                           \
      ::gpusim::bench::fail_call(__FILE__, __LINE__, #call, ncclGetErrorString(gpusim_status_)); \
  } while (0)
#endif

namespace gpusim::bench {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr double kGB = 1e9;

int device_count() {
  int n = 0;
  GPUSIM_CUDA_CHECK(cudaGetDeviceCount(&n));
  return n;
}

std::string device_name(int device) {
  cudaDeviceProp p{};
  GPUSIM_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  return p.name;
}

// Copy sizes: 1 MiB, 16 MiB, 256 MiB (the largest only with --quick), at most --max-bytes.
std::vector<std::uint64_t> copy_sizes(const Context& ctx) {
  const std::uint64_t top = std::min<std::uint64_t>(256 * kMiB, ctx.opts.max_bytes.value_or(256 * kMiB));
  std::vector<std::uint64_t> sizes = geometric_sizes(kMiB, std::max(top, kMiB), 16, false);
  if (ctx.quick()) sizes = {sizes.back()};
  return sizes;
}

}  // namespace

// Host<->device bandwidth: cudaMemcpyAsync of a random buffer from page-locked (cudaMallocHost)
// or pageable (operator new) host memory; bytes / median time (as CUDA's bandwidthTest sample).
void run_copy(Context& ctx) {
  const auto sizes = copy_sizes(ctx);
  const std::uint64_t top = sizes.back();
  DeviceBuffer<float> dev(top / sizeof(float));
  PinnedBuffer pinned(top);
  std::unique_ptr<float[]> pageable(new float[top / sizeof(float)]);
  Stream s;
  xorshift_fill({static_cast<float*>(pinned.get()), top / sizeof(float)}, 3);
  xorshift_fill({pageable.get(), top / sizeof(float)}, 4);
  fill_uniform(dev.get(), dev.size(), 5, s.get());
  for (const bool to_device : {true, false}) {
    for (const bool is_pinned : {true, false}) {
      void* host = is_pinned ? pinned.get() : static_cast<void*>(pageable.get());
      for (const std::uint64_t bytes : sizes) {
        const Timing t = time_op(ctx, s.get(), [&] {
          if (to_device) {
            GPUSIM_CUDA_CHECK(cudaMemcpyAsync(dev.get(), host, bytes, cudaMemcpyHostToDevice, s.get()));
          } else {
            GPUSIM_CUDA_CHECK(cudaMemcpyAsync(host, dev.get(), bytes, cudaMemcpyDeviceToHost, s.get()));
          }
        });
        const std::string benchmark = to_device ? "h2d" : "d2h";
        Measurement m = ctx.row(benchmark + (is_pinned ? "-pinned-" : "-pageable-") + bytes_tag(bytes), benchmark,
                                format_in(static_cast<double>(bytes) / t.seconds, kGB, "GB/s"));
        m.bytes = format_bytes(bytes);
        m.set("pinned", is_pinned);
        m.conditions = std::string("cudaMemcpyAsync ") + (to_device ? "host to device" : "device to host") + ", " +
                       (is_pinned ? "page-locked (cudaMallocHost)" : "pageable") + " host memory; " +
                       timing_note(ctx, t);
        std::fprintf(stderr, "  %-28s %s\n", m.id.c_str(), m.value.c_str());
        ctx.results.push_back(std::move(m));
      }
    }
  }
}

// Peer copies: for every ordered pair (i, j), cudaDeviceCanAccessPeer is reported and
// cudaMemcpyPeerAsync i -> j timed (one direction). Where peer access is possible it is enabled
// in this process's context for the copy and disabled again (a context setting, not a device
// setting); otherwise the driver stages the copy through host memory.
void run_p2p(Context& ctx) {
  const int n = device_count();
  if (n < 2) {
    std::fprintf(stderr, "  p2p: skipped, needs two GPUs (%d visible)\n", n);
    return;
  }
  const std::uint64_t bytes = copy_sizes(ctx).back();
  for (int src = 0; src < n; ++src) {
    for (int dst = 0; dst < n; ++dst) {
      if (src == dst) continue;
      int can = 0;
      GPUSIM_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, src, dst));
      GPUSIM_CUDA_CHECK(cudaSetDevice(dst));
      DeviceBuffer<float> to(bytes / sizeof(float));
      GPUSIM_CUDA_CHECK(cudaSetDevice(src));
      DeviceBuffer<float> from(bytes / sizeof(float));
      bool enabled_here = false;
      if (can != 0) {
        const cudaError_t e = cudaDeviceEnablePeerAccess(dst, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) {
          GPUSIM_CUDA_CHECK(cudaGetLastError());  // clears the (expected) error
        } else {
          GPUSIM_CUDA_CHECK(e);
          enabled_here = true;
        }
      }
      Timing t;
      {
        Stream s;
        fill_uniform(from.get(), from.size(), 6, s.get());
        t = time_op(ctx, s.get(),
                    [&] { GPUSIM_CUDA_CHECK(cudaMemcpyPeerAsync(to.get(), dst, from.get(), src, bytes, s.get())); });
      }
      if (enabled_here) GPUSIM_CUDA_CHECK(cudaDeviceDisablePeerAccess(dst));
      Measurement m = ctx.row("p2p-" + std::to_string(src) + "to" + std::to_string(dst) + "-" + bytes_tag(bytes), "p2p",
                              format_in(static_cast<double>(bytes) / t.seconds, kGB, "GB/s"));
      m.gpus = 2;
      m.bytes = format_bytes(bytes);
      m.set("peer_access", can != 0);
      m.conditions = "cudaMemcpyPeerAsync GPU " + std::to_string(src) + " (" + device_name(src) + ") -> GPU " +
                     std::to_string(dst) + " (" + device_name(dst) + "), one direction, " +
                     (can != 0 ? "peer access enabled" : "no peer access (staged through the host)") + "; " +
                     timing_note(ctx, t);
      std::fprintf(stderr, "  %-28s %s\n", m.id.c_str(), m.value.c_str());
      ctx.results.push_back(std::move(m));
    }
  }
  GPUSIM_CUDA_CHECK(cudaSetDevice(ctx.device));
}

#ifndef GPUSIM_HAVE_NCCL
void run_nccl(Context&) { std::fprintf(stderr, "  nccl: skipped, gpusim-bench was built without NCCL\n"); }
#else

namespace {

// The buffers, stream and events of one rank.
struct Rank {
  int device = 0;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<Event> start, stop;
  DeviceBuffer<float> send, recv;
};

void enqueue(Collective c, std::vector<Rank>& ranks, const std::vector<ncclComm_t>& comms, std::size_t count) {
  GPUSIM_NCCL_CHECK(ncclGroupStart());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    cudaStream_t s = ranks[r].stream->get();
    float* in = ranks[r].send.get();
    float* out = ranks[r].recv.get();
    switch (c) {
      case Collective::kAllReduce:
        GPUSIM_NCCL_CHECK(ncclAllReduce(in, out, count, ncclFloat, ncclSum, comms[r], s));
        break;
      case Collective::kReduceScatter:
        GPUSIM_NCCL_CHECK(ncclReduceScatter(in, out, count, ncclFloat, ncclSum, comms[r], s));
        break;
      case Collective::kAllGather:
        GPUSIM_NCCL_CHECK(ncclAllGather(in, out, count, ncclFloat, comms[r], s));
        break;
    }
  }
  GPUSIM_NCCL_CHECK(ncclGroupEnd());
}

// Seconds of `inner` back-to-back collectives: the longest of the ranks' event-timed spans.
double time_collectives(Collective c, std::vector<Rank>& ranks, const std::vector<ncclComm_t>& comms, std::size_t count,
                        int inner) {
  for (auto& rank : ranks) {
    GPUSIM_CUDA_CHECK(cudaSetDevice(rank.device));
    GPUSIM_CUDA_CHECK(cudaEventRecord(rank.start->get(), rank.stream->get()));
  }
  for (int i = 0; i < inner; ++i) enqueue(c, ranks, comms, count);
  double longest = 0.0;
  for (auto& rank : ranks) {
    GPUSIM_CUDA_CHECK(cudaSetDevice(rank.device));
    GPUSIM_CUDA_CHECK(cudaEventRecord(rank.stop->get(), rank.stream->get()));
  }
  for (auto& rank : ranks) {
    GPUSIM_CUDA_CHECK(cudaEventSynchronize(rank.stop->get()));
    longest = std::max(longest, elapsed_s(*rank.start, *rank.stop));
  }
  return longest;
}

}  // namespace

// NCCL all-reduce, reduce-scatter and all-gather of floats (sum) on 2..N GPUs of this process
// (ncclCommInitAll), over message sizes 8 B .. 1 GiB in x2 steps (x4 with --quick). Reported as
// bus bandwidth per nccl-tests doc/PERFORMANCE.md (see gpusim_bench/collectives.hpp).
void run_nccl(Context& ctx) {
  const int ndev = device_count();
  if (ndev < 2) {
    std::fprintf(stderr, "  nccl: skipped, needs two GPUs (%d visible)\n", ndev);
    return;
  }
  int version = 0;
  GPUSIM_NCCL_CHECK(ncclGetVersion(&version));
  const std::string nccl_version =
      std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." + std::to_string(version % 100);
  std::uint64_t max_msg = ctx.opts.max_bytes.value_or(1ull << 30);
  for (int d = 0; d < ndev; ++d) {
    GPUSIM_CUDA_CHECK(cudaSetDevice(d));
    max_msg = std::min<std::uint64_t>(max_msg, free_device_bytes() / 3);  // send + recv + NCCL's own
  }
  max_msg = std::max<std::uint64_t>(max_msg / 16 * 16, 8);
  const auto sizes = geometric_sizes(8, max_msg, ctx.quick() ? 4 : 2, true);
  std::vector<int> group_sizes;
  for (int n = ctx.quick() ? ndev : 2; n <= ndev; ++n) group_sizes.push_back(n);

  for (const int n : group_sizes) {
    std::vector<int> devices(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d) devices[static_cast<std::size_t>(d)] = d;
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
    GPUSIM_NCCL_CHECK(ncclCommInitAll(comms.data(), n, devices.data()));
    std::vector<Rank> ranks(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d) {
      Rank& rank = ranks[static_cast<std::size_t>(d)];
      rank.device = d;
      GPUSIM_CUDA_CHECK(cudaSetDevice(d));
      rank.stream = std::make_unique<Stream>();
      rank.start = std::make_unique<Event>();
      rank.stop = std::make_unique<Event>();
      rank.send = DeviceBuffer<float>(max_msg / sizeof(float) + 1);
      rank.recv = DeviceBuffer<float>(max_msg / sizeof(float) + 1);
      fill_uniform(rank.send.get(), rank.send.size(), 100 + static_cast<std::uint64_t>(d), rank.stream->get());
    }
    for (const Collective c : {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather}) {
      for (const std::uint64_t size : sizes) {
        const std::size_t count = collective_count(c, size, n, sizeof(float));
        if (count == 0) continue;
        const std::uint64_t bytes = collective_bytes(c, count, n, sizeof(float));
        for (int i = 0; i < ctx.warmup; ++i) enqueue(c, ranks, comms, count);
        const int inner = plan_inner_iterations(time_collectives(c, ranks, comms, count, 1), ctx.sample_target_s, 1000);
        std::vector<double> samples;
        for (int r = 0; r < ctx.reps; ++r) {
          samples.push_back(time_collectives(c, ranks, comms, count, inner) / inner);
        }
        const double t = median(samples);
        const std::string name = collective_name(c);
        Measurement m = ctx.row(name + "-" + std::to_string(n) + "gpu-" + bytes_tag(bytes), name,
                                format_in(busbw(c, static_cast<double>(bytes), t, n), kGB, "GB/s"));
        m.gpus = n;
        m.bytes = format_bytes(bytes);
        m.set("algorithm", "auto");
        m.conditions = "NCCL " + nccl_version + ", float sum, " + std::to_string(n) +
                       " GPUs in one process (ncclCommInitAll); bus bandwidth per nccl-tests PERFORMANCE.md (algbw " +
                       format_in(algbw(static_cast<double>(bytes), t), kGB, "GB/s") + ", time " +
                       format_quantity(t, Unit::kTime) + "); median of " + std::to_string(ctx.reps) + " samples (" +
                       std::to_string(inner) + " operations each) after " + std::to_string(ctx.warmup) +
                       " warm-up, CUDA events, slowest rank";
        std::fprintf(stderr, "  %-32s %s\n", m.id.c_str(), m.value.c_str());
        ctx.results.push_back(std::move(m));
      }
    }
    for (auto& rank : ranks) {
      GPUSIM_CUDA_CHECK(cudaSetDevice(rank.device));
      GPUSIM_CUDA_CHECK(cudaStreamSynchronize(rank.stream->get()));
    }
    for (auto comm : comms) GPUSIM_NCCL_CHECK(ncclCommDestroy(comm));
  }
  GPUSIM_CUDA_CHECK(cudaSetDevice(ctx.device));
}
#endif

}  // namespace gpusim::bench
