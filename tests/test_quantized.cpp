// Matmuls over packed weights (lowering/quantized.cpp, physics/kernel.cpp): llama.cpp's q8_1
// input quantization, GEMV up to 8 tokens, int8 mma.sync tiles (MMQ) above, the fp16 dequantize
// pass of builds before June 2024, the fused W4A16 path, and the projections kept apart.
#include <algorithm>

#include "helpers.hpp"

using namespace gpusim;
using hardware::GpuSpec;
using lowering::Op;
using lowering::OpKind;
using physics::kernel_time;
using workload::QuantizedMatmul;

namespace {

constexpr double kQ40Bytes = 18.0 / 32.0;  // block_q4_0: an fp16 scale and 16 bytes per 32 weights
constexpr double kQ81Bytes = 36.0 / 32.0;  // block_q8_1: 32 int8, an fp16 scale and an fp16 sum
constexpr double kF32 = 4.0;               // ggml's activations between kernels

workload::Inference q40() {
  workload::Inference inf;
  inf.weight_format = "q4_0";
  inf.weight_precision = DType::kFp16;
  inf.weight_bytes = kQ40Bytes;
  return inf;
}

workload::Runtime llama_cpp(QuantizedMatmul path) {
  workload::Runtime rt = test::catalog().runtime("llama.cpp");
  rt.quantized_matmul = path;
  return rt;
}

std::vector<Op> forward(const workload::Runtime& rt, double tokens) {
  return lowering::lower_forward(test::catalog().model("llama3-8b"), q40(), rt, 1, 1, tokens, tokens);
}

std::vector<Diagnostic> errors_of(const std::string& toml) {
  return test::diagnostics_of([&] { (void)test::scenario(toml); });
}

// A llama.cpp serving scenario every error test adds its [runtime] lines to.
constexpr const char* kServe = R"(name = "serve"
[system]
gpu = "rtx4090"
gpus = 1
[model]
preset = "llama3-8b"
[inference]
batch = 1
weight_precision = "q4_0"
)";

