// Measurement files, validation and calibration.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "helpers.hpp"

using namespace gpusim;
using namespace gpusim::validation;
using gpusim::test::diagnostics_of;

namespace {

std::filesystem::path scratch_dir(const std::string& name) {
  const auto dir = test::process_scratch("gpusim-validate") / name;
  std::filesystem::create_directories(dir);
  return dir;
}

std::string write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
  return p.string();
}

Measurement row(const std::string& id, Benchmark b) {
  Measurement m;
  m.id = id;
  m.file = "synthetic.toml";
  m.role = Role::kFit;
  m.gpu = "h100-sxm5-80gb";
  m.benchmark = b;
  return m;
}

// One row predicted under `c` (its system resolved from the catalog first, as validate does).
Prediction predict_row(const Measurement& m, const Catalog& c) {
  const std::vector<Measurement> rows{m};
  return predict(resolve(rows, c).front());
}

// The report points into `rows`, which the caller keeps alive.
ValidationReport validate_rows(const std::vector<Measurement>& rows, const Catalog& c) {
  return validate(resolve(rows, c));
}

}  // namespace

TEST_CASE("a measurement file's problems carry their positions", "[validate][errors]") {
  const auto dir = scratch_dir("bad");
  const std::string f = write(dir / "bad.toml", R"([meta]
source = "test"
role = "check"

[[measurement]]
id = "x1"
gpu = "h100-sxm5-80gb"
benchmark = "stream_cpy"
value = "2.9 TB/s"

[[measurement]]
id = "x2"
gpu = "h100"
benchmark = "gemm"
value = "800"
dtype = "bf16"
m = 8192
n = 8192
k = 8192

[[measurement]]
id = "x3"
gpu = "a100-sxm4-80gb"
benchmark = "scenario"
scenario = "scenarios/missing.toml"
metric = "throughput.tokens_per_sec"
value = 3.0
)");
  const auto ds = diagnostics_of([&] { (void)load_measurements(test::catalog(), {f}); });
  REQUIRE(ds.size() == 5);
  CHECK(ds[0].format() ==
        f + ":8:13: measurement[0].benchmark: expected one of \"stream_copy\", \"stream_triad\", "
            "\"stream_read\", \"l2_bandwidth\", \"latency_l1\", \"latency_l2\", \"latency_dram\", \"gemm\", "
            "\"attention\", \"launch_overhead\", \"h2d\", \"d2h\", \"p2p\", \"allreduce\", \"reduce_scatter\", "
            "\"all_gather\", \"all_to_all\", \"power\", \"power_limit\", \"scenario\", got \"stream_cpy\"");
  CHECK(ds[1].pos.line == 13);
  CHECK(ds[1].key == "measurement[1].gpu");
  CHECK(ds[2].pos.line == 15);
  CHECK(ds[2].message == "expected a compute rate like \"989.4 TFLOP/s\", got \"800\": no unit");
  CHECK(ds[3].key == "measurement[2].scenario");
  CHECK_THAT(ds[3].message, Catch::StartsWith("scenario file \"scenarios/missing.toml\" does not exist"));
  CHECK(ds[4].message == "\"throughput.tokens_per_sec\" is not a numeric key of the report (docs/report.md)");
}

