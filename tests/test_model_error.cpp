// The model's own error in the band: quantiles of held-out residuals per kind of job, metric family
// and runtime (src/validation/model_error.cpp), the deviations they allow (src/answer/model_error.cpp),
// the file that holds them (specs/uncertainty/model-error.toml, src/parse/model_error.cpp), and the
// coverage of bands built without each row's publication (jackknife+, src/validation/cross_validate.cpp).
#include <algorithm>
#include <cmath>
#include <fstream>

#include "helpers.hpp"

using namespace gpusim;
using answer::Band;
using catalog::SpecFile;
using catalog::SpecKind;
using gpusim::test::band;
using gpusim::test::banded;
using validation::Residual;
using workload::JobKind;
using workload::MetricFamily;
using workload::ModelErrorGroup;

namespace {

std::shared_ptr<const workload::ModelError> one_group(JobKind job, MetricFamily metric, double low, double high,
                                                      const std::string& runtime = "") {
  auto me = std::make_shared<workload::ModelError>();
  me->coverage = 0.8;
  me->min_runtime_rows = 15;
  me->groups.push_back(ModelErrorGroup{job, metric, runtime, 40, low, high});
  return me;
}

const Diagnostic* find_key(const std::vector<Diagnostic>& ds, const std::string& key) {
  auto it = std::find_if(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.key == key; });
  return it == ds.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("the central quantiles are the conformal ranks floor((1-c)/2 (n+1)) and ceil((1+c)/2 (n+1))",
          "[model-error]") {
  // 20 values, unsorted and signed: ranks floor(0.1 x 21) = 2 and ceil(0.9 x 21) = 19 of the sorted
  // list -9, -8, ..., 10.
  std::vector<double> v;
  for (int i = 10; i >= -9; --i) {
    v.push_back(i);
  }
  auto q = validation::central_quantiles(v, 0.8);
  REQUIRE(q.has_value());
  CHECK(q->first == -8);
  CHECK(q->second == 9);
  // Nine values at 80 %: ranks 1 and 9, the extremes; eight are too few for the upper rank.
  q = validation::central_quantiles({0.3, -0.1, 0.2, 0.0, 0.1, -0.2, 0.4, -0.3, 0.05}, 0.8);
  REQUIRE(q.has_value());
  CHECK(q->first == -0.3);
  CHECK(q->second == 0.4);
  CHECK_FALSE(validation::central_quantiles({0.3, -0.1, 0.2, 0.0, 0.1, -0.2, 0.4, -0.3}, 0.8).has_value());
  CHECK_FALSE(validation::central_quantiles({}, 0.8).has_value());
  // 50 % of 99 values 1..99: ranks floor(0.25 x 100) = 25 and ceil(0.75 x 100) = 75.
  std::vector<double> w;
  for (int i = 1; i <= 99; ++i) {
    w.push_back(i);
  }
  q = validation::central_quantiles(w, 0.5);
  REQUIRE(q.has_value());
  CHECK(q->first == 25);
  CHECK(q->second == 75);
}

TEST_CASE("model-error groups pool every runtime, and give a runtime its own only with enough rows", "[model-error]") {
  std::vector<Residual> rs;
  // 16 pytorch-ddp training rows at -0.15 .. +0.60, 5 llm.c rows at +1, 10 serving throughput rows
  // of vllm at -0.45 .. 0, and 3 serving latency rows (too few for any quantile at 80 %).
  for (int i = 0; i < 16; ++i) {
    rs.push_back({JobKind::kTraining, MetricFamily::kThroughput, "pytorch-ddp", -0.15 + 0.05 * i});
  }
  for (int i = 0; i < 5; ++i) {
    rs.push_back({JobKind::kTraining, MetricFamily::kThroughput, "llm.c", 1.0});
  }
  for (int i = 0; i < 10; ++i) {
    rs.push_back({JobKind::kServing, MetricFamily::kThroughput, "vllm", -0.05 * i});
  }
  for (int i = 0; i < 3; ++i) {
    rs.push_back({JobKind::kServing, MetricFamily::kLatency, "", 0.1 * i});
  }
  const workload::ModelError me = validation::model_error_of(rs, 0.8, 15);
  CHECK(me.coverage == 0.8);
  CHECK(me.min_runtime_rows == 15);
  REQUIRE(me.groups.size() == 3);
  // Pooled training: 21 rows, ranks floor(2.2) = 2 and ceil(19.8) = 20 of -0.15, -0.10, ..., 0.60,
  // then five 1.0: -0.10 and 1.0.
  const ModelErrorGroup* pooled = me.find(JobKind::kTraining, MetricFamily::kThroughput, "");
  REQUIRE(pooled != nullptr);
  CHECK(pooled->runtime.empty());
  CHECK(pooled->rows == 21);
  CHECK(pooled->low == Approx(-0.10));
  CHECK(pooled->high == Approx(1.0));
  // pytorch-ddp's own 16 rows: ranks floor(1.7) = 1 and ceil(15.3) = 16, its extremes.
  const ModelErrorGroup* ddp = me.find(JobKind::kTraining, MetricFamily::kThroughput, "pytorch-ddp");
  REQUIRE(ddp != nullptr);
  CHECK(ddp->runtime == "pytorch-ddp");
  CHECK(ddp->rows == 16);
  CHECK(ddp->low == Approx(-0.15));
  CHECK(ddp->high == Approx(0.60));
  // llm.c has 5 rows: it takes the pooled group; so does a job that names no runtime.
  CHECK(me.find(JobKind::kTraining, MetricFamily::kThroughput, "llm.c") == pooled);
  // vllm's 10 serving rows make the pooled serving throughput group only (10 < 15).
  const ModelErrorGroup* serving = me.find(JobKind::kServing, MetricFamily::kThroughput, "vllm");
  REQUIRE(serving != nullptr);
  CHECK(serving->runtime.empty());
  CHECK(serving->low == Approx(-0.45));
  CHECK(serving->high == Approx(0.0));
  CHECK(me.find(JobKind::kServing, MetricFamily::kLatency, "") == nullptr);
}

TEST_CASE("a row's residual is ln(predicted / measured) in its family's orientation", "[model-error]") {
  validation::Measurement m;
  m.id = "R";
  m.benchmark = validation::Benchmark::kScenario;
  m.value = 1.0;
  validation::RowResult r{&m,
                          validation::Prediction{2.0, {}, std::nullopt},
                          validation::RowKind::kTraining,
                          std::nullopt,
                          "pytorch-ddp",
                          true,
                          {}};
  // A training step time predicted twice the measured one: the rate is half, r = -ln 2.
  m.metric = "step.time_s";
  auto res = validation::residual_of(r);
  REQUIRE(res.has_value());
  CHECK(res->job == JobKind::kTraining);
  CHECK(res->metric == MetricFamily::kThroughput);
  CHECK(res->runtime == "pytorch-ddp");
  CHECK(res->log_ratio == Approx(-std::log(2.0)));
  m.metric = "throughput.tokens_per_s";
  CHECK(validation::residual_of(r)->log_ratio == Approx(std::log(2.0)));
  // A serving latency keeps its own orientation in the latency family (p50 keys share the bands').
  r.kind = validation::RowKind::kServing;
  m.metric = "inference.ttft_s.p50";
  res = validation::residual_of(r);
  REQUIRE(res.has_value());
  CHECK(res->metric == MetricFamily::kLatency);
  CHECK(res->log_ratio == Approx(std::log(2.0)));
  // A scenario that names no runtime counts with every runtime only.
  r.runtime_named = false;
  CHECK(validation::residual_of(r)->runtime.empty());
  // No band, no residual: memory, a row not held out, a prediction at 0.
  m.metric = "memory.per_gpu_bytes";
  CHECK_FALSE(validation::residual_of(r).has_value());
  m.metric = "inference.ttft_s.p50";
  r.not_held_out = "gpus/x efficiency.gemm";
  CHECK_FALSE(validation::residual_of(r).has_value());
  r.not_held_out.clear();
  r.prediction.value = 0.0;
  CHECK_FALSE(validation::residual_of(r).has_value());
}

TEST_CASE("a model-error group allows y e^-high to y e^-low, one-sided where the model errs one way", "[model-error]") {
  const ModelErrorGroup g{JobKind::kServing, MetricFamily::kThroughput, "", 40, -0.2, 0.1};
  const answer::Deviation d = answer::model_error_deviation(100, g, false);
  CHECK(d.up == Approx(100 * (std::exp(0.2) - 1)));
  CHECK(d.down == Approx(100 * (1 - std::exp(-0.1))));
  // A training time takes its throughput family's quantiles with the sign turned: (-0.1, 0.2).
  const answer::Deviation f = answer::model_error_deviation(100, g, true);
  CHECK(f.up == Approx(100 * (std::exp(0.1) - 1)));
  CHECK(f.down == Approx(100 * (1 - std::exp(-0.2))));
  // A model that predicted high on nearly every row (low > 0) allows no rise.
  const ModelErrorGroup high{JobKind::kServing, MetricFamily::kThroughput, "", 40, 0.15, 0.5};
  CHECK(answer::model_error_deviation(100, high, false).up == 0);
  CHECK(answer::model_error_deviation(100, high, false).down == Approx(100 * (1 - std::exp(-0.5))));
  // Widening adds in quadrature per side; a low end at 0 stays at 0.
  const Band w = answer::widen(Band{90, 105}, 100, answer::Deviation{20, 5});
  CHECK(w.high == Approx(100 + std::hypot(5.0, 20.0)));
  CHECK(w.low == Approx(100 - std::hypot(10.0, 5.0)));
  CHECK(answer::widen(Band{0, 150}, 100, answer::Deviation{0, 30}).low == 0);
  // Serving times take the latency family; training times the throughput family, flipped.
  CHECK(answer::error_family(JobKind::kServing, true).metric == MetricFamily::kLatency);
  CHECK_FALSE(answer::error_family(JobKind::kServing, true).flip);
  CHECK(answer::error_family(JobKind::kTraining, true).metric == MetricFamily::kThroughput);
  CHECK(answer::error_family(JobKind::kTraining, true).flip);
  CHECK_FALSE(answer::error_family(JobKind::kTraining, false).flip);
}

TEST_CASE("the band adds the model error to the ranges in quadrature, the runtime's own group first",
          "[model-error][uncertainty]") {
  // Only the remainder uncertain, and one pooled training group: the band's high end of the step
  // time is y + hypot(the remainder's rise, the group's rise of a time: y (e^high - 1)).
  Scenario sc = test::scenario(test::kSmallTraining);
  sc.system.gpu.ranges = hardware::EfficiencyRanges{};
  sc.system.gpu.ranges.measured_on = {sc.system.gpu.id};
  const double r = sc.runtime.ranges.remainder;
  sc.runtime.ranges = workload::RuntimeRanges{};
  sc.runtime.ranges.remainder = r;
  sc.model_error = nullptr;
  const Band ranges = band(banded(sc), "step.time_s");
  const double y = step::evaluate(sc).step.time.value();
  sc.model_error = one_group(JobKind::kTraining, MetricFamily::kThroughput, -0.1, 0.2);
  const answer::Estimate e = banded(sc);
  const Band both = band(e, "step.time_s");
  CHECK(both.high == Approx(y + std::hypot(ranges.high - y, y * (std::exp(0.2) - 1))));
  CHECK(both.low == Approx(y - std::hypot(y - ranges.low, y * (1 - std::exp(-0.1)))));
  // The throughput (a rate) takes the quantiles as they are: up y (e^0.1 - 1).
  const double tps = e.eval.tokens_per_s;
  CHECK(band(e, "throughput.tokens_per_s").high >= tps * std::exp(0.1) - 1e-9 * tps);
  // It is an unknown of the band, with its group and a share of the step time's variance.
  const auto& u = e.uncertainty->unknowns;
  const auto it = std::find_if(u.begin(), u.end(),
                               [](const answer::Contribution& c) { return c.unknown == answer::Unknown::kModelError; });
  REQUIRE(it != u.end());
  REQUIRE(it->error.has_value());
  CHECK(it->error->low == -0.1);
  CHECK(it->share > 0.5);
  double total = 0;
  for (const auto& c : u) {
    total += c.share;
  }
  CHECK(total == Approx(1.0));
  CHECK_THAT(report::estimate_text(e), Catch::Contains("model error on publications it was not fitted to"));
  // A scenario that names a runtime with a group of its own takes that group.
  Scenario named = test::scenario(std::string(test::kSmallTraining) + "[runtime]\nname = \"pytorch-ddp\"\n");
  auto me =
      std::make_shared<workload::ModelError>(*one_group(JobKind::kTraining, MetricFamily::kThroughput, -0.1, 0.2));
  me->groups.push_back(ModelErrorGroup{JobKind::kTraining, MetricFamily::kThroughput, "pytorch-ddp", 20, -0.5, 0.5});
  named.model_error = me;
  const answer::Estimate en = banded(named);
  const auto ct = std::find_if(en.uncertainty->unknowns.begin(), en.uncertainty->unknowns.end(),
                               [](const answer::Contribution& c) { return c.unknown == answer::Unknown::kModelError; });
  REQUIRE(ct != en.uncertainty->unknowns.end());
  CHECK(ct->error->runtime == "pytorch-ddp");
  // Without any group the band is the ranges' alone.
  sc.model_error = std::make_shared<workload::ModelError>();
  CHECK(band(banded(sc), "step.time_s").high == Approx(ranges.high));
}

TEST_CASE("a model that errs one way keeps the point estimate inside its band", "[model-error][uncertainty]") {
  // Serving throughput predicted 15-40 % high on every row: the band reaches down only.
  Scenario sc = test::scenario(R"(name = "serve"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
preset = "llama2-7b"
[inference]
batch = 8
[runtime]
name = "vllm"
)");
  sc.model_error = one_group(JobKind::kServing, MetricFamily::kThroughput, 0.15, 0.4);
  const answer::Estimate e = banded(sc);
  for (std::size_t i = 0; i < answer::kBandCount; ++i) {
    const auto v = answer::report_metric(e, answer::kBandKeys[i].key);
    const auto& b = e.uncertainty->bands[i];
    if (v && b) {
      INFO(answer::kBandKeys[i].key);
      CHECK(b->low <= *v);
      CHECK(*v <= b->high);
    }
  }
  const double y = e.eval.inference->output_tokens_per_s;
  CHECK(band(e, "inference.output_tokens_per_s").low <= y * std::exp(-0.4) + 1e-9 * y);
}

TEST_CASE("leave-one-publication-out bands judge each row by the other publications' errors (jackknife+)",
          "[model-error][cross-validate]") {
  // Ten publications, one row each, on a scenario no spec value cites: every held-out prediction
  // is the shipped one, y, and row i is measured at y e^-r_i, so its residual is r_i. Held out,
  // row i's band takes the quantiles of the nine others: at 80 % ranks 1 and 9, their extremes.
  // The rows at -1 and +1 lie beyond the others' extremes (-0.2 and 0.15 ... and the far one), so
  // exactly eight of ten are inside; judged in-sample (all ten residuals: ranks 1 and 10) all ten are.
  const std::string dir = test::process_scratch("gpusim-model-error").string();
  const std::string scen = dir + "/small.toml";
  {
    std::ofstream f(scen);
    f << test::kSmallTraining;
  }
  const double y = step::evaluate(test::scenario(test::kSmallTraining)).tokens_per_s;
  const std::vector<double> r = {-1.0, -0.2, -0.15, -0.1, -0.05, 0.0, 0.05, 0.1, 0.15, 1.0};
  std::vector<validation::Measurement> rows;
  for (std::size_t i = 0; i < r.size(); ++i) {
    validation::Measurement m;
    m.id = "JK" + std::to_string(i);
    m.file = dir + "/rows.toml";
    m.publication = "publication-" + std::to_string(i);
    m.role = validation::Role::kCheck;
    m.gpu = "a100-sxm4-80gb";
    m.gpus = 8;
    m.benchmark = validation::Benchmark::kScenario;
    m.scenario = scen;
    m.metric = "throughput.tokens_per_s";
    m.value = y * std::exp(-r[i]);
    rows.push_back(m);
  }
  const validation::CrossValidation cv = validation::cross_validate(rows, test::catalog());
  const validation::ValidationReport& h = cv.held_out;
  CHECK(h.band_basis == validation::BandBasis::kHeldOut);
  REQUIRE(h.rows.size() == r.size());
  for (std::size_t i = 0; i < r.size(); ++i) {
    INFO(rows[i].id << " r = " << r[i]);
    REQUIRE(h.rows[i].prediction.value.has_value());
    CHECK(*h.rows[i].prediction.value == Approx(y));
    REQUIRE(h.rows[i].inside_band().has_value());
    CHECK(*h.rows[i].inside_band() == (i != 0 && i + 1 != r.size()));
  }
  CHECK(h.coverage.rows == 10);
  CHECK(h.coverage.inside == 8);
  CHECK(h.coverage.share == Approx(0.8));
  CHECK(h.check_coverage.inside == 8);
  REQUIRE(h.coverage_by_category.size() == 1);
  CHECK(h.coverage_by_category[0].group == "end-to-end");
  // The groups of all ten residuals: ranks 1 and 10 at 80 %, the extremes.
  REQUIRE(cv.model_error.groups.size() == 1);
  CHECK(cv.model_error.groups[0].rows == 10);
  CHECK(cv.model_error.groups[0].low == Approx(-1.0));
  CHECK(cv.model_error.groups[0].high == Approx(1.0));
  // The reports say what the bands were built from, and carry both coverages.
  CHECK_THAT(report::cross_validation_text(cv), Catch::Contains("held out: each band is the spec ranges") &&
                                                    Catch::Contains("every row with a band") &&
                                                    Catch::Contains("check rows with a band") &&
                                                    Catch::Contains("model error on publications it was not"));
  const std::string json = report::cross_validation_json(cv);
  CHECK_THAT(json, Catch::Contains("\"band_basis\": \"held-out\"") && Catch::Contains("\"coverage_check\"") &&
                       Catch::Contains("\"model_error\": {") && Catch::Contains("\"min_runtime_rows\": 15"));
  const std::string csv = report::cross_validation_csv(cv);
  CHECK_THAT(csv, Catch::StartsWith("id,role,gpu,benchmark,category,scored,measured,predicted,error,band_low,"
                                    "band_high,publication,in_band,band_half_width,shipped_predicted"));
  CHECK_THAT(csv, Catch::Contains(",publication-0,false,") && Catch::Contains(",publication-5,true,"));
}

TEST_CASE("a bad model-error file is bad input naming the key, the value and the accepted range",
          "[model-error][spec][errors]") {
  auto problems = [](const std::string& text) {
    Catalog c = test::catalog();
    c.add_file(SpecKind::kUncertainty, catalog::kModelErrorId, SpecFile{"specs/uncertainty/model-error.toml", text});
    return test::diagnostics_of([&] { (void)c.model_error(); });
  };
  const std::string method = "[method]\ncoverage = 0.8\nmin_runtime_rows = 15\n";
  const std::string group = "\n[[group]]\njob = \"training\"\nmetric = \"throughput\"\nrows = 30\n";
  CHECK(problems(method + group + "low = -0.1\nhigh = 0.2\n").empty());
  auto ds = problems("[method]\ncoverage = 1.2\nmin_runtime_rows = 15\n");
  const Diagnostic* d = find_key(ds, "method.coverage");
  REQUIRE(d != nullptr);
  CHECK(d->pos.file == "specs/uncertainty/model-error.toml");
  CHECK(d->pos.line == 2);
  CHECK_THAT(d->message, Catch::Contains("1.2"));
  ds = problems("[method]\ncoverage = 0.8\n");
  REQUIRE(find_key(ds, "method.min_runtime_rows") != nullptr);
  ds = problems(method + group + "low = 0.3\nhigh = 0.2\n");
  d = find_key(ds, "group[0].high");
  REQUIRE(d != nullptr);
  CHECK_THAT(d->message, Catch::Contains("at least the lower one") && Catch::Contains("0.2"));
  ds = problems(method + group + "low = -0.1\nhigh = 50\n");
  REQUIRE(find_key(ds, "group[0].high") != nullptr);
  ds = problems(method + "\n[[group]]\njob = \"training\"\nmetric = \"latency\"\nrows = 30\nlow = 0\nhigh = 1\n");
  d = find_key(ds, "group[0].metric");
  REQUIRE(d != nullptr);
  CHECK_THAT(d->message, Catch::Contains("\"throughput\""));
  ds = problems(method + group + "runtime = \"no-such-stack\"\nlow = 0\nhigh = 1\n");
  d = find_key(ds, "group[0].runtime");
  REQUIRE(d != nullptr);
  CHECK_THAT(d->message, Catch::Contains("no-such-stack") && Catch::Contains("known:"));
  ds = problems(method +
                "\n[[group]]\njob = \"training\"\nmetric = \"throughput\"\nruntime = \"llm.c\"\nrows = "
                "5\nlow = 0\nhigh = 1\n");
  d = find_key(ds, "group[0].rows");
  REQUIRE(d != nullptr);
  CHECK_THAT(d->message, Catch::Contains("min_runtime_rows = 15") && Catch::Contains("5"));
  ds = problems(method + group + "low = 0\nhigh = 1\n" + group + "low = 0\nhigh = 1\n");
  d = find_key(ds, "group[1].runtime");
  REQUIRE(d != nullptr);
  CHECK_THAT(d->message, Catch::Contains("a second group for training throughput on every runtime"));
  ds = problems(method + group + "low = 0\nhigh = 1\nspread = 2\n");
  REQUIRE(find_key(ds, "group[0].spread") != nullptr);
  // A scenario loaded from such a catalog is bad input too, not a band without its model error.
  Catalog c = test::catalog();
  c.add_file(SpecKind::kUncertainty, catalog::kModelErrorId,
             SpecFile{"specs/uncertainty/model-error.toml", "[method]\ncoverage = 2\nmin_runtime_rows = 1\n"});
  CHECK_FALSE(test::diagnostics_of([&] { (void)scenario::load_scenario(c, "s.toml", test::kSmallTraining); }).empty());
  // uncertainty/ holds model-error.toml only.
  c = test::catalog();
  c.add_file(SpecKind::kUncertainty, "other", SpecFile{"specs/uncertainty/other.toml", "[method]\n"});
  CHECK_FALSE(c.check_all().empty());
}

TEST_CASE("the shipped model-error file loads, and every estimate picks its groups", "[model-error][spec]") {
  const auto me = test::catalog().model_error();
  REQUIRE(me != nullptr);
  CHECK(me->coverage == Approx(0.8));
  CHECK(me->min_runtime_rows >= 1);
  // Pooled groups for training throughput and both serving families.
  CHECK(me->find(JobKind::kTraining, MetricFamily::kThroughput, "") != nullptr);
  CHECK(me->find(JobKind::kServing, MetricFamily::kThroughput, "") != nullptr);
  CHECK(me->find(JobKind::kServing, MetricFamily::kLatency, "") != nullptr);
  for (const ModelErrorGroup& g : me->groups) {
    INFO(base::name_in(workload::kJobKindNames, g.job) << " " << g.runtime);
    CHECK(g.low <= g.high);
    CHECK((g.runtime.empty() || g.rows >= me->min_runtime_rows));
  }
  const Scenario sc = test::scenario(test::kSmallTraining);
  REQUIRE(sc.model_error != nullptr);
  CHECK(sc.model_error->groups.size() == me->groups.size());
}

TEST_CASE("a band's serving runs skip the capacity run, whose figures no band varies", "[model-error][serving]") {
  const Scenario sc = scenario::load_scenario_file(
      test::catalog(), std::string(GPUSIM_SOURCE_DIR) + "/scenarios/llama3-70b-fp8-4xh100-serve.toml");
  step::Options without;
  without.capacity = false;
  const step::Evaluation a = step::evaluate(sc);
  const step::Evaluation b = step::evaluate(sc, without);
  REQUIRE(a.inference.has_value());
  CHECK(a.inference->saturation_requests_per_s > 0);
  CHECK(b.inference->saturation_requests_per_s == 0);
  CHECK(b.inference->output_tokens_per_s == a.inference->output_tokens_per_s);
  CHECK(b.inference->ttft.p50.value() == a.inference->ttft.p50.value());
  CHECK(b.inference->e2e.mean.value() == a.inference->e2e.mean.value());
}
