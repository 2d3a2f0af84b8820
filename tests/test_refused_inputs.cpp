// Inputs that make no sense are refused with exit 2 and a message that says where, which key, the
// value and what is accepted: numbers past a double in a config.json, --set arguments that are not
// one line of UTF-8, empty GPU ids, spec quantities outside their declared physical ranges.
#include <algorithm>
#include <string>
#include <tuple>

#include "cli_helpers.hpp"

using namespace gpusim;
using catalog::SpecFile;
using test::diagnostics_of;
using test::run;
using test::Run;
using test::scratch;
using test::source;
using test::write_temp;

namespace {

// The declared range of a spec key (catalog::key_ranges()), which must exist.
catalog::KeyRange range_of(const std::string& folder, const std::string& key) {
  const auto all = catalog::key_ranges();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const auto& r) { return r.folder == folder && r.key == key; });
  REQUIRE(it != all.end());
  return *it;
}

// The message of a value outside a declared range.
std::string outside(const catalog::KeyRange& r, const std::string& shown) {
  return "must be between " + r.lo + " and " + r.hi + " (" + r.why + "), got " + shown;
}

// The 1-based column of the first `needle` on line `line` (1-based) of `text`.
int column_of(const std::string& text, int line, const std::string& needle) {
  std::size_t start = 0;
  for (int l = 1; l < line; ++l) {
    start = text.find('\n', start) + 1;
  }
  return static_cast<int>(text.find(needle, start) - start) + 1;
}

// A spec file's text with the line that starts with `key` replaced by `replacement`.
std::string with_line(std::string text, const std::string& key, const std::string& replacement) {
  const auto at = text.find("\n" + key);
  REQUIRE(at != std::string::npos);
  const auto end = text.find('\n', at + 1);
  return text.replace(at + 1, end - at - 1, replacement);
}

const char* kHfLayersOverflow = R"({
  "model_type": "llama",
  "num_hidden_layers": 1e400,
  "hidden_size": 4096,
  "num_attention_heads": 32,
  "num_key_value_heads": 8,
  "intermediate_size": 14336,
  "vocab_size": 128256,
  "max_position_embeddings": 8192
}
)";

}  // namespace

TEST_CASE("a config.json number beyond a double's range is refused with its line, column, key and the range",
          "[refused][hf]") {
  const std::string json = write_temp("overflow-config.json", kHfLayersOverflow);
  const std::string expected = json + ":3:" + std::to_string(column_of(kHfLayersOverflow, 3, "1e400")) +
                               ": num_hidden_layers: a number must be within a double's range (magnitude at most "
                               "1.8e308), got 1e400";
  const Run imported = run("model import " + json);
  CHECK(imported.code == 2);
  CHECK(imported.out.empty());
  CHECK_THAT(imported.err, Catch::Contains(expected));

  const std::string scenario = write_temp("overflow-config.toml", R"(name = "overflow"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
hf_config = "overflow-config.json"
[training]
tokens = 1e9
seq_len = 2048
global_batch = 8
)");
  const Run estimated = run("estimate " + scenario);
  CHECK(estimated.code == 2);
  CHECK(estimated.out.empty());
  CHECK_THAT(estimated.err, Catch::Contains(expected));
}

TEST_CASE("a --set argument with a line break is refused, naming the argument", "[refused][set]") {
  const std::string sc = source("scenarios/gpt2-124m-rtx4090.toml");
  // A second line would be read as TOML of its own: another value, or a whole table.
  for (const std::string& value : {std::string("system.gpus=1\nsystem.gpus=0"),
                                   std::string("system.gpus=1\n[cost]\npue=2"), std::string("name=a\rb")}) {
    INFO(value);
    const Run r = run("estimate " + sc + " --format json --set '" + value + "'");
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    std::string shown = value;
    for (std::size_t at = shown.find('\n'); at != std::string::npos; at = shown.find('\n', at)) {
      shown.replace(at, 1, "\\n");
    }
    for (std::size_t at = shown.find('\r'); at != std::string::npos; at = shown.find('\r', at)) {
      shown.replace(at, 1, "\\x0d");
    }
    CHECK_THAT(r.err, Catch::Contains("--set " + shown + ": a --set argument is one line: it holds a line break"));
  }
}

