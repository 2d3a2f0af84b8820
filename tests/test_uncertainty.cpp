// The band of an estimate (src/answer/uncertainty.cpp): one-at-a-time re-runs of the evaluator at
// both ends of each input's range, combined in quadrature [jcgm-gum-2008, §5.1]; the ranges from
// the spec files' [uncertainty] tables; and the coverage `validate` reports.
#include <algorithm>
#include <cmath>
#include <fstream>

#include "helpers.hpp"

using namespace gpusim;
using answer::Band;
using answer::Unknown;
using catalog::SpecFile;
using gpusim::test::band;
using gpusim::test::banded;
using gpusim::test::diagnostics_of;

namespace {

double width(const Band& b) { return b.high - b.low; }

// GPT-2 124M on one A100 with neither the micro-batch nor the runtime set.
const char* kUnset = R"(name = "unset"
[system]
gpu = "a100-sxm4-80gb"
gpus = 1
[model]
preset = "gpt2-124m"
[training]
tokens = 1e9
seq_len = 1024
global_batch = 64
)";

const char* kServing = R"(name = "serve"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
preset = "llama2-7b"
[inference]
batch = 8
prompt_tokens = 512
output_tokens = 128
[runtime]
name = "vllm"
)";

bool has_unknown(const answer::Estimate& e, Unknown u) {
  const auto& list = e.uncertainty->unknowns;
  return std::any_of(list.begin(), list.end(), [u](const answer::Contribution& c) { return c.unknown == u; });
}

const Diagnostic* find_key(const std::vector<Diagnostic>& ds, const std::string& key) {
  auto it = std::find_if(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.key == key; });
  return it == ds.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("every band holds its point estimate, for training, serving and image jobs", "[uncertainty]") {
  for (const char* file : {"scenarios/gpt2-124m-rtx4090.toml", "scenarios/llama2-7b-decode-rtx4090.toml",
                           "scenarios/llama2-13b-8xh100.toml", "scenarios/resnet50-rtx4090-vs-a100.toml",
                           "scenarios/llama3-70b-fp8-4xh100-serve.toml"}) {
    INFO(file);
    const Scenario sc = scenario::load_scenario_file(test::catalog(), std::string(GPUSIM_SOURCE_DIR) + "/" + file);
    const answer::Estimate e = banded(sc);
    REQUIRE(e.uncertainty.has_value());
    int bands = 0;
    for (std::size_t i = 0; i < answer::kBandCount; ++i) {
      const auto v = answer::report_metric(e, answer::kBandKeys[i].key);
      const auto& b = e.uncertainty->bands[i];
      CHECK(v.has_value() == b.has_value());  // a band exactly where the figure has a value
      if (v && b) {
        INFO(answer::kBandKeys[i].key);
        CHECK(b->low <= *v);
        CHECK(*v <= b->high);
        CHECK(b->low >= 0);
        ++bands;
      }
    }
    CHECK(bands >= 4);
    // The shares of the band's variance add up to 1 when anything moves the figures.
    double total = 0;
    for (const auto& c : e.uncertainty->unknowns) {
      CHECK(c.share >= 0);
      total += c.share;
    }
    CHECK(total == Approx(1.0));
  }
}

TEST_CASE("a single input's band is the evaluator at the two ends of its range", "[uncertainty]") {
  // Only the remainder uncertain: the band is exactly the step time at remainder ± its range.
  Scenario sc = test::scenario(test::kSmallTraining);
  sc.system.gpu.ranges = hardware::EfficiencyRanges{};
  sc.system.gpu.ranges.measured_on = {sc.system.gpu.id};
  const double r = sc.runtime.ranges.remainder;
  sc.runtime.ranges = workload::RuntimeRanges{};
  sc.runtime.ranges.remainder = r;
  sc.model_error = nullptr;  // the ranges alone (test_model_error.cpp adds the model's own error)
  REQUIRE(r > 0);
  const answer::Estimate e = banded(sc);
  Scenario lo = sc;
  lo.runtime.remainder = std::max(0.0, sc.runtime.remainder - r);
  Scenario hi = sc;
  hi.runtime.remainder = sc.runtime.remainder + r;
  const Band b = band(e, "step.time_s");
  CHECK(b.low == Approx(step::evaluate(lo).step.time.value()));
  CHECK(b.high == Approx(step::evaluate(hi).step.time.value()));
  REQUIRE(e.uncertainty->unknowns.size() == 1);
  CHECK(e.uncertainty->unknowns[0].unknown == Unknown::kRemainder);
  CHECK(e.uncertainty->unknowns[0].share == Approx(1.0));
}

