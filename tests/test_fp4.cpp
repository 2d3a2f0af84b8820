// FP4 on Blackwell: the fp4 GEMM share of a spec file (efficiency.gemm_fp4), its range and its
// calibration, and the NVFP4 KV cache (kv_precision = "fp4"): its bytes, where it may run, and the
// bytes attention reads over it.
#include <filesystem>
#include <fstream>

#include "cli_helpers.hpp"

using namespace gpusim;

namespace {

// Llama-3-8B served from a static batch on one GPU, weights and KV in the given formats.
std::string eight_b(const std::string& gpu, const std::string& weights, const std::string& kv) {
  return R"(name = "8b"
[system]
gpu = ")" +
         gpu +
         R"("
gpus = 1
[model]
preset = "llama3-8b"
[inference]
batch = 8
prompt_tokens = 1024
output_tokens = 128
weight_precision = ")" +
         weights + R"("
kv_precision = ")" +
         kv +
         R"("
[runtime]
name = "vllm"
)";
}

// The one attention op of a lowered forward pass.
const lowering::Op& attention_op(const std::vector<lowering::Op>& ops) {
  const auto it = std::find_if(ops.begin(), ops.end(),
                               [](const lowering::Op& op) { return op.role == lowering::OpRole::kAttention; });
  REQUIRE(it != ops.end());
  return *it;
}

const lowering::Op& op_named(const std::vector<lowering::Op>& ops, const std::string& name) {
  const auto it = std::find_if(ops.begin(), ops.end(), [&](const lowering::Op& op) { return op.name == name; });
  REQUIRE(it != ops.end());
  return *it;
}

std::filesystem::path scratch_dir(const std::string& name) {
  const auto dir = test::process_scratch("gpusim-fp4") / name;
  std::filesystem::create_directories(dir);
  return dir;
}

void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("an fp4 GEMM runs at gemm_fp4 of the fp4 peak and falls back to gemm_fp8 and then to gemm", "[fp4][kernel]") {
  hardware::GpuSpec g = test::catalog().gpu("b200");
  REQUIRE(g.efficiency.gemm_fp4.has_value());
  const double staging = physics::staging_efficiency(g, DType::kFp4);
  CHECK(physics::gemm_efficiency(g, DType::kFp4) == Approx(*g.efficiency.gemm_fp4 * staging));
  // The fp4 share is its own: the 16-bit and fp8 GEMMs keep theirs.
  CHECK(physics::gemm_efficiency(g, DType::kBf16) ==
        Approx(g.efficiency.gemm * physics::staging_efficiency(g, DType::kBf16)));

  const double fp8 = 0.7;
  g.efficiency.gemm_fp4.reset();
  g.efficiency.gemm_fp8 = fp8;
  CHECK(physics::gemm_efficiency(g, DType::kFp4) == Approx(fp8 * staging));
  g.efficiency.gemm_fp8.reset();
  CHECK(physics::gemm_efficiency(g, DType::kFp4) == Approx(g.efficiency.gemm * staging));
}

TEST_CASE("a compute-bound fp4 GEMM's time is inverse to gemm_fp4", "[fp4][kernel]") {
  hardware::GpuSpec g = test::catalog().gpu("b200");
  const lowering::Op op = lowering::benchmark_gemm(DType::kFp4, 8192, 8192, 8192);
  const double eta = *g.efficiency.gemm_fp4;
  const physics::KernelTime at_spec = physics::kernel_time(op, g);
  REQUIRE(at_spec.compute_bound());
  const double factor = 0.5;
  g.efficiency.gemm_fp4 = eta * factor;
  CHECK(physics::kernel_time(op, g).compute.value() == Approx(at_spec.compute.value() / factor));
}

TEST_CASE("an efficiency.gemm_fp4 above 2 or a gemm_fp4 range of 1 or more is refused with its position and key",
          "[fp4][specs][errors]") {
  const auto dir = scratch_dir("bad-gemm-fp4");
  write(dir / "gpus" / "b200.toml", "base = \"b200\"\n[efficiency]\ngemm_fp4 = 2.5\n");
  const test::Run r = test::run("specs check --specs " + dir.string());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("b200.toml:3:12: efficiency.gemm_fp4: must be at most 2, got 2.5"));

  write(dir / "gpus" / "b200.toml", "base = \"b200\"\n[uncertainty]\ngemm_fp4 = 1.5\n");
  const test::Run range = test::run("specs check --specs " + dir.string());
  CHECK(range.code == 2);
  CHECK_THAT(range.err, Catch::Contains("b200.toml:3:12: uncertainty.gemm_fp4:") &&
                            Catch::Contains("at least 0 and below 1, got 1.5"));
}

