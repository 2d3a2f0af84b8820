// Spec files: every problem is reported with file:line:col, the key and the value, all at once
// (the way toml++'s own parsing_should_fail tests assert positions).
#include <algorithm>

#include "helpers.hpp"

using namespace gpusim;
using catalog::SpecFile;
using gpusim::test::diagnostics_of;
using hardware::GpuSpec;

namespace {

Catalog with_gpu(const std::string& id, const std::string& text) {
  Catalog c = test::catalog();
  c.add_file(SpecKind::kGpu, id, SpecFile{"specs/gpus/" + id + ".toml", text});
  return c;
}

const Diagnostic* find_key(const std::vector<Diagnostic>& ds, const std::string& key) {
  auto it = std::find_if(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.key == key; });
  return it == ds.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("all problems of a spec file are reported together with their positions", "[spec][errors]") {
  const Catalog c = with_gpu("bad", R"(base = "h100-sxm5-80gb"
name = "bad"
[memory]
bandwith = "3 TB/s"
capacity = "80"
[peer_link]
bandwidth = "-450 GB/s"
)");
  const auto ds = diagnostics_of([&] { (void)c.gpu("bad"); });
  REQUIRE(ds.size() == 3);

  const Diagnostic* typo = find_key(ds, "memory.bandwith");
  REQUIRE(typo != nullptr);
  CHECK(typo->pos.file == "specs/gpus/bad.toml");
  CHECK(typo->pos.line == 4);
  CHECK(typo->pos.column == 1);
  CHECK(typo->message == "unknown key (did you mean \"bandwidth\"?)");

  const Diagnostic* unitless = find_key(ds, "memory.capacity");
  REQUIRE(unitless != nullptr);
  CHECK(unitless->pos.line == 5);
  CHECK(unitless->pos.column == 12);
  CHECK(unitless->format() ==
        "specs/gpus/bad.toml:5:12: memory.capacity: expected a size like \"80 GiB\" or \"50 MB\", got \"80\": no unit");

  const Diagnostic* negative = find_key(ds, "peer_link.bandwidth");
  REQUIRE(negative != nullptr);
  CHECK(negative->pos.line == 7);
  CHECK(negative->pos.column == 13);
  CHECK(negative->message == "must be greater than zero, got \"-450 GB/s\"");
}

TEST_CASE("a zero memory bandwidth is rejected", "[spec][errors]") {
  const Catalog c = with_gpu("zero", "base = \"a100-sxm4-80gb\"\nname = \"z\"\n[memory]\nbandwidth = \"0 TB/s\"\n");
  const auto ds = diagnostics_of([&] { (void)c.gpu("zero"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].format() == "specs/gpus/zero.toml:4:13: memory.bandwidth: must be greater than zero, got \"0 TB/s\"");
}

TEST_CASE("values inherited from a base keep the base file's position", "[spec][inheritance]") {
  Catalog c = with_gpu("parent", R"(base = "h100-sxm5-80gb"
name = "parent"
[power]
tdp = "700"
)");
  c.add_file(SpecKind::kGpu, "child", SpecFile{"specs/gpus/child.toml", "base = \"parent\"\nname = \"child\"\n"});
  const auto ds = diagnostics_of([&] { (void)c.gpu("child"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].pos.file == "specs/gpus/parent.toml");
  CHECK(ds[0].pos.line == 4);
  CHECK(ds[0].key == "power.tdp");
}

TEST_CASE("a child spec overrides only the keys it names", "[spec][inheritance]") {
  const GpuSpec h100 = test::catalog().gpu("h100-sxm5-80gb");
  const GpuSpec h800 = test::catalog().gpu("h800-sxm5-80gb");
  CHECK(h800.peer_bandwidth.value() == Approx(200e9));  // 400 GB/s bidirectional
  CHECK(h800.peer_bandwidth < h100.peer_bandwidth);
  CHECK(h800.peak_for(DType::kBf16).value() == h100.peak_for(DType::kBf16).value());
  CHECK(h800.memory_bandwidth.value() == h100.memory_bandwidth.value());
}

TEST_CASE("an unknown base and a base cycle are errors, not hangs", "[spec][inheritance][errors]") {
  Catalog c = with_gpu("orphan", "base = \"no-such-gpu\"\nname = \"o\"\n");
  auto ds = diagnostics_of([&] { (void)c.gpu("orphan"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].format() == "specs/gpus/orphan.toml:1:8: base: unknown id \"no-such-gpu\" in gpus/");

  c.add_file(SpecKind::kGpu, "a", SpecFile{"a.toml", "base = \"b\"\n"});
  c.add_file(SpecKind::kGpu, "b", SpecFile{"b.toml", "base = \"a\"\n"});
  ds = diagnostics_of([&] { (void)c.gpu("a"); });
  REQUIRE_FALSE(ds.empty());
  CHECK_THAT(ds[0].message, Catch::Contains("deeper than 8 levels"));
}

TEST_CASE("TOML syntax errors carry the parser's position", "[spec][errors]") {
  const Catalog c = with_gpu("syntax", "name = \"x\"\n[memory\n");
  const auto ds = diagnostics_of([&] { (void)c.gpu("syntax"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].pos.file == "specs/gpus/syntax.toml");
  CHECK(ds[0].pos.line == 2);
  CHECK_THAT(ds[0].message, Catch::StartsWith("TOML syntax error"));
}

TEST_CASE("a spec file's syntax error is reported at every use, by every copy of the catalog", "[spec][errors]") {
  // A file's tree is parsed at its first two uses and kept from the second (catalog.cpp): the
  // kept failure must read as the first.
  const Catalog c = with_gpu("syntax", "name = \"x\"\n[memory\n");
  std::vector<std::string> seen;
  for (int use = 0; use < 4; ++use) {
    const Catalog copy = c;  // a fresh memo: the spec is resolved again from its file
    const auto ds = diagnostics_of([&] { (void)copy.gpu("syntax"); });
    REQUIRE(ds.size() == 1);
    seen.push_back(ds[0].format());
  }
  CHECK(seen[0] ==
        "specs/gpus/syntax.toml:2:8: TOML syntax error: Error while parsing table header: expected ']', "
        "saw '\\n'");
  CHECK(std::all_of(seen.begin(), seen.end(), [&](const std::string& d) { return d == seen[0]; }));
}

TEST_CASE("a spec resolved again from a kept tree is the spec resolved from its text", "[spec]") {
  const Catalog c = Catalog::builtin();  // nothing resolved: each copy resolves from the files
  const Catalog first = c;
  const GpuSpec a = first.gpu("a100-sxm4-80gb");
  for (int use = 0; use < 3; ++use) {
    const Catalog copy = c;
    CHECK(copy.gpu("a100-sxm4-80gb") == a);
  }
}

TEST_CASE("a missing required key names the table it belongs in", "[spec][errors]") {
  const Catalog c = with_gpu("nosm", R"(name = "n"
architecture = "ampere"
form_factor = "pcie"
boost_clock = "1 GHz"
)");
  const auto ds = diagnostics_of([&] { (void)c.gpu("nosm"); });
  const Diagnostic* sm = find_key(ds, "sm_count");
  REQUIRE(sm != nullptr);
  CHECK(sm->message == "missing required key");
  CHECK(find_key(ds, "compute") != nullptr);
  CHECK(find_key(ds, "memory.capacity") != nullptr);  // [memory] exists: the architecture adds its reserve
}

TEST_CASE("an unknown GPU id lists the known ids", "[spec][errors]") {
  const auto ds = diagnostics_of([] { (void)test::catalog().gpu("h100"); });
  REQUIRE(ds.size() == 1);
  CHECK_THAT(ds[0].message, Catch::StartsWith("unknown id \"h100\" in gpus/") && Catch::Contains("h100-sxm5-80gb"));
}
