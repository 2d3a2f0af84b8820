// Compute-side benchmarks: GEMM throughput through cuBLASLt per dtype over square and transformer
// shapes, and kernel launch overhead (eager launches and a CUDA graph).
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdio>

#include "common.cuh"
#include "gpusim_bench/format.hpp"
#include "gpusim_bench/sweep.hpp"

namespace gpusim::bench {
namespace {

#define GPUSIM_CUBLAS_CHECK(call)                                                                     \
  do {                                                                                                \
    const cublasStatus_t gpusim_status_ = (call);                                                     \
    if (gpusim_status_ != CUBLAS_STATUS_SUCCESS)                                                      \
      ::gpusim::bench::fail_call(__FILE__, __LINE__, #call, cublasLtGetStatusString(gpusim_status_)); \
  } while (0)
#define GPUSIM_CUBLAS_WARN(call)                                                                      \
  do {                                                                                                \
    const cublasStatus_t gpusim_status_ = (call);                                                     \
    if (gpusim_status_ != CUBLAS_STATUS_SUCCESS)                                                      \
      ::gpusim::bench::warn_call(__FILE__, __LINE__, #call, cublasLtGetStatusString(gpusim_status_)); \
  } while (0)

constexpr std::size_t kWorkspaceBytes = 32ull << 20;  // cuBLAS's recommendation for Hopper

// GEMM configurations as training frameworks run them: fp32 accumulation everywhere; fp16/bf16
// in and out; tf32 = fp32 data on tensor cores; fp8 = e4m3 inputs with bf16 output (cuBLASLt's
// FP8 GEMM, compute capability >= 8.9, A transposed as FP8 requires).
struct DtypeSpec {
  const char* name;
  cudaDataType_t ab;
  cudaDataType_t c;
  cublasComputeType_t compute;
  int ab_bytes;
  int c_bytes;
  int min_cc;  // 10 * major + minor
};
constexpr DtypeSpec kDtypes[] = {
    {"fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4, 0},
    {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 80},
    {"fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 0},
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 80},
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 89},
};

const DtypeSpec* find_dtype(const std::string& name) {
  for (const auto& d : kDtypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

int compute_capability(const Context& ctx) { return 10 * ctx.prop.major + ctx.prop.minor; }

// Uniform (0, 1] floats mapped to (-1, 1] and converted to the element type.
__device__ __forceinline__ void store_as(float v, float* out) { *out = v; }
__device__ __forceinline__ void store_as(float v, __half* out) { *out = __float2half(v); }
__device__ __forceinline__ void store_as(float v, __nv_bfloat16* out) { *out = __float2bfloat16(v); }
__device__ __forceinline__ void store_as(float v, __nv_fp8_e4m3* out) { *out = __nv_fp8_e4m3(v); }

template <class T>
__global__ void convert_kernel(const float* in, T* out, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    store_as(2.0f * in[i] - 1.0f, out + i);
  }
}

// Random matrix of n elements of `type` at dst (staging holds n floats).
void fill_matrix(void* dst, cudaDataType_t type, std::size_t n, float* staging, std::uint64_t seed, cudaStream_t s) {
  fill_uniform(staging, n, seed, s);
  switch (type) {
    case CUDA_R_32F:
      convert_kernel<<<1024, 256, 0, s>>>(staging, static_cast<float*>(dst), n);
      break;
    case CUDA_R_16F:
      convert_kernel<<<1024, 256, 0, s>>>(staging, static_cast<__half*>(dst), n);
      break;
    case CUDA_R_16BF:
      convert_kernel<<<1024, 256, 0, s>>>(staging, static_cast<__nv_bfloat16*>(dst), n);
      break;
    default:
      convert_kernel<<<1024, 256, 0, s>>>(staging, static_cast<__nv_fp8_e4m3*>(dst), n);
      break;
  }
  GPUSIM_KERNEL_CHECK();
}

// One cuBLASLt matmul D = alpha * op(A) * B + beta * C with D = C, in "TN" layout (column-major,
// A stored k x m and transposed, B k x n, C m x n), beta = 0, algorithm = cuBLASLt heuristic #1.
class LtGemm {
 public:
  LtGemm(const DtypeSpec& d, std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed)
      : d_(d), m_(m), n_(n), k_(k) {
    const auto mu = static_cast<std::size_t>(m), nu = static_cast<std::size_t>(n), ku = static_cast<std::size_t>(k);
    a_ = DeviceBuffer<char>(mu * ku * d.ab_bytes);
    b_ = DeviceBuffer<char>(ku * nu * d.ab_bytes);
    c_ = DeviceBuffer<char>(mu * nu * d.c_bytes);
    workspace_ = DeviceBuffer<char>(kWorkspaceBytes);
    {
      Stream s;
      DeviceBuffer<float> staging(std::max(mu * ku, ku * nu));
      fill_matrix(a_.get(), d.ab, mu * ku, staging.get(), seed, s.get());
      fill_matrix(b_.get(), d.ab, ku * nu, staging.get(), seed + 1, s.get());
      GPUSIM_CUDA_CHECK(cudaStreamSynchronize(s.get()));
    }
    GPUSIM_CUBLAS_CHECK(cublasLtCreate(&lt_));
    GPUSIM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, d.compute, CUDA_R_32F));
    const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    GPUSIM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
    GPUSIM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb));
    GPUSIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la_, d.ab, ku, mu, k));
    GPUSIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb_, d.ab, ku, nu, k));
    GPUSIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc_, d.c, mu, nu, m));
    cublasLtMatmulPreference_t pref = nullptr;
    GPUSIM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const std::uint64_t ws = kWorkspaceBytes;
    GPUSIM_CUBLAS_CHECK(
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_, op_, la_, lb_, lc_, lc_, pref, 1, &result, &found);
    GPUSIM_CUBLAS_WARN(cublasLtMatmulPreferenceDestroy(pref));
    if (st != CUBLAS_STATUS_NOT_SUPPORTED) {
      GPUSIM_CUBLAS_CHECK(st);
    }
    has_algo_ = st == CUBLAS_STATUS_SUCCESS && found > 0;
    algo_ = result.algo;
  }
  ~LtGemm() {
    if (lc_ != nullptr) GPUSIM_CUBLAS_WARN(cublasLtMatrixLayoutDestroy(lc_));
    if (lb_ != nullptr) GPUSIM_CUBLAS_WARN(cublasLtMatrixLayoutDestroy(lb_));
    if (la_ != nullptr) GPUSIM_CUBLAS_WARN(cublasLtMatrixLayoutDestroy(la_));
    if (op_ != nullptr) GPUSIM_CUBLAS_WARN(cublasLtMatmulDescDestroy(op_));
    if (lt_ != nullptr) GPUSIM_CUBLAS_WARN(cublasLtDestroy(lt_));
  }
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  bool has_algo() const { return has_algo_; }
  void launch(cudaStream_t s) {
    const float alpha = 1.0f, beta = 0.0f;
    GPUSIM_CUBLAS_CHECK(cublasLtMatmul(lt_, op_, &alpha, a_.get(), la_, b_.get(), lb_, &beta, c_.get(), lc_, c_.get(),
                                       lc_, &algo_, workspace_.get(), kWorkspaceBytes, s));
  }
  double intensity() const { return gemm_intensity(m_, n_, k_, d_.ab_bytes, d_.c_bytes); }

 private:
  const DtypeSpec& d_;
  std::int64_t m_, n_, k_;
  DeviceBuffer<char> a_, b_, c_, workspace_;
  cublasLtHandle_t lt_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool has_algo_ = false;
};