TEST_CASE("a --set argument that is not UTF-8 is refused, and one that is reaches the report", "[refused][set]") {
  const std::string sc = source("scenarios/gpt2-124m-rtx4090.toml");
  const Run bad = run("estimate " + sc + " --format json --set 'name=\xff\xfe'");
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  // "name=" is 5 bytes: the 6th is the first that is not UTF-8
  CHECK_THAT(bad.err, Catch::Contains("--set name=\\xff\\xfe: a --set argument is UTF-8 text: byte 6 is not"));
  // Overlong and truncated sequences are not UTF-8 either.
  CHECK(run("estimate " + sc + " --set 'name=\xc0\xaf'").code == 2);
  CHECK(run("estimate " + sc + " --set 'name=\xe2\x82'").code == 2);

  const Run good = run("estimate " + sc + " --format json --set 'name=Grüße €'");
  CHECK(good.code == 0);
  CHECK_THAT(good.out, Catch::Contains("Grüße €"));

  // Overrides that do not come from --set (a sweep's values) are held to the same rule.
  const auto ds = diagnostics_of([] { (void)test::scenario(test::kSmallTraining, {Override{"name", "\xff"}}); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].format() == "--set name=\\xff: a --set argument is UTF-8 text: byte 6 is not");
}

TEST_CASE("an empty --gpu and an empty id in a --gpus list are refused", "[refused][cli]") {
  const std::string sc = source("scenarios/gpt2-124m-rtx4090.toml");
  const Run estimate = run("estimate " + sc + " --gpu ''");
  CHECK(estimate.code == 2);
  CHECK(estimate.out.empty());
  CHECK_THAT(estimate.err, Catch::Contains("--gpu needs a GPU id, got an empty string"));

  const Run roofline = run("roofline --gpu ''");
  CHECK(roofline.code == 2);
  CHECK_THAT(roofline.err, Catch::Contains("--gpu needs a GPU id, got an empty string"));

  const Run compare = run("compare " + sc + " --gpus rtx4090,,t4");
  CHECK(compare.code == 2);
  CHECK(compare.out.empty());
  CHECK_THAT(compare.err, Catch::Contains("--gpus \"rtx4090,,t4\": GPU id 2 is empty"));

  const Run trailing = run("roofline --gpus rtx4090,");
  CHECK(trailing.code == 2);
  CHECK_THAT(trailing.err, Catch::Contains("--gpus \"rtx4090,\": GPU id 2 is empty"));

  CHECK(run("compare " + sc + " --gpus rtx4090,t4").code == 0);
}

TEST_CASE("a problem in a table that --set created is reported at the --set argument that created it",
          "[refused][set]") {
  const std::string created = "model.moe.experts=8";
  const std::vector<Override> overrides = {{"model.moe.experts", "8"},
                                           {"model.moe.top_k", "2"}};  // no expert_ffn_hidden: a required key
  const auto ds = diagnostics_of([&] { (void)test::scenario(test::kSmallTraining, overrides); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].format() == "--set " + created + ": model.moe.expert_ffn_hidden: missing required key");

  const Run r = run("estimate " + source("scenarios/gpt2-124m-rtx4090.toml") +
                    " --set model.moe.experts=8 --set model.moe.top_k=9 --set model.moe.expert_ffn_hidden=3072");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("<input>") == std::string::npos);
  CHECK_THAT(r.err, Catch::Contains("--set " + created + ": model.moe: top_k (9) exceeds the routed experts (8)"));
}