TEST_CASE("a measurement row must say whether calibration may use it", "[validate][errors]") {
  const auto dir = scratch_dir("role");
  const std::string f = write(dir / "role.toml", R"([[measurement]]
id = "r1"
gpu = "rtx4090"
benchmark = "stream_copy"
value = "900 GB/s"

[[measurement]]
id = "r2"
role = "tune"
gpu = "rtx4090"
benchmark = "stream_copy"
value = "900 GB/s"
)");
  const auto ds = diagnostics_of([&] { (void)load_measurements(test::catalog(), {f}); });
  REQUIRE(ds.size() == 2);
  CHECK(ds[0].format() == f + ":1:1: measurement[0].role: missing required key");
  CHECK(ds[1].format() == f + ":9:8: measurement[1].role: expected one of \"fit\", \"check\", got \"tune\"");
  // A [meta] role is every row's default.
  const std::string g = write(dir / "meta.toml", "[meta]\nrole = \"fit\"\n" + std::string(R"([[measurement]]
id = "m1"
gpu = "rtx4090"
benchmark = "stream_copy"
value = "900 GB/s"
)"));
  CHECK(load_measurements(test::catalog(), {g}).front().role == Role::kFit);
}

TEST_CASE("a directory without measurement rows is bad input, not an empty pass", "[validate][errors]") {
  const auto dir = scratch_dir("empty");
  const auto ds = diagnostics_of([&] { (void)load_measurements(test::catalog(), {dir.string()}); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].message == "no measurement files with [[measurement]] rows found");
}

TEST_CASE("a value in a unit that does not fit the benchmark is rejected", "[validate][errors]") {
  const auto dir = scratch_dir("unit");
  const std::string f = write(dir / "unit.toml", R"([[measurement]]
id = "p"
role = "check"
gpu = "rtx4090"
benchmark = "power"
value = "450 GB/s"
)");
  const auto ds = diagnostics_of([&] { (void)load_measurements(test::catalog(), {f}); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].pos.line == 6);
  CHECK_THAT(ds[0].message, Catch::StartsWith("expected a power like \"700 W\""));
}

TEST_CASE("validate summarizes median, 90th percentile and worst |error|", "[validate]") {
  // |errors| 1..10 %: median (5 + 6) / 2 = 5.5 %, nearest-rank p90 = 9 %, worst 10 %
  std::vector<double> errs;
  for (int i = 10; i >= 1; --i) {
    errs.push_back(i / 100.0);
  }
  const Summary s = summarize("x", errs);
  CHECK(s.count == 10);
  CHECK(s.median == Approx(0.055));
  CHECK(s.p90 == Approx(0.09));
  CHECK(s.worst == Approx(0.10));
  CHECK(summarize("empty", {}).count == 0);
}

TEST_CASE("a stream row is predicted as spec bandwidth times DRAM efficiency", "[validate]") {
  Measurement m = row("s", Benchmark::kStreamCopy);
  m.value = 2.9e12;
  m.bytes = units::gibibytes(2);
  const hardware::GpuSpec g = test::catalog().gpu("h100-sxm5-80gb");
  const Prediction p = predict_row(m, test::catalog());
  REQUIRE(p.value);
  CHECK(*p.value == Approx(g.memory_bandwidth.value() * g.efficiency.dram));
  m.bytes = units::gibibytes(0.01);  // fits in the 50 MB L2: reads from L2, writes (half of a copy) to DRAM
  const double t = std::max(0.5 / (g.l2_bandwidth.value() * g.efficiency.l2),
                            0.5 / (g.memory_bandwidth.value() * g.efficiency.dram));
  CHECK(*predict_row(m, test::catalog()).value == Approx(1.0 / t));
  m.benchmark = Benchmark::kL2Bandwidth;  // a read-only kernel runs at the L2's bandwidth
  CHECK(*predict_row(m, test::catalog()).value == Approx(g.l2_bandwidth.value() * g.efficiency.l2));
}

TEST_CASE("rows the model cannot predict say why instead of disappearing", "[validate]") {
  Measurement m = row("g", Benchmark::kGemm);
  m.gpu = "a100-sxm4-80gb";
  m.dtype = DType::kFp8;
  m.m = m.n = m.k = 4096;
  m.value = 1e15;
  const std::vector<Measurement> rows{m};
  const ValidationReport r = validate_rows(rows, test::catalog());
  REQUIRE(r.rows.size() == 1);
  CHECK_FALSE(r.rows[0].prediction.value);
  CHECK(r.rows[0].prediction.reason == "the NVIDIA A100 SXM4 80GB has no fp8");
  CHECK(r.all.count == 0);
  CHECK_THAT(report::validation_text(r), Catch::Contains("not predicted yet") && Catch::Contains("has no fp8"));
}

TEST_CASE("calibrate recovers the parameters that generated synthetic measurements", "[calibrate]") {
  // The truth: an overlay that patches the built-in H100 with known parameters.
  const auto dir = scratch_dir("truth");
  write(dir / "gpus" / "h100-sxm5-80gb.toml", R"(base = "h100-sxm5-80gb"
[efficiency]
dram = 0.8123
l2 = 0.9345
host_link = 0.777
gemm = 0.7345
gemm_fp8 = 0.6543
gemm_latency = "4.5 us"
launch_eager = "6.5 us"
launch_graph = "1.25 us"
attention = 0.4567
peer_link = 0.8888
nvls = 1.1111
nvls_round = "8.5 us"
collective_call = "12.5 us"
simple_step = "3.25 us"
[power]
memory_activity = 0.4321
gemm_activity = 0.6123
)");
  Catalog truth = test::catalog();
  truth.add_directory(dir.string());

  std::vector<Measurement> rows;
  auto add = [&](Measurement m) {
    m.value = *predict_row(m, truth).value;
    rows.push_back(m);
  };
  Measurement s = row("stream", Benchmark::kStreamCopy);
  s.bytes = units::gibibytes(2);
  add(s);
  add(row("l2", Benchmark::kL2Bandwidth));
  add(row("h2d", Benchmark::kH2d));
  for (const DType dt : {DType::kBf16, DType::kFp8}) {
    for (const double size : {2048.0, 4096.0, 8192.0, 16384.0}) {
      Measurement g =
          row(std::string("gemm-") + units::to_string(dt) + std::to_string(static_cast<int>(size)), Benchmark::kGemm);
      g.dtype = dt;
      g.m = g.n = size;
      g.k = 2 * size;
      add(g);
    }
  }
  add(row("launch", Benchmark::kLaunchOverhead));
  Measurement graph = row("launch-graph", Benchmark::kLaunchOverhead);
  graph.graph = true;
  add(graph);
  Measurement a = row("attn", Benchmark::kAttention);
  a.batch = 2;
  a.seq_len = 8192;
  a.heads = 16;
  a.head_dim = 128;
  add(a);
  // All-reduces small enough for LL (the call cost), large enough for NVLS (its bandwidth and
  // per-round cost); all-gathers on the Simple ring (the link efficiency and the step latency).
  for (const double kib : {8.0, 64.0, 16384.0, 262144.0, 1048576.0}) {
    Measurement c = row("ar-" + std::to_string(static_cast<int>(kib)), Benchmark::kAllreduce);
    c.gpus = 8;
    c.bytes = Bytes(kib * units::kKibi);
    add(c);
  }
  for (const double mib : {256.0, 1024.0, 4096.0}) {
    Measurement c = row("ag-" + std::to_string(static_cast<int>(mib)), Benchmark::kAllGather);
    c.gpus = 8;
    c.bytes = Bytes(mib * units::kMebi);
    add(c);
  }
  Measurement pm = row("power-stream", Benchmark::kPower);
  pm.intensity = 0.25;
  add(pm);
  Measurement pc = row("power-gemm", Benchmark::kPower);
  pc.intensity = 1000;
  pc.kernel = "gemm";
  add(pc);

  const CalibrationResult fit = calibrate(rows, test::catalog());
  auto fitted = [&](const std::string& key) {
    for (const auto& p : fit.params) {
      if (p.scope == "h100-sxm5-80gb" && p.key == key) {
        return p.value;
      }
    }
    FAIL("no fit for " << key);
    return 0.0;
  };
  const double eps = 1e-6;
  CHECK(fitted("dram") == Approx(0.8123).epsilon(eps));
  CHECK(fitted("l2") == Approx(0.9345).epsilon(eps));
  CHECK(fitted("host_link") == Approx(0.777).epsilon(eps));
  CHECK(fitted("gemm") == Approx(0.7345).epsilon(eps));
  CHECK(fitted("gemm_fp8") == Approx(0.6543).epsilon(eps));
  CHECK(fitted("gemm_latency") == Approx(4.5e-6).epsilon(eps));
  CHECK(fitted("launch_eager") == Approx(6.5e-6).epsilon(eps));
  CHECK(fitted("launch_graph") == Approx(1.25e-6).epsilon(eps));
  CHECK(fitted("attention") == Approx(0.4567).epsilon(eps));
  CHECK(fitted("peer_link") == Approx(0.8888).epsilon(eps));
  CHECK(fitted("nvls") == Approx(1.1111).epsilon(eps));
  CHECK(fitted("nvls_round") == Approx(8.5e-6).epsilon(eps));
  CHECK(fitted("collective_call") == Approx(12.5e-6).epsilon(eps));
  CHECK(fitted("simple_step") == Approx(3.25e-6).epsilon(eps));
  CHECK(fitted("memory_activity") == Approx(0.4321).epsilon(eps));
  CHECK(fitted("gemm_activity") == Approx(0.6123).epsilon(eps));

  // The overlay files load as a patch and reproduce the truth's predictions.
  const auto out = scratch_dir("overlay");
  for (const auto& f : overlay_files(fit.params)) {
    write(out / f.relative_path, f.text);
  }
  Catalog calibrated = test::catalog();
  calibrated.add_directory(out.string());
  for (const auto& m : rows) {
    INFO(m.id);
    CHECK(*predict_row(m, calibrated).value == Approx(m.value).epsilon(1e-6));
  }
  // Check rows are evidence, never inputs: the same rows marked check fit nothing.
  std::vector<Measurement> held_out = rows;
  for (auto& m : held_out) {
    m.role = Role::kCheck;
  }
  CHECK(calibrate(held_out, test::catalog()).params.empty());
}

TEST_CASE("calibrate keeps the prior when rows cannot determine a parameter", "[calibrate]") {
  Measurement g = row("one-gemm", Benchmark::kGemm);
  g.dtype = DType::kBf16;
  g.m = g.n = g.k = 8192;
  g.value = 700e12;
  const CalibrationResult fit = calibrate({g}, test::catalog());
  bool kept_overhead = false;
  for (const auto& k : fit.kept) {
    kept_overhead = kept_overhead || k.find("h100-sxm5-80gb efficiency.gemm_latency") != std::string::npos;
  }
  CHECK(kept_overhead);
  for (const auto& p : fit.params) {
    CHECK(p.key != "gemm_latency");
    CHECK(std::isfinite(p.value));
    CHECK(p.value > 0);
  }
}

TEST_CASE("calibrate never writes an efficiency outside its range", "[calibrate]") {
  Measurement s = row("too-fast", Benchmark::kStreamCopy);
  s.bytes = units::gibibytes(2);
  s.value = 10e12;  // faster than the 3.35 TB/s the memory can deliver
  const CalibrationResult fit = calibrate({s}, test::catalog());
  for (const auto& p : fit.params) {
    CHECK(p.key != "dram");
  }
  REQUIRE_FALSE(fit.kept.empty());
  CHECK_THAT(fit.kept[0], Catch::Contains("efficiency.dram") && Catch::Contains("outside"));
}

TEST_CASE("the shipped specs hold the calibrated values: re-fitting moves its rows' median error by < 0.5 points",
          "[calibrate]") {
  const std::string dir = std::string(GPUSIM_SOURCE_DIR) + "/measurements";
  const std::vector<Measurement> rows = load_measurements(test::catalog(), {dir});
  const CalibrationResult fit = calibrate(rows, test::catalog());
  REQUIRE_FALSE(fit.params.empty());
  std::vector<Measurement> fitted_rows;
  for (const auto& m : rows) {
    for (const auto& p : fit.params) {
      if (std::find(p.rows.begin(), p.rows.end(), m.id) != p.rows.end()) {
        fitted_rows.push_back(m);
        break;
      }
    }
  }
  const Catalog after = with_overlay(test::catalog(), fit.params);
  const double before_median = validate_rows(fitted_rows, test::catalog()).all.median;
  const double after_median = validate_rows(fitted_rows, after).all.median;
  // The spec files carry the fitted values rounded to two or three digits, so a re-fit finds
  // (nearly) what is there: the median error of the rows it fits barely moves either way.
  CHECK(std::fabs(after_median - before_median) < 0.005);
  for (const auto& p : fit.params) {
    CHECK(std::isfinite(p.value));
    CHECK(p.value >= 0);
  }
}

TEST_CASE("every shipped measurement row loads and every scored row is predicted", "[validate]") {
  const std::string dir = std::string(GPUSIM_SOURCE_DIR) + "/measurements";
  const std::vector<Measurement> rows = load_measurements(test::catalog(), {dir});
  CHECK(rows.size() >= 84);  // 84 published rows, plus sizes derived from their conditions
  const ValidationReport r = validate_rows(rows, test::catalog());
  for (const auto& row : r.rows) {
    if (row.measurement->scored) {
      INFO(row.measurement->id << ": " << row.prediction.reason);
      CHECK(row.prediction.value.has_value());
    }
  }
}

TEST_CASE("a power-limit row is the workload's throughput at the cap over its throughput at TDP", "[validate][power]") {
  const auto dir = scratch_dir("power-limit");
  write(dir / "s.toml", R"(name = "3090 training"
[system]
gpu = "rtx3090"
gpus = 1
[model]
preset = "gpt2-350m"
[training]
tokens = 1e9
seq_len = 1024
global_batch = 32
micro_batch = 8
precision = "fp16"
)");
  const std::string f = write(dir / "p.toml", R"([meta]
role = "check"
[[measurement]]
id = "speed"
gpu = "rtx3090"
benchmark = "power_limit"
scenario = "s.toml"
power_limit = "300 W"
metric = "speed"
value = 0.93
[[measurement]]
id = "energy"
gpu = "rtx3090"
benchmark = "power_limit"
scenario = "s.toml"
power_limit = "300 W"
metric = "energy"
value = 0.9
[[measurement]]
id = "too-high"
gpu = "rtx3090"
benchmark = "power_limit"
scenario = "s.toml"
power_limit = "500 W"
metric = "speed"
value = 1.0
)");
  const std::vector<Measurement> rows = load_measurements(test::catalog(), {f});
  const ValidationReport r = validate_rows(rows, test::catalog());
  Scenario sc = scenario::load_scenario_file(test::catalog(), (dir / "s.toml").string());
  const step::Evaluation full = step::evaluate(sc);
  sc.system.power_limit = Watts(300);
  const step::Evaluation capped = step::evaluate(sc);
  REQUIRE(r.rows[0].prediction.value);
  CHECK(*r.rows[0].prediction.value == Approx(capped.tokens_per_s / full.tokens_per_s));
  // energy per token: board power x step time / tokens per step, at the cap over at TDP
  CHECK(*r.rows[1].prediction.value ==
        Approx((capped.gpu_avg_power * capped.step.time).value() / (full.gpu_avg_power * full.step.time).value()));
  CHECK_FALSE(r.rows[2].prediction.value);
  CHECK_THAT(r.rows[2].prediction.reason, Catch::Contains("outside the modelled range"));
}

TEST_CASE("a collective row forces one of the library's algorithms by name, or is refused with the names",
          "[validate][errors]") {
  const auto dir = scratch_dir("algorithm");
  auto row = [](const std::string& id, const std::string& algorithm) {
    return "[[measurement]]\nid = \"" + id +
           "\"\nrole = \"check\"\ngpu = \"h100-sxm5-80gb\"\nbenchmark = \"allreduce\"\ngpus = 8\nbytes = \"1 GiB\"\n"
           "algorithm = \"" +
           algorithm + "\"\nvalue = \"480 GB/s\"\n";
  };
  // Each row is 9 lines; the second row's algorithm is on line 10 + 8, after its `algorithm = "`.
  const std::string f = write(dir / "algo.toml", row("a1", "nvls") + "\n" + row("a2", "collnet"));
  const auto ds = diagnostics_of([&] { (void)load_measurements(test::catalog(), {f}); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].format() == f + ":18:13: measurement[1].algorithm: expected one of \"ring\", \"tree\", \"nvls\", "
                              "\"auto\", got \"collnet\"");
  // Without the bad row the forced algorithm reads as its enum.
  const auto rows = load_measurements(test::catalog(), {write(dir / "good.toml", row("a1", "nvls"))});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].algorithm == validation::ForcedAlgorithm::kNvls);
}