// Device bytes one GEMM needs: A, B, C, the float staging of the larger input, the workspace.
std::size_t gemm_bytes(const DtypeSpec& d, std::int64_t m, std::int64_t n, std::int64_t k) {
  const auto mu = static_cast<std::size_t>(m), nu = static_cast<std::size_t>(n), ku = static_cast<std::size_t>(k);
  return (mu * ku + ku * nu) * d.ab_bytes + mu * nu * d.c_bytes + std::max(mu * ku, ku * nu) * 4 + kWorkspaceBytes;
}

class GemmWorkload final : public Workload {
 public:
  GemmWorkload(const DtypeSpec& d, std::int64_t m, std::int64_t n, std::int64_t k) : gemm_(d, m, n, k, 77) {}
  void launch(cudaStream_t s) override { gemm_.launch(s); }
  LtGemm gemm_;
};

__global__ void empty_kernel() {}

}  // namespace

std::unique_ptr<Workload> make_gemm_workload(const Context& ctx, const std::string& dtype, std::int64_t m,
                                             std::int64_t n, std::int64_t k) {
  const DtypeSpec* d = find_dtype(dtype);
  if (d == nullptr || compute_capability(ctx) < d->min_cc || gemm_bytes(*d, m, n, k) > free_device_bytes() * 9 / 10) {
    return nullptr;
  }
  auto w = std::make_unique<GemmWorkload>(*d, m, n, k);
  if (!w->gemm_.has_algo()) return nullptr;
  w->name = "gemm-" + dtype + "-" + std::to_string(m);
  w->intensity = w->gemm_.intensity();
  return w;
}