TEST_CASE("two independent inputs add in quadrature, upward and downward apart", "[uncertainty]") {
  Scenario sc = test::scenario(test::kSmallTraining);
  const double rg = 0.07;
  const double rr = sc.runtime.ranges.remainder;
  sc.system.gpu.ranges = hardware::EfficiencyRanges{};
  sc.system.gpu.ranges.gemm = rg;
  sc.system.gpu.ranges.measured_on = {sc.system.gpu.id};
  sc.runtime.ranges = workload::RuntimeRanges{};
  sc.runtime.ranges.remainder = rr;
  sc.model_error = nullptr;
  const double y = step::evaluate(sc).step.time.value();
  auto time_with = [&](double gemm_factor, double remainder) {
    Scenario s = sc;
    s.system.gpu.efficiency.gemm *= gemm_factor;
    if (s.system.gpu.efficiency.gemm_fp8) {
      *s.system.gpu.efficiency.gemm_fp8 *= gemm_factor;
    }
    s.runtime.remainder = remainder;
    return step::evaluate(s).step.time.value();
  };
  // A faster GEMM and a smaller remainder shorten the step; the other ends lengthen it.
  const double gemm_down = y - time_with(1 + rg, sc.runtime.remainder);
  const double gemm_up = time_with(1 - rg, sc.runtime.remainder) - y;
  const double rem_down = y - time_with(1, std::max(0.0, sc.runtime.remainder - rr));
  const double rem_up = time_with(1, sc.runtime.remainder + rr) - y;
  REQUIRE(gemm_down > 0);
  REQUIRE(rem_up > 0);
  const Band b = band(banded(sc), "step.time_s");
  CHECK(b.high == Approx(y + std::hypot(gemm_up, rem_up)));
  CHECK(b.low == Approx(y - std::hypot(gemm_down, rem_down)));
}

TEST_CASE("a scenario with knobs left unset has a band at least as wide as with them set", "[uncertainty]") {
  // The same job with micro_batch = 1 and the default runtime named: the same point, fewer inputs.
  // The model's error is left out: a named runtime takes its own group of it, an unnamed one the pooled.
  Scenario unset = test::scenario(kUnset);
  unset.model_error = nullptr;
  REQUIRE(unset.unset.micro_batch);
  REQUIRE(unset.unset.runtime);
  Scenario set =
      test::scenario(std::string(kUnset) + "micro_batch = 1\n[runtime]\nname = \"" + unset.runtime.id + "\"\n");
  set.model_error = nullptr;
  REQUIRE_FALSE(set.unset.micro_batch);
  REQUIRE_FALSE(set.unset.runtime);
  const answer::Estimate a = banded(unset);
  const answer::Estimate b = banded(set);
  CHECK(a.eval.step.time.value() == Approx(b.eval.step.time.value()));
  for (const char* key : {"step.time_s", "throughput.tokens_per_s"}) {
    INFO(key);
    CHECK(band(a, key).low <= band(b, key).low + 1e-12);
    CHECK(band(a, key).high >= band(b, key).high - 1e-12);
    CHECK(width(band(a, key)) > width(band(b, key)));
  }
  CHECK(has_unknown(a, Unknown::kMicroBatch));
  CHECK(has_unknown(a, Unknown::kRuntime));
  CHECK_FALSE(has_unknown(b, Unknown::kMicroBatch));
  CHECK_FALSE(has_unknown(b, Unknown::kRuntime));
  // A larger micro-batch fits on an 80 GB A100 and runs the step faster: the band reaches down.
  const auto mb = std::find_if(a.uncertainty->unknowns.begin(), a.uncertainty->unknowns.end(),
                               [](const answer::Contribution& c) { return c.unknown == Unknown::kMicroBatch; });
  CHECK(mb->range > 1);
  CHECK(mb->range <= 64);
}

