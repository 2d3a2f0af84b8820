// The releases a runtime file models (`versions`, specs/README.md), the release a measurement row
// states (`runtime_version`, docs/measurements.md) and the check between them.
#include <filesystem>
#include <fstream>

#include "cli_helpers.hpp"

using namespace gpusim;
using catalog::SpecFile;
using test::diagnostics_of;
using test::run;
using test::Run;

namespace {

std::vector<int> release(const std::string& text) {
  const auto v = workload::parse_version(text);
  REQUIRE(v.has_value());
  return *v;
}

workload::VersionRange range(const std::string& text) {
  const auto r = workload::parse_version_range(text);
  REQUIRE(r.has_value());
  return *r;
}

// A measurement file of one TTFT row on `scenario` (a file name beside it) stating `version`.
std::string ttft_row(const std::string& scenario, const std::string& version) {
  return "[meta]\nsource = \"test\"\nrole = \"check\"\n\n[[measurement]]\nid = \"r1\"\ngpu = \"h100-sxm5-80gb\"\n"
         "benchmark = \"scenario\"\nscenario = \"" +
         scenario + "\"\nmetric = \"inference.ttft_s.p50\"\nvalue = 0.05\nruntime_version = \"" + version + "\"\n";
}

std::string write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
  return p.string();
}

}  // namespace

TEST_CASE("a release is its numbers, and a pre-, post-, dev- or local-release suffix plays no part", "[versions]") {
  CHECK(release("0.6.0") == std::vector<int>{0, 6, 0});
  CHECK(release("v0.3.0") == std::vector<int>{0, 3, 0});
  CHECK(release("1.2.0rc1") == std::vector<int>{1, 2, 0});
  CHECK(release("0.5.3.post3") == std::vector<int>{0, 5, 3});
  CHECK(release("0.28.1rc1.dev174+g37f5dca3f") == std::vector<int>{0, 28, 1});
  CHECK(release("0.10") == std::vector<int>{0, 10});
  for (const char* bad : {"", "v", "latest", "0.x", "1..2", "1.2.", "0.6 0", ".6", "0.6-", "99999999999.1"}) {
    INFO(bad);
    CHECK_FALSE(workload::parse_version(bad).has_value());
  }
}

TEST_CASE("a range covers the releases between its bounds, each bound compared on its own components", "[versions]") {
  const workload::VersionRange v0 = range("0.5-0.10");
  for (const char* in : {"0.5.0", "0.6.3", "0.9.0", "0.10.2", "0.5"}) {
    INFO(in);
    CHECK(v0.covers(release(in)));
  }
  for (const char* out : {"0.4.9", "0.11.0", "1.0", "0.1"}) {
    INFO(out);
    CHECK_FALSE(v0.covers(release(out)));
  }
  const workload::VersionRange open = range("0.8-");
  CHECK(open.max.empty());
  CHECK(open.covers(release("0.8.0")));
  CHECK(open.covers(release("0.11.0")));
  CHECK(open.covers(release("2")));
  CHECK_FALSE(open.covers(release("0.7.3")));
  const workload::VersionRange series = range("0.3");
  CHECK(series.covers(release("0.3.0")));
  CHECK(series.covers(release("0.3.5.post1")));
  CHECK_FALSE(series.covers(release("0.4.0")));
  CHECK_FALSE(series.covers(release("0.2.9")));
  CHECK(range("0.6.5-0.6").covers(release("0.6.7")));      // from a patch release to the end of its series
  CHECK(workload::VersionRange{}.covers(release("0.1")));  // a file that states none makes no claim
  for (const char* bad : {"", "-0.6", "0.7-0.6", "0.7-0.6.5", "0.5-0.6-0.7", "0.5.x", "v0.5-0.6", "0.5-0.6rc1"}) {
    INFO(bad);
    CHECK_FALSE(workload::parse_version_range(bad).has_value());
  }
}

TEST_CASE("the serving runtimes state the releases each era's file models", "[versions][catalog]") {
  CHECK(test::catalog().runtime("vllm-v0").versions.text == "0.5-0.10");
  CHECK(test::catalog().runtime("vllm").versions.text == "0.8-");
  CHECK(test::catalog().runtime("sglang-v0.3").versions.text == "0.3");
  CHECK(test::catalog().runtime("sglang").versions.text == "0.4-");
  // The eras do not overlap where one engine replaced the other's default.
  CHECK_FALSE(test::catalog().runtime("sglang").versions.covers(release("0.3.0")));
  CHECK_FALSE(test::catalog().runtime("sglang-v0.3").versions.covers(release("0.4.0")));
}

TEST_CASE("a runtime file's bad versions are refused with position, key, value and the accepted form",
          "[versions][spec][errors]") {
  Catalog c = test::catalog();
  c.add_file(SpecKind::kRuntime, "odd", SpecFile{"odd.toml", "base = \"vllm\"\nversions = \"0.7-0.6\"\n"});
  const auto ds = diagnostics_of([&] { (void)c.runtime("odd"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].format() ==
        "odd.toml:2:12: versions: expected the releases the file models as \"MIN-MAX\", \"MIN-\" or one series, each "
        "bound numbers joined by dots with the lower not above the upper (\"0.5-0.6\", \"0.8-\", \"0.3\"), got "
        "\"0.7-0.6\"");
}

TEST_CASE("a row whose release its scenario's runtime file does not model is refused, naming the range",
          "[versions][validate][errors]") {
  const auto dir = test::scratch() / "versions";
  write(dir / "v0.toml", test::serving_scenario("vllm-v0"));
  const std::string late = write(dir / "late.toml", ttft_row("v0.toml", "0.11.0"));
  const auto ds = diagnostics_of([&] { (void)validation::load_measurements(test::catalog(), {late}); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].pos.file == late);
  CHECK(ds[0].pos.line == 12);
  CHECK(ds[0].pos.column == 19);
  CHECK(ds[0].key == "measurement[0].runtime_version");
  CHECK(ds[0].message == "\"0.11.0\" is outside the releases 0.5-0.10 that runtime \"vllm-v0\" (" +
                             test::catalog().runtime("vllm-v0").origin + ") models, which scenario " +
                             (dir / "v0.toml").lexically_normal().string() +
                             " runs: name a runtime file whose versions cover it");
  // Within the range, the row loads and keeps its release.
  const std::string ok = write(dir / "ok.toml", ttft_row("v0.toml", "0.9.0"));
  const auto rows = validation::load_measurements(test::catalog(), {ok});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].runtime_version == "0.9.0");
  // A release that is no release is refused where it is written, whatever the runtime.
  const std::string bad = write(dir / "bad.toml", ttft_row("v0.toml", "0.x"));
  const auto bs = diagnostics_of([&] { (void)validation::load_measurements(test::catalog(), {bad}); });
  REQUIRE(bs.size() == 1);
  CHECK(bs[0].format() == bad +
                              ":12:19: measurement[0].runtime_version: expected a release as its project writes it, "
                              "numbers joined by dots and an optional suffix (\"0.6.0\", \"v0.3.0\", \"1.2.0rc1\", "
                              "\"0.5.3.post3\"), got \"0.x\"");
  // On the command line both are bad input: exit 2, the message on stderr, nothing on stdout.
  for (const std::string& f : {late, bad}) {
    const Run r = run("validate " + f);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains("measurement[0].runtime_version"));
  }
}