// GEMM throughput = 2mnk / median time, per dtype, over square shapes 256..16384 and the
// transformer-layer shapes of --hidden/--ffn/--tokens.
void run_gemm(Context& ctx) {
  std::vector<GemmShape> shapes;
  for (const auto edge : square_gemm_sizes(256, 16384, ctx.quick() ? 4 : 2)) {
    shapes.push_back({"square", edge, edge, edge});
  }
  if (ctx.opts.hidden) {
    for (const auto& shape : transformer_gemm_shapes(*ctx.opts.hidden, *ctx.opts.ffn, *ctx.opts.tokens)) {
      shapes.push_back(shape);
    }
  } else {
    std::fprintf(stderr, "  (no --hidden: transformer shapes skipped)\n");
  }
  Stream s;
  for (const DtypeSpec& d : kDtypes) {
    if (compute_capability(ctx) < d.min_cc) {
      std::fprintf(stderr, "  gemm %s: skipped, needs compute capability %d.%d\n", d.name, d.min_cc / 10,
                   d.min_cc % 10);
      continue;
    }
    for (const GemmShape& shape : shapes) {
      const std::string dims = std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k);
      const std::string id =
          std::string("gemm-") + d.name + "-" + (shape.name == "square" ? "" : shape.name + "-") + dims;
      if (gemm_bytes(d, shape.m, shape.n, shape.k) > free_device_bytes() * 9 / 10) {
        std::fprintf(stderr, "  %s: skipped, not enough device memory\n", id.c_str());
        continue;
      }
      LtGemm gemm(d, shape.m, shape.n, shape.k, 1000);
      if (!gemm.has_algo()) {
        std::fprintf(stderr, "  %s: skipped, cuBLASLt has no algorithm for it\n", id.c_str());
        continue;
      }
      const Timing t = time_op(ctx, s.get(), [&] { gemm.launch(s.get()); });
      Measurement m =
          ctx.row(id, "gemm", format_quantity(gemm_flops(shape.m, shape.n, shape.k) / t.seconds, Unit::kFlopRate));
      m.set("dtype", d.name).set("m", shape.m).set("n", shape.n).set("k", shape.k);
      std::string what = "cuBLASLt heuristic algorithm, TN layout, fp32 accumulate, beta 0, 32 MiB workspace";
      if (shape.name != "square") {
        what += "; transformer " + shape.name + " of H=" + std::to_string(*ctx.opts.hidden) +
                " F=" + std::to_string(*ctx.opts.ffn) + " T=" + std::to_string(*ctx.opts.tokens);
      }
      m.conditions = what + "; random inputs in (-1, 1]; " + timing_note(ctx, t);
      std::fprintf(stderr, "  %-36s %s\n", m.id.c_str(), m.value.c_str());
      ctx.results.push_back(std::move(m));
    }
  }
}

// Launch overhead: an empty kernel <<<1, 1>>> launched N times back to back on one stream, timed
// with events around all N (per-launch cost as the GPU sees it), then the same N launches
// captured into one CUDA graph and replayed (cudaGraphLaunch), per launch.
void run_launch(Context& ctx) {
  const int n = ctx.quick() ? 200 : 1000;
  Stream s;
  const Timing eager = time_op(
      ctx, s.get(),
      [&] {
        empty_kernel<<<1, 1, 0, s.get()>>>();
        GPUSIM_KERNEL_CHECK();
      },
      n);

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  GPUSIM_CUDA_CHECK(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < n; ++i) {
    empty_kernel<<<1, 1, 0, s.get()>>>();
  }
  GPUSIM_KERNEL_CHECK();
  GPUSIM_CUDA_CHECK(cudaStreamEndCapture(s.get(), &graph));
  Timing graphed;
  try {
    GPUSIM_CUDA_CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
    GPUSIM_CUDA_CHECK(cudaGraphUpload(exec, s.get()));
    graphed = time_op(
        ctx, s.get(), [&] { GPUSIM_CUDA_CHECK(cudaGraphLaunch(exec, s.get())); }, 1);
  } catch (...) {
    if (exec != nullptr) GPUSIM_CUDA_WARN(cudaGraphExecDestroy(exec));
    GPUSIM_CUDA_WARN(cudaGraphDestroy(graph));
    throw;
  }
  GPUSIM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  GPUSIM_CUDA_CHECK(cudaGraphDestroy(graph));
  graphed.seconds /= n;

  for (const bool is_graph : {false, true}) {
    const Timing& t = is_graph ? graphed : eager;
    Measurement m = ctx.row(is_graph ? "launch_overhead-graph" : "launch_overhead-eager", "launch_overhead",
                            format_quantity(t.seconds, Unit::kTime));
    m.set("graph", is_graph);
    m.conditions = "empty kernel <<<1, 1>>>, " + std::to_string(n) +
                   (is_graph ? " launches captured in one CUDA graph and replayed" : " back-to-back launches") +
                   " per sample on one stream, time per launch; median of " + std::to_string(ctx.reps) +
                   " samples after " + std::to_string(ctx.warmup) + " warm-up, CUDA events";
    std::fprintf(stderr, "  %-24s %s\n", m.id.c_str(), m.value.c_str());
    ctx.results.push_back(std::move(m));
  }
}

}  // namespace gpusim::bench