TEST_CASE("a GPU clock or SM count outside its declared range is refused with position, key, value and range",
          "[refused][spec]") {
  const std::string file = "specs/gpus/rtx4090.toml";
  const std::string text = test::read_text(source(file));
  for (const auto& [key, value, shown] :
       {std::tuple<std::string, std::string, std::string>{"boost_clock", "\"1e-6 Hz\"", "\"1e-6 Hz\""},
        {"boost_clock", "\"6 GHz\"", "\"6 GHz\""},
        {"sm_count", "1", "1"}}) {
    INFO(key << " = " << value);
    const std::string changed = with_line(text, key + " ", key + " = " + value);
    Catalog c = test::catalog();
    c.add_file(SpecKind::kGpu, "rtx4090", SpecFile{file, changed});
    const auto ds = diagnostics_of([&] { (void)c.gpu("rtx4090"); });
    REQUIRE(ds.size() == 1);
    const int line =
        static_cast<int>(std::count(changed.begin(), changed.begin() + changed.find("\n" + key + " "), '\n')) + 2;
    CHECK(ds[0].format() == file + ":" + std::to_string(line) + ":" + std::to_string(key.size() + 4) + ": " + key +
                                ": " + outside(range_of("gpus", key), shown));
  }
  // The bounds themselves are accepted.
  Catalog c = test::catalog();
  c.add_file(SpecKind::kGpu, "rtx4090",
             SpecFile{file, with_line(with_line(text, "sm_count ", "sm_count = " + range_of("gpus", "sm_count").lo),
                                      "boost_clock ", "boost_clock = \"" + range_of("gpus", "boost_clock").lo + "\"")});
  CHECK(diagnostics_of([&] { (void)c.gpu("rtx4090"); }).empty());

  // From the command line: a spec directory with such a file ends the run with exit 2.
  const auto dir = scratch() / "slow-clock";
  std::filesystem::create_directories(dir / "gpus");
  std::ofstream(dir / "gpus" / "rtx4090.toml") << with_line(text, "boost_clock ", "boost_clock = \"1e-6 Hz\"");
  const Run r = run("estimate " + source("scenarios/gpt2-124m-rtx4090.toml") + " --specs " + dir.string());
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("boost_clock: " + outside(range_of("gpus", "boost_clock"), "\"1e-6 Hz\"")));
}

