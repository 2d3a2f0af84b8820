// Ranges at the boundary (docs/scenarios.md#ranges): every count is checked in its own 64-bit type
// against its documented bound before any narrowing, and every quantity against the magnitudes of
// its dimension, so that no typo reaches the model as 0, a negative count or infinity. The
// reproducers of out-of-range input are here, each refused with its position, key, value and range.
#include <algorithm>
#include <cmath>

#include "cli_helpers.hpp"

using namespace gpusim;
using catalog::SpecFile;
using gpusim::test::diagnostics_of;
using gpusim::test::run;
using gpusim::test::source;

namespace {

std::vector<Diagnostic> errors_of(const std::vector<Override>& overrides) {
  return diagnostics_of([&] { (void)test::scenario(test::kSmallTraining, overrides); });
}

std::string range_message(std::int64_t min, std::int64_t max, const std::string& got) {
  return "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + got;
}

}  // namespace

TEST_CASE("a count past its range is refused in its own type, before it is narrowed to int", "[limits][errors]") {
  // 2^32 became 0 after a cast to int (SIGFPE); 2^31 became negative (negative step times).
  struct Case {
    const char* key;
    const char* value;
    std::int64_t max;
  };
  const Case cases[] = {
      {"system.gpus_per_node", "4294967296", limits::kDevices},
      {"parallelism.pipeline", "4294967296", limits::kDevices},
      {"system.gpus", "2147483648", limits::kDevices},
      {"system.gpus", "9223372036854775807", limits::kDevices},
      {"training.micro_batch", "900000000", limits::kBatch},
      {"training.global_batch", "100000001", limits::kBatch},
      {"training.seq_len", "100000001", limits::kSequence},
      {"model.layers", "100001", limits::kLayers},
      {"model.hidden", "10000001", limits::kWidth},
      {"input.workers", "10001", limits::kWorkers},
  };
  for (const Case& c : cases) {
    INFO(c.key << " = " << c.value);
    const auto ds = errors_of({{c.key, c.value}});
    REQUIRE(!ds.empty());
    const auto it = std::find_if(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.key == c.key; });
    REQUIRE(it != ds.end());
    CHECK(it->message == range_message(1, c.max, c.value));
    CHECK(it->pos.file == std::string("--set ") + c.key + "=" + c.value);
  }
  // The bounds themselves are accepted as counts (the layout check may still object).
  const auto at_bound = errors_of({{"training.global_batch", std::to_string(limits::kBatch)}});
  CHECK(std::none_of(at_bound.begin(), at_bound.end(),
                     [](const Diagnostic& d) { return d.message.find("must be between") != std::string::npos; }));
}

TEST_CASE("a whole-number float past int64 is not a count", "[limits][errors]") {
  // 9e18 is whole but above 2^63 * 0.98: never converted
  const auto ds = errors_of({{"training.global_batch", "9e18"}, {"training.micro_batch", "9e18"}});
  REQUIRE(ds.size() == 2);
  CHECK(ds[0].message == "expected a whole number, got 9e+18");
}

TEST_CASE("the ZeRO stage is 0 to 3", "[limits][errors]") {
  const auto ds = errors_of({{"parallelism.zero", "4"}});
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].message == range_message(0, 3, "4"));
}

TEST_CASE("tokens and parameter totals have bounds of their own", "[limits][errors]") {
  const auto tokens = errors_of({{"training.tokens", "1e17"}});
  REQUIRE(tokens.size() == 1);
  CHECK(tokens[0].message == "must be at most 1e16, got 1e+17");
  const auto params = errors_of({{"model.preset", "\"\""}, {"model.params", "2e15"}});
  CHECK(std::any_of(params.begin(), params.end(), [](const Diagnostic& d) {
    return d.key == "model.params" && d.message == "must be at most 1e15, got 2e+15";
  }));
}

TEST_CASE("a quantity past its dimension's magnitudes is refused with the accepted range", "[limits][errors]") {
  const auto tiny = errors_of({{"system.power_limit", "\"1e-30 W\""}});
  REQUIRE(tiny.size() == 1);
  CHECK(tiny[0].message == "must be between 1 mW and 1000 MW, got \"1e-30 W\"");
  const auto rate = errors_of({{"cost.cloud_rate", "\"1e9 USD/h\""}});
  REQUIRE(rate.size() == 1);
  CHECK(rate[0].message == "must be between 0.000001 USD/h and 1e6 USD/h, got \"1e9 USD/h\"");
  // Zero stays a value of its own where the key takes it: a free electricity price is no typo.
  CHECK(errors_of({{"cost.electricity", "\"0 USD/kWh\""}}).empty());
}

TEST_CASE("each dimension's range texts are its bounds, written as units the parser reads", "[limits][units]") {
  for (int d = 0; d <= static_cast<int>(units::Dim::kMassPerEnergy); ++d) {
    const auto dim = static_cast<units::Dim>(d);
    const units::Magnitudes m = units::accepted_magnitudes(dim);
    INFO(units::describe(dim));
    CHECK(m.lo > 0);
    CHECK(m.hi > m.lo);
    CHECK(units::parse_si(m.lo_text, dim) == Approx(m.lo).epsilon(1e-12));
    CHECK(units::parse_si(m.hi_text, dim) == Approx(m.hi).epsilon(1e-12));
  }
}

