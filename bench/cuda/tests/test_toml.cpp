// The measurement TOML writer: the contract of docs/measurements.md.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "gpusim_bench/toml_writer.hpp"

using namespace gpusim::bench;

namespace {

Meta h100_meta() {
  Meta meta;
  meta.gpu_name = "NVIDIA H100 80GB HBM3";
  meta.source = "gpusim-bench on " + meta.gpu_name;
  meta.date = "2026-11";
  meta.driver = "560.35.03";
  meta.cuda_runtime = "12.6";
  meta.sm_clock = "1980 MHz";
  meta.memory_clock = "2619 MHz";
  meta.power_limit = "700 W";
  return meta;
}

Measurement stream_row() {
  Measurement m;
  m.id = "stream_copy-1GiB";
  m.gpu = "h100-sxm5-80gb";
  m.benchmark = "stream_copy";
  m.value = "2.9 TB/s";
  m.bytes = "1 GiB";
  m.conditions = "median of 20 after 5 warm-up; grid 132x4 blocks of 256";
  return m;
}

}  // namespace

TEST_CASE("the file matches the contract's example", "[toml]") {
  const std::string expected =
      "[meta]\n"
      "source = \"gpusim-bench on NVIDIA H100 80GB HBM3\"\n"
      "role = \"fit\"\n"
      "date = \"2026-11\"\n"
      "gpu_name = \"NVIDIA H100 80GB HBM3\"\n"
      "driver = \"560.35.03\"\n"
      "cuda_runtime = \"12.6\"\n"
      "sm_clock = \"1980 MHz\"\n"
      "memory_clock = \"2619 MHz\"\n"
      "power_limit = \"700 W\"\n"
      "\n"
      "[[measurement]]\n"
      "id = \"stream_copy-1GiB\"\n"
      "gpu = \"h100-sxm5-80gb\"\n"
      "gpus = 1\n"
      "benchmark = \"stream_copy\"\n"
      "value = \"2.9 TB/s\"\n"
      "bytes = \"1 GiB\"\n"
      "conditions = \"median of 20 after 5 warm-up; grid 132x4 blocks of 256\"\n";
  CHECK(measurements_to_string(h100_meta(), {stream_row()}) == expected);
}

TEST_CASE("benchmark-specific keys keep their TOML types and order", "[toml]") {
  Measurement g;
  g.id = "gemm-bf16-8192x8192x8192";
  g.gpu = "h100-sxm5-80gb";
  g.benchmark = "gemm";
  g.value = "700.1 TFLOP/s";
  const std::int64_t edge = 8192;
  g.set("dtype", "bf16").set("m", edge).set("n", edge).set("k", edge);
  Measurement l;
  l.id = "launch_overhead-graph";
  l.gpu = "h100-sxm5-80gb";
  l.benchmark = "launch_overhead";
  l.value = "1.2 us";
  l.set("graph", true);
  Measurement lat;
  lat.id = "latency_l2";
  lat.gpu = "h100-sxm5-80gb";
  lat.benchmark = "latency_l2";
  lat.value = "262 cycles";
  lat.set("ns", 146.2);
  const std::string out = measurements_to_string(Meta{}, {g, l, lat});
  CHECK(out.find("dtype = \"bf16\"\nm = 8192\nn = 8192\nk = 8192\n") != std::string::npos);
  CHECK(out.find("graph = true\n") != std::string::npos);
  CHECK(out.find("ns = 146.2\n") != std::string::npos);
  CHECK(out.rfind("[meta]\n", 0) == 0);
  CHECK(out.find("bytes") == std::string::npos);        // empty bytes is left out
  CHECK(out.find("power_limit") == std::string::npos);  // empty meta fields are left out
}

TEST_CASE("TOML strings are escaped", "[toml]") {
  CHECK(toml_string("plain") == "\"plain\"");
  CHECK(toml_string("say \"hi\"") == "\"say \\\"hi\\\"\"");
  CHECK(toml_string("C:\\path") == "\"C:\\\\path\"");
  CHECK(toml_string("a\tb\nc\rd\be\ff") == "\"a\\tb\\nc\\rd\\be\\ff\"");
  CHECK(toml_string(std::string("nul\0x", 5)) == "\"nul\\u0000x\"");
  CHECK(toml_string("\x1b[0m\x7f") == "\"\\u001B[0m\\u007F\"");
  CHECK(toml_string("\xC2\xB5s") == "\"\xC2\xB5s\"");                 // valid UTF-8 (µs) kept
  CHECK(toml_string("bad\xFFutf8") == "\"bad\\uFFFDutf8\"");          // invalid byte replaced
  CHECK(toml_string("\xE0\x80\x80") == "\"\\uFFFD\\uFFFD\\uFFFD\"");  // overlong form
  CHECK(toml_string("\xED\xA0\x80") == "\"\\uFFFD\\uFFFD\\uFFFD\"");  // UTF-16 surrogate
}

TEST_CASE("TOML keys are bare only when they may be", "[toml]") {
  CHECK(toml_key("memory_clock") == "memory_clock");
  CHECK(toml_key("a-b_9") == "a-b_9");
  CHECK(toml_key("two words") == "\"two words\"");
  CHECK(toml_key("") == "\"\"");
}

TEST_CASE("invalid measurement tables are rejected", "[toml]") {
  const Meta meta = h100_meta();
  Measurement ok = stream_row();
  SECTION("duplicate id") { CHECK_THROWS_AS(measurements_to_string(meta, {ok, ok}), std::invalid_argument); }
  SECTION("empty id") {
    ok.id.clear();
    CHECK_THROWS_AS(measurements_to_string(meta, {ok}), std::invalid_argument);
  }
  SECTION("unknown benchmark") {
    ok.benchmark = "stream_scale";
    CHECK_THROWS_AS(measurements_to_string(meta, {ok}), std::invalid_argument);
  }
  SECTION("no gpu") {
    ok.gpu.clear();
    CHECK_THROWS_AS(measurements_to_string(meta, {ok}), std::invalid_argument);
  }
  SECTION("no value") {
    ok.value.clear();
    CHECK_THROWS_AS(measurements_to_string(meta, {ok}), std::invalid_argument);
  }
  SECTION("zero gpus") {
    ok.gpus = 0;
    CHECK_THROWS_AS(measurements_to_string(meta, {ok}), std::invalid_argument);
  }
  SECTION("extra key repeating a standard key") {
    ok.set("bytes", "2 GiB");
    CHECK_THROWS_AS(measurements_to_string(meta, {ok}), std::invalid_argument);
  }
  SECTION("extra key given twice") {
    ok.set("pinned", true).set("pinned", false);
    CHECK_THROWS_AS(measurements_to_string(meta, {ok}), std::invalid_argument);
  }
}

TEST_CASE("every benchmark of the contract is accepted", "[toml]") {
  std::vector<Measurement> rows;
  for (const auto& name : benchmark_names()) {
    Measurement m = stream_row();
    m.id = name;
    m.benchmark = name;
    rows.push_back(m);
  }
  CHECK(rows.size() == 17);
  CHECK_NOTHROW(measurements_to_string(h100_meta(), rows));
}