TEST_CASE("a GPU measured on its own has a narrower band than the same GPU on architecture defaults", "[uncertainty]") {
  // The same A100 under another id: no row measured it, so the spread between GPUs of one
  // architecture (ampere's between_gpus) comes on top.
  Catalog c = test::catalog();
  c.add_file(SpecKind::kGpu, "a100-unmeasured",
             SpecFile{"specs/gpus/a100-unmeasured.toml", "base = \"a100-sxm4-80gb\"\nname = \"A100, unmeasured\"\n"});
  REQUIRE(c.gpu("a100-sxm4-80gb").measured());
  REQUIRE_FALSE(c.gpu("a100-unmeasured").measured());
  REQUIRE(c.gpu("a100-unmeasured").ranges.between_gpus > 0);
  const std::string text = test::kSmallTraining;
  const Scenario measured = scenario::load_scenario(c, "m.toml", text);
  std::string other = text;
  other.replace(other.find("a100-sxm4-80gb"), std::string("a100-sxm4-80gb").size(), "a100-unmeasured");
  const Scenario defaults = scenario::load_scenario(c, "d.toml", other);
  const answer::Estimate m = banded(measured);
  const answer::Estimate d = banded(defaults);
  CHECK(m.eval.step.time.value() == Approx(d.eval.step.time.value()));
  CHECK(width(band(d, "step.time_s")) > width(band(m, "step.time_s")));
  CHECK(has_unknown(d, Unknown::kBetweenGpus));
  CHECK_FALSE(has_unknown(m, Unknown::kBetweenGpus));
}

TEST_CASE("serving bands cover the latency and throughput keys, one-sided where a range sits at 0",
          "[uncertainty][serving]") {
  const Scenario sc = test::scenario(kServing);
  REQUIRE(sc.runtime.remainder == 0);
  const answer::Estimate e = banded(sc);
  for (const char* key : {"inference.output_tokens_per_s", "inference.time_per_output_token_s", "inference.tpot_s.p50",
                          "inference.ttft_s.mean", "inference.e2e_s.p50"}) {
    INFO(key);
    const Band b = band(e, key);
    CHECK(b.high > b.low);
  }
  // The p50 keys share the headline latencies' bands.
  CHECK(band(e, "inference.tpot_s.p50").high == band(e, "inference.time_per_output_token_s").high);
  // Training keys carry no band in a serving report.
  CHECK_FALSE(answer::band_of(e, "training.gpu_hours").has_value());
  // A remainder of 0 can only grow: removing it alone moves nothing down.
  Scenario only = sc;
  only.system.gpu.ranges = hardware::EfficiencyRanges{};
  only.system.gpu.ranges.measured_on = {only.system.gpu.id};
  const double r = sc.runtime.ranges.remainder;
  only.runtime.ranges = workload::RuntimeRanges{};
  only.runtime.ranges.remainder = r;
  only.model_error = nullptr;
  const answer::Estimate one = banded(only);
  const double tpot = e.eval.inference->time_per_output_token.value();
  CHECK(band(one, "inference.time_per_output_token_s").low == Approx(tpot));
  CHECK(band(one, "inference.time_per_output_token_s").high > tpot);
}

TEST_CASE("estimates without the option carry no band, as compare, sweep and plan ask", "[uncertainty]") {
  const answer::Estimate e = answer::estimate(test::scenario(test::kSmallTraining));
  CHECK_FALSE(e.uncertainty.has_value());
  CHECK_FALSE(answer::band_of(e, "step.time_s").has_value());
  CHECK(answer::report_metric(e, "uncertainty.step.time_s.low") == std::nullopt);
  CHECK_FALSE(answer::is_report_metric("uncertainty.step.time_s.low"));  // not a measurable figure
}

TEST_CASE("the report carries the band in text, JSON and CSV", "[uncertainty][report]") {
  const answer::Estimate e = banded(test::scenario(kUnset));
  const Band b = band(e, "step.time_s");
  const std::string json = report::estimate_json(e);
  CHECK_THAT(json, Catch::Contains("\"uncertainty\": {") && Catch::Contains("\"unknowns\": [") &&
                       Catch::Contains("micro-batch not set (default 1 used") &&
                       Catch::Contains("runtime not named (default pytorch-ddp used"));
  const std::string text = report::estimate_text(e);
  CHECK_THAT(text, Catch::Contains("  unknowns    ") && Catch::Contains("(share of the band)"));
  const std::string csv = report::estimate_csv({e});
  const std::string header = csv.substr(0, csv.find('\n'));
  CHECK_THAT(header, Catch::Contains("uncertainty.step.time_s.low,uncertainty.step.time_s.high"));
  // The CSV's band ends are the estimate's.
  CHECK_THAT(csv, Catch::Contains(report::estimate_csv_row(e)));
  CHECK(b.low < e.eval.step.time.value());
}