std::vector<const Op*> named(const std::vector<Op>& ops, const std::string& name) {
  std::vector<const Op*> out;
  for (const Op& op : ops) {
    if (op.name == name) {
      out.push_back(&op);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the mmq path quantizes each matmul's fp32 input to q8_1 in a kernel before it", "[quantized][lowering]") {
  const auto m = test::catalog().model("llama3-8b");
  const std::vector<Op> ops = forward(llama_cpp(QuantizedMatmul::kMmq), 1);
  const auto quantize = named(ops, "ffn.down.quantize");
  REQUIRE(quantize.size() == 1);
  const double values = 1.0 * static_cast<double>(m.ffn_hidden);  // one token x K of the down projection
  CHECK(quantize[0]->kind == OpKind::kMemoryBound);
  CHECK(quantize[0]->bytes.value() == Approx(values * (kF32 + kQ81Bytes)));
  CHECK(quantize[0]->write_share == Approx(kQ81Bytes / (kF32 + kQ81Bytes)));
  // It comes right before its GEMV, which reads the packed weight with no share of its own.
  const auto it = std::find_if(ops.begin(), ops.end(), [](const Op& o) { return o.name == "ffn.down.quantize"; });
  REQUIRE(std::next(it) != ops.end());
  CHECK(std::next(it)->name == "ffn.down");
  CHECK(std::next(it)->eb == Approx(kQ40Bytes));
  CHECK(std::next(it)->stream == Approx(1.0));
  CHECK(std::next(it)->int8_mma == 0);
  // Attention reads the fp16 cache, not packed weights: no quantize pass of its own.
  CHECK(named(ops, "attention.scores.quantize").empty());
}

TEST_CASE("the mmq path runs a GEMV up to 8 tokens and int8 tensor-core tiles above", "[quantized][lowering]") {
  const workload::Runtime rt = llama_cpp(QuantizedMatmul::kMmq);
  const std::vector<Op> eight = forward(rt, 8);
  const std::vector<Op> nine = forward(rt, 9);
  const auto gemv = named(eight, "ffn.down");
  const auto tiles = named(nine, "ffn.down");
  REQUIRE(gemv.size() == 1);
  REQUIRE(tiles.size() == 1);
  CHECK(gemv[0]->int8_mma == 0);
  CHECK(tiles[0]->int8_mma == Approx(rt.mmq));
}

TEST_CASE("the dequantize path writes an fp16 copy of the weight above 32 tokens and its GEMM reads it",
          "[quantized][lowering]") {
  const auto m = test::catalog().model("llama3-8b");
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn_hidden);
  const workload::Runtime rt = llama_cpp(QuantizedMatmul::kDequantize);
  const std::vector<Op> ops = forward(rt, 33);
  const auto pass = named(ops, "ffn.down.dequantize");
  REQUIRE(pass.size() == 1);
  CHECK(pass[0]->bytes.value() == Approx(f * h * (kQ40Bytes + 2.0)));  // read packed, write 2 B per weight
  CHECK(pass[0]->write_share == Approx(2.0 / (kQ40Bytes + 2.0)));
  const auto gemm = named(ops, "ffn.down");
  REQUIRE(gemm.size() == 1);
  const Op fp16 =
      lowering::gemm_op("ffn.down", lowering::Phase::kForward, DType::kFp16, 33, h, f, gemm[0]->ea, 2.0, gemm[0]->ec);
  CHECK(gemm[0]->eb == Approx(2.0));
  CHECK(gemm[0]->bytes.value() == Approx(fp16.bytes.value()));
  CHECK(gemm[0]->int8_mma == 0);
  CHECK(named(ops, "ffn.down.quantize").empty());
  // At 32 tokens the build still took its MMQ kernels: quantized input, no fp16 copy.
  const std::vector<Op> small = forward(rt, 32);
  CHECK(named(small, "ffn.down.dequantize").empty());
  CHECK(named(small, "ffn.down.quantize").size() == 1);
}

TEST_CASE("the fused path keeps one GEMM whose weight stream runs at efficiency.quantized", "[quantized][lowering]") {
  workload::Runtime rt = llama_cpp(QuantizedMatmul::kFused);
  rt.quantized = 0.7;
  const std::vector<Op> ops = forward(rt, 1);
  CHECK(named(ops, "ffn.down.quantize").empty());
  const auto gemm = named(ops, "ffn.down");
  REQUIRE(gemm.size() == 1);
  CHECK(gemm[0]->stream == Approx(0.7));
}

TEST_CASE("projections apart: Q, K and V are three GEMMs and gate and up two, each with its own quantize pass",
          "[quantized][lowering]") {
  const auto m = test::catalog().model("llama3-8b");
  const double h = static_cast<double>(m.hidden);
  const double kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.ffn_hidden);
  workload::Runtime rt = llama_cpp(QuantizedMatmul::kMmq);
  rt.fusion.projections = false;
  const std::vector<Op> apart = forward(rt, 1);
  const auto qkv = named(apart, "qkv");
  REQUIRE(qkv.size() == 3);
  CHECK(qkv[0]->n == Approx(h));
  CHECK(qkv[1]->n == Approx(kv));
  CHECK(qkv[2]->n == Approx(kv));
  CHECK(named(apart, "qkv.quantize").size() == 3);
  const auto up = named(apart, "ffn.up");
  REQUIRE(up.size() == 1);
  CHECK(up[0]->n == Approx(f));
  CHECK(up[0]->count == Approx(2.0));
  CHECK(named(apart, "ffn.up.quantize")[0]->count == Approx(2.0));
  // Concatenated: one GEMM of h + 2 kv columns and one of 2 f.
  rt.fusion.projections = true;
  const std::vector<Op> fused = forward(rt, 1);
  REQUIRE(named(fused, "qkv").size() == 1);
  CHECK(named(fused, "qkv")[0]->n == Approx(h + 2.0 * kv));
  CHECK(named(fused, "ffn.up")[0]->n == Approx(2.0 * f));
}

TEST_CASE("an MMQ GEMM computes at the int8 peak x the mma.sync share x its own share, in full waves",
          "[quantized][kernel]") {
  const double share = 0.25;
  // 512 tokens x 4096 x 14336: an output of 4 x 32 tiles, 128 tiles on 114 or 128 SMs.
  Op op = lowering::gemm_op("ffn.down", lowering::Phase::kForward, DType::kFp16, 512, 4096, 14336, 2, kQ40Bytes, 2);
  op.int8_mma = share;
  for (const char* id : {"rtx4090", "h100-pcie-80gb"}) {
    const GpuSpec g = test::catalog().gpu(id);
    const double rate = g.peak_for(DType::kInt8).value() * g.efficiency.mma_sync * share;
    const physics::KernelTime kt = kernel_time(op, g);
    CHECK(kt.compute.value() == Approx(op.flops.value() / rate));
  }
  // Hopper's mma.sync share is below 1, Ada's the whole peak.
  CHECK(test::catalog().gpu("h100-pcie-80gb").efficiency.mma_sync < 1.0);
  CHECK(test::catalog().gpu("rtx4090").efficiency.mma_sync == Approx(1.0));
}