TEST_CASE("calibrate fits gemm_fp4 from fp4 GEMM rows and gemm from 16-bit ones apart", "[fp4][calibrate]") {
  // The truth: the B200 with known GEMM shares, and rows it would measure.
  const double gemm = 0.7345;
  const double gemm_fp4 = 0.5432;
  const auto dir = scratch_dir("truth");
  write(dir / "gpus" / "b200.toml", "base = \"b200\"\n[efficiency]\ngemm = " + std::to_string(gemm) +
                                        "\ngemm_fp4 = " + std::to_string(gemm_fp4) + "\n");
  Catalog truth = test::catalog();
  truth.add_directory(dir.string());
  std::vector<validation::Measurement> rows;
  for (const DType dt : {DType::kBf16, DType::kFp4}) {
    for (const double size : {4096.0, 8192.0, 16384.0}) {
      validation::Measurement m;
      m.id = std::string("gemm-") + units::to_string(dt) + "-" + std::to_string(static_cast<int>(size));
      m.file = "synthetic.toml";
      m.role = validation::Role::kFit;
      m.gpu = "b200";
      m.benchmark = validation::Benchmark::kGemm;
      m.dtype = dt;
      m.m = m.n = m.k = size;
      const std::vector<validation::Measurement> one{m};
      m.value = *validation::predict(validation::resolve(one, truth).front()).value;
      rows.push_back(m);
    }
  }
  const validation::CalibrationResult fit = validation::calibrate(rows, test::catalog());
  auto fitted = [&](const std::string& key) {
    for (const auto& p : fit.params) {
      if (p.scope == "b200" && p.key == key) {
        return p.value;
      }
    }
    FAIL("no fit for " << key);
    return 0.0;
  };
  CHECK(fitted("gemm") == Approx(gemm).epsilon(1e-6));
  CHECK(fitted("gemm_fp4") == Approx(gemm_fp4).epsilon(1e-6));
}

TEST_CASE("an fp4 job's GEMM range is the architecture's gemm_fp4 range", "[fp4][uncertainty]") {
  Scenario sc = test::scenario(eight_b("b200", "nvfp4", "fp8"));
  sc.model_error = nullptr;
  const hardware::EfficiencyRanges& r = sc.system.gpu.ranges;
  REQUIRE(r.gemm_fp4.has_value());
  REQUIRE(*r.gemm_fp4 != r.gemm);
  const answer::Estimate e = test::banded(sc);
  REQUIRE(e.uncertainty.has_value());
  const auto& u = e.uncertainty->unknowns;
  const auto gemm = std::find_if(u.begin(), u.end(),
                                 [](const answer::Contribution& c) { return c.unknown == answer::Unknown::kGemm; });
  REQUIRE(gemm != u.end());
  CHECK(gemm->range == Approx(*r.gemm_fp4));
}

TEST_CASE("an fp4 KV cache stores 4-bit values with an 8-bit scale per 16: 0.5625 bytes per element", "[fp4][kv]") {
  // NVFP4 [nvidia-nvfp4-kv-cache]: E2M1 values, one E4M3 scale per block of 16.
  const double value_bits = 4;
  const double scale_bits = 8;
  const double block = 16;
  const double bits_per_byte = 8;
  const double expected = (value_bits + scale_bits / block) / bits_per_byte;
  const Scenario sc = test::scenario(eight_b("b200", "nvfp4", "fp4"));
  const workload::Inference& inf = *sc.job.inference;
  CHECK(inf.kv_bytes == Approx(expected));
  CHECK(workload::kNvfp4KvBytes == Approx(expected));
  // The cache per token: K and V of every layer's KV heads.
  const workload::ModelShape& m = sc.job.model;
  const double kv_width = static_cast<double>(m.kv_heads) * static_cast<double>(m.head_dim());
  CHECK(physics::kv_bytes_per_token(m, inf, sc.layout).value() ==
        Approx(2.0 * static_cast<double>(m.layers) * kv_width * expected));
  // Against fp8 the cache holds 1 / 0.5625 = 1.78x the tokens in the same bytes.
  const Scenario fp8 = test::scenario(eight_b("b200", "nvfp4", "fp8"));
  CHECK(physics::kv_bytes_per_token(m, *fp8.job.inference, fp8.layout).value() /
            physics::kv_bytes_per_token(m, inf, sc.layout).value() ==
        Approx(1.0 / expected));
}