TEST_CASE("coverage counts the rows inside their band and the median half-width over the prediction",
          "[uncertainty][validate]") {
  using validation::BandCheck;
  // Four rows: predicted 100 each; bands ±10, ±20, ±5 and ±30 (half-widths 0.10, 0.20, 0.05,
  // 0.30; median of four = (0.10 + 0.20) / 2); measured 95 (in), 125 (out), 104 (in), 70 (in:
  // the bounds are inclusive).
  const std::vector<BandCheck> rows = {
      {95, 100, {90, 110}}, {125, 100, {80, 120}}, {104, 100, {95, 105}}, {70, 100, {70, 130}}};
  const validation::Coverage c = validation::summarize_coverage("hand", rows);
  CHECK(c.group == "hand");
  CHECK(c.rows == 4);
  CHECK(c.inside == 3);
  CHECK(c.share == Approx(0.75));
  CHECK(c.median_half_width == Approx(0.15));
  const validation::Coverage none = validation::summarize_coverage("none", {});
  CHECK(none.rows == 0);
  CHECK(none.share == 0);
  CHECK(none.median_half_width == 0);
}

TEST_CASE("validate gives scenario rows the band of their report key", "[uncertainty][validate]") {
  const std::string dir = test::process_scratch("gpusim-band").string();
  const std::string scen = dir + "/small.toml";
  {
    std::ofstream f(scen);
    f << test::kSmallTraining;
  }
  const answer::Estimate point = banded(test::scenario(test::kSmallTraining));
  const Band b = band(point, "step.time_s");
  // One row inside the band (the point itself), one far outside it.
  const std::string rows = dir + "/rows.toml";
  {
    std::ofstream f(rows);
    f << "[[measurement]]\nid = \"IN\"\nrole = \"check\"\ngpu = \"a100-sxm4-80gb\"\ngpus = 8\nbenchmark = "
         "\"scenario\"\nscenario = \"small.toml\"\nmetric = \"step.time_s\"\nvalue = "
      << point.eval.step.time.value() << "\nsource = \"test\"\nconditions = \"test\"\n\n"
      << "[[measurement]]\nid = \"OUT\"\nrole = \"check\"\ngpu = \"a100-sxm4-80gb\"\ngpus = 8\nbenchmark = "
         "\"scenario\"\nscenario = \"small.toml\"\nmetric = \"step.time_s\"\nvalue = "
      << 3 * b.high << "\nsource = \"test\"\nconditions = \"test\"\n";
  }
  const auto ms = validation::load_measurements(test::catalog(), {rows});
  const auto subjects = validation::resolve(ms, test::catalog());
  const validation::ValidationReport r = validation::validate(subjects, true);
  CHECK(validation::validate(subjects).coverage.rows == 0);  // bands only when asked
  REQUIRE(r.rows.size() == 2);
  REQUIRE(r.rows[0].prediction.band.has_value());
  CHECK(r.rows[0].prediction.band->low == Approx(b.low));
  CHECK(r.rows[0].inside_band() == std::optional<bool>(true));
  CHECK(r.rows[1].inside_band() == std::optional<bool>(false));
  CHECK(r.coverage.rows == 2);
  CHECK(r.coverage.inside == 1);
  REQUIRE(r.coverage_by_category.size() == 1);
  CHECK(r.coverage_by_category[0].group == "end-to-end");
  const std::string text = report::validation_text(r);
  CHECK_THAT(text, Catch::Contains("band coverage (measured within low-high") &&
                       Catch::Contains("in-sample: the bands' model-error quantiles") &&
                       Catch::Contains("check rows with a band:"));
  CHECK(r.band_basis == validation::BandBasis::kInSample);
  CHECK(r.check_coverage.rows == 2);
  CHECK_THAT(report::validation_json(r), Catch::Contains("\"coverage_by_category\"") &&
                                             Catch::Contains("\"median_half_width\"") &&
                                             Catch::Contains("\"band_low\""));
  CHECK_THAT(report::validation_json(r),
             Catch::Contains("\"band_basis\": \"in-sample\"") && Catch::Contains("\"coverage_check_by_category\""));
  const std::string csv = report::validation_csv(r);
  CHECK_THAT(csv, Catch::StartsWith("id,role,gpu,benchmark,category,scored,measured,"
                                    "predicted,error,band_low,band_high,publication,in_band,band_half_width\n"));
  // The rows' own columns: inside or not, and the half-width over the prediction.
  const double half = 0.5 * (b.high - b.low) / point.eval.step.time.value();
  CHECK_THAT(
      csv, Catch::Contains(base::strfmt(",true,%.4f\n", half)) && Catch::Contains(base::strfmt(",false,%.4f\n", half)));
}