TEST_CASE("memory, power, price, host and link quantities outside their declared ranges are refused",
          "[refused][spec]") {
  const std::string gpu = test::read_text(source("specs/gpus/h100-sxm5-80gb.toml"));
  for (const auto& [table, key, value] :
       {std::tuple<std::string, std::string, std::string>{"memory", "bandwidth", "1 MB/s"},
        {"memory", "capacity", "100 MB"},
        {"power", "tdp", "1 W"},
        {"price", "cloud_rate", "0.001 USD/h"}}) {
    INFO(table << "." << key);
    Catalog c = test::catalog();
    c.add_file(SpecKind::kGpu, "odd",
               SpecFile{"odd.toml", "base = \"h100-sxm5-80gb\"\nname = \"odd\"\n[" + table + "]\n" + key + " = \"" +
                                        value + "\"\n"});
    const auto ds = diagnostics_of([&] { (void)c.gpu("odd"); });
    REQUIRE_FALSE(ds.empty());
    CHECK(ds[0].format() == "odd.toml:4:" + std::to_string(key.size() + 4) + ": " + table + "." + key + ": " +
                                outside(range_of("gpus", table + "." + key), "\"" + value + "\""));
  }
  Catalog c = test::catalog();
  c.add_file(SpecKind::kHost, "tiny", SpecFile{"tiny.toml", R"(name = "tiny"
cores = 4
memory = "64 MB"
memory_bandwidth = "100 GB/s"
memory_efficiency = 0.7
nvme_bandwidth = "5 GB/s"
)"});
  auto ds = diagnostics_of([&] { (void)c.host("tiny"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].format() == "tiny.toml:3:10: memory: " + outside(range_of("hosts", "memory"), "\"64 MB\""));

  c.add_file(SpecKind::kLink, "slow", SpecFile{"slow.toml", R"(name = "slow"
kind = "ethernet"
bandwidth = "100 Gb/s"
latency = "1 s"
efficiency = 0.9
)"});
  ds = diagnostics_of([&] { (void)c.link("slow"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].format() == "slow.toml:4:11: latency: " + outside(range_of("links", "latency"), "\"1 s\""));
}

TEST_CASE("each declared range is two quantities of one unit or two plain numbers, the lower below the upper",
          "[refused][spec]") {
  const auto all = catalog::key_ranges();
  CHECK(all.size() >= 20);
  for (const auto& r : all) {
    INFO(r.folder << " " << r.key);
    CHECK_FALSE(r.why.empty());
    if (r.lo.find(' ') == std::string::npos) {  // a count or a share: plain numbers
      CHECK(std::stod(r.lo) > 0);
      CHECK(std::stod(r.lo) < std::stod(r.hi));
      continue;
    }
    const units::ParsedQuantity lo = units::parse_quantity(r.lo);
    const units::ParsedQuantity hi = units::parse_quantity(r.hi);
    CHECK(lo.dim == hi.dim);
    CHECK(lo.si > 0);
    CHECK(lo.si < hi.si);
  }
}

TEST_CASE("specs/README.md lists every declared spec range and no other", "[refused][spec][docs]") {
  const std::string doc = test::read_text(source("specs/README.md"));
  const auto begin = doc.find("## Ranges");
  REQUIRE(begin != std::string::npos);
  const std::string text = doc.substr(begin, doc.find("\n## ", begin + 1) - begin);
  std::size_t spec_rows = 0;
  for (const auto& r : catalog::key_ranges()) {
    if (r.folder == "scenario") {
      continue;
    }
    ++spec_rows;
    const std::string row = "| `" + r.folder + "/` | `" + r.key + "` | " + r.lo + " | " + r.hi + " | " + r.why + " |";
    INFO(row);
    CHECK(text.find(row) != std::string::npos);
  }
  std::size_t rows = 0;  // table rows that name a folder: one per declared range
  for (std::size_t at = text.find("\n| `"); at != std::string::npos; at = text.find("\n| `", at + 1)) {
    ++rows;
  }
  CHECK(rows == spec_rows);
}

TEST_CASE("docs/scenarios.md lists every declared scenario range", "[refused][scenario][docs]") {
  const std::string doc = test::read_text(source("docs/scenarios.md"));
  const auto begin = doc.find("## Ranges");
  REQUIRE(begin != std::string::npos);
  const std::string text = doc.substr(begin, doc.find("\n## ", begin + 1) - begin);
  std::size_t scenario_rows = 0;
  for (const auto& r : catalog::key_ranges()) {
    if (r.folder != "scenario") {
      continue;
    }
    ++scenario_rows;
    const std::string row = "| `" + r.key + "` | " + r.lo + " | " + r.hi + " | " + r.why + " |";
    INFO(row);
    CHECK(text.find(row) != std::string::npos);
  }
  CHECK(scenario_rows >= 5);
}

TEST_CASE("a utilization below its declared floor is refused: the owned cost per job would have no bound",
          "[refused][scenario]") {
  const auto ds = diagnostics_of([&] {
    (void)test::scenario(test::kSmallTraining, {Override{"cost.utilization", "1e-308"}});
  });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].pos.file == "--set cost.utilization=1e-308");
  CHECK(ds[0].key == "cost.utilization");
  CHECK(ds[0].message == outside(range_of("scenario", "cost.utilization"), "1e-308"));
  CHECK_NOTHROW(test::scenario(test::kSmallTraining,
                               {Override{"cost.utilization", range_of("scenario", "cost.utilization").lo}}));
}

TEST_CASE("scenario prices, power, lifetime and storage outside their declared ranges are refused",
          "[refused][scenario]") {
  for (const auto& [table, key, value] :
       {std::tuple<std::string, std::string, std::string>{"cost", "electricity", "20 USD/kWh"},
        {"cost", "cloud_rate", "0.001 USD/h"},
        {"cost", "host_power", "200 kW"},
        {"cost", "lifetime", "1 day"},
        {"cost", "carbon_intensity", "5 kg/kWh"},
        {"input", "storage_bandwidth", "1 kB/s"}}) {
    INFO(table << "." << key);
    const auto ds = diagnostics_of([&] {
      (void)test::scenario(test::kSmallTraining, {Override{table + "." + key, "\"" + value + "\""}});
    });
    // [input] created by --set also lacks its required keys: the range is one of the problems
    const auto it = std::find_if(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.key == table + "." + key; });
    REQUIRE(it != ds.end());
    const Diagnostic& d = *it;
    CHECK(d.pos.file == "--set " + table + "." + key + "=\"" + value + "\"");
    CHECK(d.key == table + "." + key);
    CHECK(d.message == outside(range_of("scenario", table + "." + key), "\"" + value + "\""));
  }
  // Zero stays allowed where the key allows it, and the bounds themselves are accepted.
  CHECK_NOTHROW(test::scenario(test::kSmallTraining,
                               {{"cost.electricity", "\"0 USD/kWh\""},
                                {"cost.lifetime", "\"" + range_of("scenario", "cost.lifetime").lo + "\""}}));
}

namespace {
// A shipped GPU file without its top-level `segment` line.
std::string without_segment(const std::string& file) {
  const std::string text = test::read_text(source(file));
  const auto at = text.find("\nsegment = ");
  REQUIRE(at != std::string::npos);
  return text.substr(0, at + 1) + text.substr(text.find('\n', at + 1) + 1);
}
}  // namespace

TEST_CASE("a key missing from a GPU file is reported at the GPU file, not at its architecture's", "[refused][spec]") {
  // A PCIe card may be consumer, workstation or data-centre: its file must say which.
  const std::string file = "specs/gpus/rtx4090.toml";
  Catalog c = test::catalog();
  c.add_file(SpecKind::kGpu, "rtx4090", SpecFile{file, without_segment(file)});
  const auto ds = diagnostics_of([&] { (void)c.gpu("rtx4090"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].format() == file + ":1:1: segment: missing required key");
}

TEST_CASE("an SXM module's file may leave out its segment: SXM and OAM parts are sold only in servers", "[spec]") {
  const std::string file = "specs/gpus/h100-sxm5-80gb.toml";
  Catalog c = test::catalog();
  c.add_file(SpecKind::kGpu, "h100-sxm5-80gb", SpecFile{file, without_segment(file)});
  CHECK(c.gpu("h100-sxm5-80gb").segment == hardware::Segment::kDatacenter);
}

TEST_CASE("an unknown key in an architecture file's [meta] is refused", "[refused][spec]") {
  const std::string file = "specs/arch/hopper.toml";
  std::string text = test::read_text(source(file));
  const auto meta = text.find("\n[meta]\n");
  REQUIRE(meta != std::string::npos);
  text.insert(meta + 8, "sourses = []\n");
  const int line = static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(meta), '\n')) + 3;
  Catalog c = test::catalog();
  c.add_file(SpecKind::kArch, "hopper", SpecFile{file, text});
  const auto ds = diagnostics_of([&] { (void)c.gpu("h100-sxm5-80gb"); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].format() ==
        file + ":" + std::to_string(line) + ":1: meta.sourses: unknown key (did you mean \"sources\"?)");
}

TEST_CASE("a GPU count written as a float beyond any integer is refused as input, in the file or by --set",
          "[refused][set]") {
  // The loader compares the file's counts with the counts after the overrides (a purchase price is
  // for the file's count): a float count must be refused, never converted to an integer.
  const std::string toml =
      "name = \"x\"\n[system]\ngpu = \"rtx4090\"\ngpus = 1e308\n[model]\npreset = \"gpt2-124m\"\n"
      "[training]\ntokens = 1e9\nseq_len = 1024\nglobal_batch = 8\n";
  CHECK_THROWS_AS(test::scenario(toml), InputError);
  const std::string whole =
      "name = \"x\"\n[system]\ngpu = \"rtx4090\"\ngpus = 1\n[model]\npreset = \"gpt2-124m\"\n"
      "[training]\ntokens = 1e9\nseq_len = 1024\nglobal_batch = 8\n";
  CHECK_THROWS_AS(test::scenario(whole, {{"system.gpus", "1e308"}}), InputError);
  CHECK_THROWS_AS(test::scenario(whole, {{"system.gpus_per_node", "-1e308"}}), InputError);
}
