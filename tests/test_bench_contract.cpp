// The measurement-file contract between gpusim-bench (writer) and gpusim validate/calibrate
// (reader): every row kind the bench writes loads, with its values in SI units.
#include <filesystem>
#include <fstream>

#include "gpusim_bench/format.hpp"
#include "gpusim_bench/toml_writer.hpp"
#include "helpers.hpp"

using namespace gpusim;
using namespace gpusim::validation;

TEST_CASE("files written by gpusim-bench load in gpusim validate", "[validate][bench]") {
  bench::Meta meta;
  meta.source = "gpusim-bench on NVIDIA H100 80GB HBM3";
  meta.date = "2026-11";
  meta.gpu_name = "NVIDIA H100 80GB HBM3";
  meta.sm_clock = "1980 MHz";
  meta.power_limit = "700 W";
  std::vector<bench::Measurement> rows;
  auto row = [&](const std::string& id, const std::string& benchmark, double si, bench::Unit unit) {
    bench::Measurement m;
    m.id = id;
    m.gpu = "h100-sxm5-80gb";
    m.benchmark = benchmark;
    m.value = bench::format_quantity(si, unit);
    rows.push_back(m);
    return &rows.back();
  };
  row("copy", "stream_copy", 2.9e12, bench::Unit::kBandwidth)->bytes = bench::format_bytes(1ull << 30);
  row("gemm", "gemm", 7.9e14, bench::Unit::kFlopRate)
      ->set("dtype", "bf16")
      .set("m", 8192)
      .set("n", 8192)
      .set("k", 8192);
  row("lat", "latency_l2", 291, bench::Unit::kCycles)->set("ns", 147.0);
  row("launch", "launch_overhead", 4.1e-6, bench::Unit::kTime)->set("graph", false);
  row("h2d", "h2d", 51e9, bench::Unit::kBandwidth)->set("pinned", true);
  bench::Measurement* ar = row("ar", "allreduce", 4.7e11, bench::Unit::kBandwidth);
  ar->gpus = 8;
  ar->bytes = bench::format_bytes(1ull << 30);
  ar->set("algorithm", "auto");
  row("power", "power", 650, bench::Unit::kPower)->set("kernel", "gemm-bf16-8192").set("intensity", 2730.7);

  const auto dir = test::process_scratch("gpusim-contract");
  const auto path = dir / "bench.toml";
  std::ofstream(path) << bench::measurements_to_string(meta, rows);

  const std::vector<Measurement> loaded = load_measurements(test::catalog(), {path.string()});
  REQUIRE(loaded.size() == rows.size());
  CHECK(loaded[0].value == Approx(2.9e12).epsilon(1e-3));
  CHECK(loaded[0].bytes->value() == Approx(1ull << 30));
  CHECK(loaded[1].m == 8192);
  CHECK(loaded[2].value_in_cycles);
  CHECK(loaded[3].value == Approx(4.1e-6).epsilon(1e-3));
  CHECK(loaded[5].gpus == 8);
  CHECK(*loaded[6].intensity == Approx(2730.7));
  CHECK(loaded[0].role == Role::kFit);  // the bench's own measurements are calibration inputs
  const ValidationReport r = validate(resolve(loaded, test::catalog()));
  CHECK(r.all.count == static_cast<int>(rows.size()));
}