TEST_CASE("bad [uncertainty] tables are errors naming the key, the value and the accepted range",
          "[uncertainty][spec][errors]") {
  auto gpu_problems = [](const std::string& extra) {
    Catalog c = test::catalog();
    c.add_file(SpecKind::kGpu, "ranged",
               SpecFile{"specs/gpus/ranged.toml", "base = \"a100-sxm4-80gb\"\nname = \"r\"\n" + extra});
    return diagnostics_of([&] { (void)c.gpu("ranged"); });
  };
  auto ds = gpu_problems("[uncertainty]\ngemm = 1.2\n");
  const Diagnostic* d = find_key(ds, "uncertainty.gemm");
  REQUIRE(d != nullptr);
  CHECK(d->pos.file == "specs/gpus/ranged.toml");
  CHECK(d->pos.line == 4);
  CHECK_THAT(d->message, Catch::Contains("at least 0 and below 1") && Catch::Contains("1.2"));
  ds = gpu_problems("[uncertainty]\ndram = -0.1\n");
  REQUIRE(find_key(ds, "uncertainty.dram") != nullptr);
  ds = gpu_problems("[uncertainty]\nassumed = [\"gemm\", \"speed\"]\n");
  d = find_key(ds, "uncertainty.assumed");
  REQUIRE(d != nullptr);
  CHECK_THAT(d->message, Catch::Contains("\"speed\"") && Catch::Contains("known: gemm"));

  auto runtime_problems = [](const std::string& text) {
    Catalog c = test::catalog();
    c.add_file(SpecKind::kRuntime, "mine", SpecFile{"specs/runtimes/mine.toml", text});
    return diagnostics_of([&] { (void)c.runtime("mine"); });
  };
  const std::string base = "base = \"pytorch-ddp\"\nname = \"mine\"\n";
  ds = runtime_problems(base + "[uncertainty]\nstep_overhead = \"1 ms\"\n");
  d = find_key(ds, "uncertainty.step_overhead");
  REQUIRE(d != nullptr);
  CHECK_THAT(d->message, Catch::Contains("this runtime trains"));
  ds = runtime_problems(base + "[uncertainty]\noverlap = 1.5\n");
  REQUIRE(find_key(ds, "uncertainty.overlap") != nullptr);
  // A runtime without a base must state its ranges.
  std::string whole(test::catalog().file(SpecKind::kRuntime, "llm.c").text);
  whole = whole.substr(0, whole.find("\n[uncertainty]")) + whole.substr(whole.find("\n[meta]"));
  ds = runtime_problems(whole);
  d = find_key(ds, "uncertainty");
  REQUIRE(d != nullptr);
  CHECK(d->message == "missing required key");
}

TEST_CASE("every built-in architecture and runtime states its ranges, each below its value", "[uncertainty][spec]") {
  const Catalog& c = test::catalog();
  for (const auto& id : c.ids(SpecKind::kGpu)) {
    INFO(id);
    const hardware::EfficiencyRanges& r = c.gpu(id).ranges;
    for (const double v :
         {r.gemm, r.attention, r.dram, r.gemv_inflight, r.peer_link, r.kernel_overhead, r.launch, r.between_gpus}) {
      CHECK(v > 0);
      CHECK(v < 1);
    }
  }
  for (const auto& id : c.ids(SpecKind::kRuntime)) {
    INFO(id);
    const workload::Runtime rt = c.runtime(id);
    CHECK(rt.ranges.remainder > 0);
  }
  // The runtimes a scenario gets when it names none state how far another stack may be.
  for (const char* text : {kUnset,
                           "name = \"s\"\n[system]\ngpu = \"h100-sxm5-80gb\"\ngpus = 1\n[model]\npreset = "
                           "\"llama2-7b\"\n[inference]\nbatch = 1\n"}) {
    const Scenario sc = test::scenario(text);
    INFO(sc.runtime.id);
    CHECK(sc.unset.runtime);
    CHECK(sc.runtime.ranges.unnamed > 0);
  }
}