TEST_CASE("an fp4 KV cache on a GPU without fp4 is refused naming the key and the value and the GPU and the choices",
          "[fp4][kv][errors]") {
  const std::string toml = eight_b("h100-sxm5-80gb", "fp8", "fp4");
  const std::vector<Diagnostic> d = test::diagnostics_of([&] { (void)test::scenario(toml); });
  REQUIRE(d.size() == 1);
  CHECK(d[0].key == "inference.kv_precision");
  CHECK(d[0].pos.file == "test.toml");
  CHECK(d[0].pos.line == 12);  // kv_precision's line in eight_b()
  CHECK(d[0].pos.column > 0);
  CHECK_THAT(d[0].message, Catch::Contains("h100-sxm5-80gb") && Catch::Contains("no fp4 support") &&
                               Catch::Contains("\"fp4\"") && Catch::Contains("\"fp16\", \"bf16\", \"fp8\", \"int8\""));
  // The same on the command line: exit 2, the position and key on stderr, nothing on stdout.
  const std::string file = test::write_temp("fp4-kv-h100.toml", toml);
  const test::Run r = test::run("estimate " + file);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains(file + ":12:") && Catch::Contains("inference.kv_precision") &&
                        Catch::Contains("NVIDIA H100"));
  // Every GPU with fp4 takes it.
  for (const char* gpu : {"b200", "gb200", "rtx5090"}) {
    INFO(gpu);
    CHECK(test::scenario(eight_b(gpu, "nvfp4", "fp4")).job.inference->kv_bytes == Approx(workload::kNvfp4KvBytes));
  }
}

TEST_CASE("attention over an fp8 or fp4 KV cache reads the cache at its own bytes per element", "[fp4][kv][lowering]") {
  const double seqs = 8;
  const double kv_len = 4096;
  auto lowered = [&](const std::string& kv) {
    const Scenario sc = test::scenario(eight_b("b200", "nvfp4", kv));
    return std::pair{sc, lowering::lower_forward(sc.job.model, *sc.job.inference, sc.runtime, 1, seqs, 1, kv_len)};
  };
  const auto [sc16, ops16] = lowered("fp16");
  const auto [sc8, ops8] = lowered("fp8");
  const auto [sc4, ops4] = lowered("fp4");
  const workload::ModelShape& m = sc16.job.model;
  const double kv_width = static_cast<double>(m.kv_heads) * static_cast<double>(m.head_dim());
  // Decode reads every cached K and V once: seqs x kv_len x 2 x kv_width elements.
  const double kv_elements = seqs * kv_len * 2.0 * kv_width;
  const double b16 = sc16.job.inference->kv_bytes;
  const double b8 = sc8.job.inference->kv_bytes;
  const double b4 = sc4.job.inference->kv_bytes;
  REQUIRE(b16 == 2.0);
  REQUIRE(b8 == 1.0);
  REQUIRE(b4 == Approx(workload::kNvfp4KvBytes));
  const double a16 = attention_op(ops16).bytes.value();
  CHECK(a16 - attention_op(ops8).bytes.value() == Approx(kv_elements * (b16 - b8)));
  CHECK(a16 - attention_op(ops4).bytes.value() == Approx(kv_elements * (b16 - b4)));
  // The new token's K and V are written at the cache's width too.
  const double written = seqs * 2.0 * kv_width;
  CHECK(op_named(ops4, "kv_cache.write").bytes.value() == Approx(written * b4));
  CHECK(op_named(ops8, "kv_cache.write").bytes.value() == Approx(written * b8));
}
