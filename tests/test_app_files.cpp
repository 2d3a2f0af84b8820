// The application layer's commands that read files (include/gpusim/app.hpp): validate, calibrate,
// model import and init; their checks, and the field a refusal names.
#include "cli_helpers.hpp"

using namespace gpusim;

namespace {

std::string refused_field(const app::ValidateRequest& r) {
  try {
    app::check(r);
  } catch (const app::RequestError& e) {
    return e.option();
  }
  return "(none)";
}

app::ValidateRequest one_file() {
  app::ValidateRequest r;
  r.inputs = {test::source("measurements/clpeak-issues.toml")};  // one fit row
  return r;
}

}  // namespace

TEST_CASE("a validate request it cannot take is refused naming the field at fault", "[app][validate][errors]") {
  CHECK(refused_field(one_file()) == "(none)");
  app::ValidateRequest none;
  CHECK(refused_field(none) == "inputs");
  app::ValidateRequest role = one_file();
  role.role = "checks";
  CHECK(refused_field(role) == "role");
  app::ValidateRequest negative = one_file();
  negative.fail_above = -1;
  CHECK(refused_field(negative) == "fail_above");
  app::ValidateRequest nan = one_file();
  nan.fail_above = std::nan("");
  CHECK(refused_field(nan) == "fail_above");
  // The bounds of a cross-validated run need one.
  app::ValidateRequest bias = one_file();
  bias.fail_bias = 5;
  CHECK(refused_field(bias) == "fail_bias");
  bias.cross_validate = true;
  CHECK(refused_field(bias) == "(none)");
  app::ValidateRequest kind = one_file();
  kind.cross_validate = true;
  kind.fail_above_kind = {{"training", 10}, {"inference", 10}};  // not a kind of row
  CHECK(refused_field(kind) == "fail_above_kind");
  kind.fail_above_kind = {{"serving", -2}};
  CHECK(refused_field(kind) == "fail_above_kind");
  kind.fail_above_kind = {{"serving", 20}};
  kind.cross_validate = false;
  CHECK(refused_field(kind) == "fail_above_kind");
}

TEST_CASE("validate selects the rows of the role asked, and refuses a role no row has", "[app][validate]") {
  app::ValidateRequest r = one_file();
  const app::ValidateAnswer all = app::validate(test::catalog(), r);
  REQUIRE(all.report);
  CHECK_FALSE(all.cross);
  CHECK(all.report->rows.size() == 1);
  CHECK(all.report->rows.front().measurement->id == "A12");
  r.role = "check";  // the file's one row is a fit row
  CHECK_THROWS_AS(app::validate(test::catalog(), r), InputError);
  CHECK_THROWS_WITH(app::validate(test::catalog(), r), Catch::Contains("no check rows"));
}

TEST_CASE("a validate bound is breached when the median |error| exceeds it, and held at or above it",
          "[app][validate]") {
  app::ValidateRequest r = one_file();
  const app::ValidateAnswer base = app::validate(test::catalog(), r);
  REQUIRE(base.report->all.count == 1);
  const double median_percent = 100.0 * base.report->all.median;
  r.fail_above = median_percent * 1.001 + 1e-9;  // just above the error: held
  CHECK(app::validate(test::catalog(), r).breaches.empty());
  r.fail_above = median_percent * 0.999;  // just below: breached, with the figures behind it
  const app::ValidateAnswer over = app::validate(test::catalog(), r);
  REQUIRE(over.breaches.size() == 1);
  const validation::ThresholdBreach& b = over.breaches.front();
  CHECK(b.what == validation::ThresholdBreach::What::kMedian);
  CHECK_FALSE(b.cross_validated);
  CHECK(b.count == 1);
  CHECK(b.value == Approx(base.report->all.median));
  CHECK(b.bound == Approx(median_percent * 0.999));
  CHECK_THAT(report::threshold_breach_text(b), Catch::StartsWith("median |error|") && Catch::Contains("of 1 scored"));
}

TEST_CASE("calibrate refuses a request without measurements and fits nothing from a file of check rows alone",
          "[app][calibrate]") {
  CHECK_THROWS_AS(app::calibrate(test::catalog(), {}), app::RequestError);
  // A file with no fit row gives no parameter, so no overlay file, and the same errors after.
  std::string text = test::read_text(test::source("measurements/clpeak-issues.toml"));
  text.replace(text.find("role = \"fit\""), 12, "role = \"check\"");
  const std::string check_only = test::write_temp("check-only.toml", text);
  const app::CalibrateAnswer a = app::calibrate(test::catalog(), {{check_only}});
  CHECK(a.fit.params.empty());
  CHECK(a.files.empty());
  REQUIRE(a.before.all.count == a.after.all.count);
  CHECK(a.before.all.median == a.after.all.median);
}

TEST_CASE("model import gives the spec text that loads back as the config's shape", "[app][model]") {
  const app::ModelImportAnswer a =
      app::import_model(test::catalog(), {test::source("tests/data/hf/Meta-Llama-3-8B.json"), ""});
  CHECK(a.imported.shape.layers == 32);   // num_hidden_layers of the config
  CHECK(a.imported.shape.kv_heads == 8);  // num_key_value_heads
  catalog::Catalog c = test::catalog();
  c.add_file(catalog::SpecKind::kModel, "imported", catalog::SpecFile{"imported.toml", a.text});
  const workload::ModelShape back = c.model("imported");
  CHECK(back.layers == a.imported.shape.layers);
  CHECK(back.hidden == a.imported.shape.hidden);
  CHECK(back.ffn_hidden == a.imported.shape.ffn_hidden);
  CHECK(back.vocab == a.imported.shape.vocab);
  // A config whose spec no reader accepts is refused, naming its fields.
  CHECK_THROWS_AS(
      app::import_model(test::catalog(), {test::source("tests/data/hf/deepseek-v3-all-dense-layers.json"), ""}),
      InputError);
}

TEST_CASE("init gives the template of the kind asked, which loads as a scenario, and refuses any other kind",
          "[app][init][errors]") {
  for (const char* kind : {"training", "serving"}) {
    INFO(kind);
    const std::string text = app::init(kind);
    const scenario::Scenario s = test::scenario(text);
    CHECK(s.job.training.has_value() == (std::string(kind) == "training"));
    CHECK(s.job.inference.has_value() == (std::string(kind) == "serving"));
  }
  CHECK_THROWS_AS(app::init("inference"), app::RequestError);
  std::string field = "(none)";
  try {
    (void)app::init("");
  } catch (const app::RequestError& e) {
    field = e.option();
  }
  CHECK(field == "kind");
}