TEST_CASE("a GPU without an int8 peak runs an MMQ GEMM as the fp16 GEMM", "[quantized][kernel]") {
  GpuSpec g = test::catalog().gpu("a100-sxm4-80gb");
  g.peak[static_cast<std::size_t>(DType::kInt8)].reset();
  Op op = lowering::gemm_op("ffn.down", lowering::Phase::kForward, DType::kFp16, 512, 4096, 14336, 2, kQ40Bytes, 2);
  const double fp16 = kernel_time(op, g).time.value();
  op.int8_mma = 0.25;
  CHECK(kernel_time(op, g).time.value() == Approx(fp16));
}

TEST_CASE("a runtime with llama.cpp's matmul paths must state efficiency.mmq", "[quantized][runtime][errors]") {
  Catalog c = test::catalog();
  const std::string base(test::catalog().file(catalog::SpecKind::kRuntime, "llama.cpp").text);
  std::string text = base;
  const auto at = text.find("mmq = ");
  REQUIRE(at != std::string::npos);
  text.erase(at, text.find('\n', at) - at);
  c.add_file(catalog::SpecKind::kRuntime, "no-mmq", catalog::SpecFile{"specs/runtimes/no-mmq.toml", text});
  const auto ds = test::diagnostics_of([&] { (void)c.runtime("no-mmq"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].key == "quantized_matmul");
  CHECK(ds[0].pos.file == "specs/runtimes/no-mmq.toml");
  CHECK(ds[0].message.find("efficiency] mmq") != std::string::npos);
}

TEST_CASE("an unknown quantized_matmul path and an mmq share above 1 are errors with the accepted values",
          "[quantized][runtime][errors]") {
  const std::string serve = kServe;
  auto ds = errors_of(serve + "[runtime]\nname = \"llama.cpp\"\nquantized_matmul = \"cublas\"\n");
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].key == "runtime.quantized_matmul");
  CHECK(ds[0].message == "expected one of \"fused\", \"mmq\", \"dequantize\", got \"cublas\"");
  ds = errors_of(serve + "[runtime]\nname = \"llama.cpp\"\n[runtime.efficiency]\nmmq = 1.5\n");
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].key == "runtime.efficiency.mmq");
  CHECK(ds[0].message.find("fraction in (0, 1]") != std::string::npos);
}

TEST_CASE("an architecture's mma_sync share above 1 is rejected", "[quantized][spec][errors]") {
  Catalog c = test::catalog();
  c.add_file(catalog::SpecKind::kGpu, "bad-mma",
             catalog::SpecFile{"specs/gpus/bad-mma.toml",
                               "base = \"h100-sxm5-80gb\"\nname = \"bad\"\n[efficiency]\nmma_sync = 1.2\n"});
  const auto ds = test::diagnostics_of([&] { (void)c.gpu("bad-mma"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].key == "efficiency.mma_sync");
  CHECK(ds[0].pos.line == 4);
  CHECK(ds[0].message.find("fraction in (0, 1]") != std::string::npos);
}

TEST_CASE("a forward pass marks its attention, KV-cache write and logits by role, whatever their names",
          "[lowering][roles]") {
  // The decisions on ops (which are attention, which a ViT replaces, which read packed weights)
  // go by role: every op named for attention, fused or not, has the attention role, and no other.
  const workload::ModelShape m = test::catalog().model("llama3-8b");
  workload::Runtime unfused = test::catalog().runtime("hf-transformers");
  unfused.attention = workload::AttentionKernel::kUnfused;
  for (const workload::Runtime& rt : {test::catalog().runtime("vllm"), unfused}) {
    INFO(rt.name);
    std::size_t attention = 0;
    std::size_t kv_writes = 0;
    std::size_t logits = 0;
    for (const Op& op : lowering::lower_forward(m, q40(), rt, 1, 4, 16, 512)) {
      INFO(op.name);
      CHECK((op.role == lowering::OpRole::kAttention) == (op.name.rfind("attention", 0) == 0));
      attention += op.role == lowering::OpRole::kAttention ? 1 : 0;
      kv_writes += op.role == lowering::OpRole::kKvWrite ? 1 : 0;
      logits += op.role == lowering::OpRole::kLogits ? 1 : 0;
    }
    CHECK(attention >= 1);
    CHECK(kv_writes == 1);
    CHECK(logits == 1);
  }
}