TEST_CASE("a spec overlay with a vanishing bandwidth, a zero SM count or an infinite peak is refused",
          "[limits][spec][errors]") {
  Catalog c = test::catalog();
  c.add_file(SpecKind::kGpu, "odd", SpecFile{"specs/gpus/odd.toml", R"(base = "h100-sxm5-80gb"
name = "odd"
sm_count = 0
[memory]
bandwidth = "1e-30 B/s"
[compute]
bf16 = "1e300 PFLOP/s"
)"});
  const auto ds = diagnostics_of([&] { (void)c.gpu("odd"); });
  REQUIRE(ds.size() == 3);
  CHECK(ds[0].key == "sm_count");
  CHECK(ds[0].pos.line == 3);
  CHECK(ds[0].message == range_message(1, limits::kSms, "0"));
  CHECK(ds[1].key == "compute.bf16");
  CHECK_THAT(ds[1].message, Catch::Contains("out of range in SI units"));
  CHECK(ds[2].key == "memory.bandwidth");
  CHECK(ds[2].message == "must be between 1 B/s and 10 PB/s, got \"1e-30 B/s\"");
}

TEST_CASE("a measurement's GPU count is checked before it is narrowed", "[limits][validate][errors]") {
  const std::string file = test::write_temp("wide.toml", R"([[measurement]]
id = "W1"
source = "test"
role = "check"
benchmark = "scenario"
gpu = "h100-sxm5-80gb"
gpus = 4294967296
scenario = "scenarios/llama3-8b-8xh100.toml"
metric = "throughput.tokens_per_s"
value = 1000
)");
  const test::Run r = run("validate " + file);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(":7:8: measurement[0].gpus: " + range_message(1, limits::kDevices, "4294967296")));
  CHECK(r.out.empty());
}

TEST_CASE("out-of-range counts exit 2 from the command line with nothing on stdout", "[limits][cli][errors]") {
  const std::string sc = source("scenarios/gpt2-124m-rtx4090.toml");
  for (const char* set : {"system.gpus_per_node=4294967296", "system.gpus=2147483648",
                          "system.gpus=9223372036854775807", "training.global_batch=9e18"}) {
    INFO(set);
    const test::Run r = run("estimate " + sc + " --set " + set + " --format json");
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains(std::string("--set ") + set));
  }
}

TEST_CASE("docs/scenarios.md states the ranges the loaders apply", "[limits][docs]") {
  const std::string doc = test::read_text(source("docs/scenarios.md"));
  const auto begin = doc.find("## Ranges");
  REQUIRE(begin != std::string::npos);
  const std::string text = doc.substr(begin, doc.find("\n## ", begin + 1) - begin);
  for (const std::int64_t max : {limits::kDevices, limits::kLayers, limits::kWidth, limits::kSequence, limits::kBatch,
                                 limits::kRequests, limits::kWorkers, limits::kSms, limits::kTile}) {
    INFO(max);
    CHECK(text.find("| 1 … " + std::to_string(max) + " |") != std::string::npos);
  }
  // 1e16 as the messages write it: 10^k as "1e" k
  for (const double max : {limits::kTokens, limits::kParams, limits::kRatio}) {
    const std::string bound = "1e" + std::to_string(std::lround(std::log10(max)));
    REQUIRE(max == Approx(std::pow(10.0, static_cast<double>(std::lround(std::log10(max))))));  // a power of ten
    INFO(bound);
    CHECK(text.find("at most " + bound + " |") != std::string::npos);
  }
  for (int d = 0; d <= static_cast<int>(units::Dim::kMassPerEnergy); ++d) {
    const units::Magnitudes m = units::accepted_magnitudes(static_cast<units::Dim>(d));
    INFO(m.lo_text);
    CHECK(text.find(std::string("| `") + m.lo_text + "` | `" + m.hi_text + "` |") != std::string::npos);
  }
}

TEST_CASE("pricing a job on a cloud GPU that lacks its precision is bad input, not an internal error",
          "[limits][cli][errors]") {
  // The V100 has no bf16: there is no rate for this job on it ("bad optional access", exit 1, before)
  const test::Run r =
      run("estimate " + source("scenarios/gpt2-124m-rtx4090.toml") + " --set cost.cloud_gpu='\"v100-sxm2-32gb\"'");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("cost.cloud_gpu: the cloud GPU NVIDIA Tesla V100 SXM2 32GB has no bf16 support"));
}

TEST_CASE("commands with nothing to work on exit 2: an empty measurement directory, a missing scenario",
          "[limits][cli][errors]") {
  const auto empty = test::scratch() / "no-measurements";
  std::filesystem::create_directories(empty);
  const test::Run v = run("validate " + empty.string() + " --fail-above 0");
  CHECK(v.code == 2);
  CHECK(v.out.empty());
  const test::Run c = run("compare /no/such/scenario.toml --gpus rtx4090,a100-sxm4-80gb");
  CHECK(c.code == 2);
  CHECK(c.out.empty());
  CHECK_THAT(c.err, Catch::Contains("/no/such/scenario.toml: cannot read scenario file"));
}

TEST_CASE("specs check parses an architecture file it is given, with positions", "[limits][cli][specs][errors]") {
  std::string text = test::read_text(source("specs/arch/ada.toml"));
  const std::string good = "gemm = 0.97";
  REQUIRE(text.find(good) != std::string::npos);
  text.replace(text.find(good), good.size(), "gemm = 7.5");
  const auto dir = test::scratch() / "arch-check" / "arch";
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "ada.toml").string();
  std::ofstream(file) << text;
  const test::Run r = run("specs check " + file);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(file + ":") && Catch::Contains("efficiency.gemm"));
  CHECK(run("specs check " + source("specs/arch/ada.toml")).code == 0);
}
