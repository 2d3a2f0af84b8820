// The application layer's requests (include/gpusim/app.hpp): the checks and defaults every front end
// shares, and the field a refusal names.
#include "cli_helpers.hpp"

using namespace gpusim;

namespace {

// The field a request refused by `take` names, or "(none)" when it is not refused.
template <class Take>
std::string field_refused_by(Take&& take) {
  try {
    take();
  } catch (const app::RequestError& e) {
    return e.option();
  }
  return "(none)";
}

std::string refused_field(const app::RooflineRequest& r) {
  return field_refused_by([&] { (void)app::roofline(test::catalog(), r); });
}

}  // namespace

TEST_CASE("a roofline highlights bf16 by default and fp16 on a GPU without bf16", "[app][roofline]") {
  app::RooflineRequest r;
  r.gpu = "h100-sxm5-80gb";
  CHECK(app::roofline(test::catalog(), r).front().highlight == DType::kBf16);
  r.gpu = "v100-sxm2-32gb";  // Volta has fp16 tensor cores and no bf16
  CHECK(app::roofline(test::catalog(), r).front().highlight == DType::kFp16);
  r.gpu = "b200";
  r.dtype = "fp4";
  CHECK(app::roofline(test::catalog(), r).front().highlight == DType::kFp4);
}

TEST_CASE("a roofline of several GPUs gives one per GPU in the request's order", "[app][roofline]") {
  app::RooflineRequest r;
  r.gpus = {"rtx4090", "v100-sxm2-32gb", "h100-sxm5-80gb"};
  const std::vector<explain::Roofline> rs = app::roofline(test::catalog(), r);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].gpu_id == "rtx4090");
  CHECK(rs[1].gpu_id == "v100-sxm2-32gb");
  CHECK(rs[1].highlight == DType::kFp16);
  CHECK(rs[2].gpu_id == "h100-sxm5-80gb");
}

TEST_CASE("a roofline request it cannot take is refused naming the field at fault", "[app][roofline][errors]") {
  app::RooflineRequest none;
  CHECK(refused_field(none).empty());  // no GPU and no scenario: no one field
  app::RooflineRequest both;
  both.gpus = {"rtx4090"};
  both.gpu = "a100-sxm4-80gb";
  CHECK(refused_field(both) == "gpus");
  app::RooflineRequest loose;
  loose.gpu = "rtx4090";
  loose.sets = {"system.gpus=2"};
  CHECK(refused_field(loose) == "sets");  // overrides without a scenario are not ignored
  app::RooflineRequest unknown;
  unknown.gpu = "rtx4090";
  unknown.dtype = "int4";
  CHECK(refused_field(unknown) == "dtype");
  app::RooflineRequest lacking;
  lacking.gpu = "t4";
  lacking.dtype = "bf16";  // named, so no fall-back to fp16
  CHECK(refused_field(lacking).empty());
  CHECK_THROWS_AS(app::roofline(test::catalog(), lacking), app::RequestError);
  app::RooflineRequest missing;
  missing.gpu = "no-such-gpu";
  CHECK_THROWS_AS(app::roofline(test::catalog(), missing), InputError);
}

TEST_CASE("an estimate request gives its scenario's estimate with the bands, from the file or its text alike",
          "[app][estimate]") {
  const std::string path = std::string(GPUSIM_SOURCE_DIR) + "/scenarios/llama2-7b-pretrain-a100.toml";
  const std::vector<std::string> sets = {"training.micro_batch=2"};
  const std::string gpu = "h100-sxm5-80gb";
  const Scenario sc = scenario::load_scenario_file(test::catalog(), path, scenario::parse_overrides(sets), gpu);
  answer::Options with_bands;
  with_bands.uncertainty = true;
  const std::string expected = report::estimate_json(answer::estimate(sc, with_bands));

  app::EstimateRequest r;
  r.scenario.path = path;
  r.sets = sets;
  r.gpu = gpu;
  const app::EstimateAnswer from_file = app::estimate(test::catalog(), r);
  CHECK(from_file.scenario.system.gpu.id == gpu);
  CHECK(report::estimate_json(from_file.estimate) == expected);
  r.scenario.text = test::read_text(path);
  CHECK(report::estimate_json(app::estimate(test::catalog(), r).estimate) == expected);
  CHECK(report::breakeven_json(app::breakeven(test::catalog(), r)) ==
        report::breakeven_json(report::breakeven_of(answer::estimate(sc))));
  // Without the bands: the same figures, and no band.
  r.bands = false;
  const answer::Estimate bare = app::estimate(test::catalog(), r).estimate;
  CHECK(report::estimate_json(bare) == report::estimate_json(answer::estimate(sc)));
  CHECK(report::estimate_json(bare) != expected);
}

TEST_CASE("an estimate request naming an unknown GPU or a key that does not exist is refused as input",
          "[app][estimate][errors]") {
  app::EstimateRequest r;
  r.scenario.path = std::string(GPUSIM_SOURCE_DIR) + "/scenarios/llama2-7b-pretrain-a100.toml";
  r.gpu = "no-such-gpu";
  CHECK_THROWS_AS(app::estimate(test::catalog(), r), InputError);
  CHECK_THROWS_WITH(app::estimate(test::catalog(), r), Catch::Contains("no-such-gpu"));
  r.gpu.clear();
  r.sets = {"training.no_such_key=1"};
  CHECK_THROWS_WITH(app::breakeven(test::catalog(), r), Catch::Contains("no_such_key"));
}

TEST_CASE("a sweep request it cannot take is refused naming the field at fault", "[app][sweep][errors]") {
  app::SweepRequest r;
  r.scenario.path = std::string(GPUSIM_SOURCE_DIR) + "/scenarios/scaling-llama2-7b.toml";
  CHECK(field_refused_by([&] { app::check(r); }) == "vary");
  r.axes = {search::parse_axis("training.micro_batch=1,2")};
  CHECK(field_refused_by([&] { app::check(r); }) == "(none)");
  r.shard = 2;
  r.shards = 2;
  CHECK(field_refused_by([&] { app::check(r); }) == "shard");
  r.shard = 0;
  r.shards = 1;
  r.max_points = 0;
  CHECK(field_refused_by([&] { app::check(r); }) == "max_points");
  r.max_points = 1;  // two points over a limit of one: the grid is input at fault, not a field
  CHECK_THROWS_AS(app::check(r), InputError);
}

TEST_CASE("a sweep gives every point in grid order, and why none ran when none did", "[app][sweep]") {
  app::SweepRequest r;
  r.scenario.path = std::string(GPUSIM_SOURCE_DIR) + "/scenarios/scaling-llama2-7b.toml";
  r.axes = {search::parse_axis("training.micro_batch=1,2"), search::parse_axis("parallelism.zero=0,1,3")};
  std::vector<std::vector<std::string>> seen;
  const app::SweepAnswer all =
      app::sweep(test::catalog(), r, [&](const search::SweepPoint& p) { seen.push_back(p.values); });
  CHECK(all.points == 6);
  CHECK(all.ran == 6);
  CHECK(all.refusal.empty());
  REQUIRE(seen.size() == 6);
  CHECK(seen[1] == std::vector<std::string>{"2", "0"});  // the first axis fastest
  r.axes = {search::parse_axis("training.micro_batch=1,2"), search::parse_axis("training.no_such_key=1")};
  const app::SweepAnswer none = app::sweep(test::catalog(), r, [](const search::SweepPoint&) {});
  CHECK(none.points == 2);
  CHECK(none.ran == 0);
  REQUIRE(none.refusal.size() == 1);  // one reason for every point: said once
  CHECK_THAT(none.refusal.front().message,
             Catch::Contains("no point can run (all 2)") && Catch::Contains("no_such_key"));
}

TEST_CASE("a spec is shown from whichever folder holds its id, and an unknown id is refused with the known ones",
          "[app][specs]") {
  CHECK(app::show_spec(test::catalog(), "h100-sxm5-80gb").path == "specs/gpus/h100-sxm5-80gb.toml");
  CHECK(app::show_spec(test::catalog(), "vllm").path == "specs/runtimes/vllm.toml");
  CHECK_THROWS_AS(app::show_spec(test::catalog(), "no-such-spec"), InputError);
  CHECK_THROWS_WITH(app::show_spec(test::catalog(), "no-such-spec"), Catch::Contains("h100-sxm5-80gb"));
}

TEST_CASE("checking the specs counts every file of the catalog, and a bad file is refused at its position",
          "[app][specs][errors]") {
  std::size_t files = 0;
  for (const auto& [kind, folder] : catalog::kSpecFolders) {
    files += test::catalog().ids(kind).size();
  }
  CHECK(app::check_specs(test::catalog(), {}) == files);
  const auto dir = test::scratch() / "gpus";
  std::filesystem::create_directories(dir);
  const std::string bad = (dir / "broken.toml").string();
  {
    std::ofstream out(bad);
    out << "name = \"broken\"\nmemory = 12\n";  // no unit, and most required keys missing
  }
  CHECK_THROWS_AS(app::check_specs(test::catalog(), {bad}), InputError);
  CHECK_THROWS_WITH(app::check_specs(test::catalog(), {bad}), Catch::Contains("broken.toml:"));
}

TEST_CASE("a plan request's gpu replaces the scenario's, and an unknown one is refused as input", "[app][plan]") {
  app::PlanRequest r;
  r.scenario = app::ScenarioSource{test::source("scenarios/gpt2-124m-8xa100.toml"), std::nullopt};
  r.top = 1;
  r.gpu = "h100-sxm5-80gb";
  const app::PlanAnswer a = app::plan(test::catalog(), r);
  CHECK(a.scenario.system.gpu.id == "h100-sxm5-80gb");
  REQUIRE(a.training.has_value());
  r.gpu = "h100";
  CHECK_THROWS_WITH(app::plan(test::catalog(), r), Catch::Contains("did you mean \"h100-nvl\""));
}

TEST_CASE("a serving plan that meets nothing names the smallest --max-gpus that would, checked by planning with it",
          "[app][plan][serving]") {
  app::PlanRequest r;
  r.scenario = app::ScenarioSource{test::source("scenarios/llama3-70b-fp8-4xh100-serve.toml"), std::nullopt};
  r.sets = {"slo.tpot=\"12 ms\""};  // below what 4 H100s give this load
  const app::PlanAnswer a = app::plan(test::catalog(), r);
  REQUIRE(a.serving.has_value());
  REQUIRE(a.serving->meeting == 0);
  const int g = a.serving->meets_with_max_gpus;
  REQUIRE(g > 0);
  r.max_gpus = g;
  CHECK(app::plan(test::catalog(), r).serving->meeting > 0);
  if (g / 2 > a.scenario.system.gpus) {
    r.max_gpus = g / 2;  // the smallest: half of it meets nothing
    CHECK(app::plan(test::catalog(), r).serving->meeting == 0);
  }
  // A limit no deployment reaches: tried up to the most, none named.
  r.max_gpus = 0;
  r.sets = {"slo.tpot=\"1 ms\""};
  const app::PlanAnswer none = app::plan(test::catalog(), r);
  CHECK(none.serving->meets_with_max_gpus == 0);
  CHECK(none.serving->more_gpus_tried);
}

TEST_CASE("a serving plan that meets nothing names the first other weight format that would, fewest bits lost first",
          "[app][plan][serving]") {
  // Llama-3-70B on two 24 GB cards: 16- and 8-bit weights (141 and 70 GB) do not fit; 4-bit does.
  app::PlanRequest r;
  r.scenario = app::ScenarioSource{test::source("scenarios/llama3-8b-serve-2rps.toml"), std::nullopt};
  r.sets = {"model.preset=\"llama3-70b\"", "system.gpus=2", "slo.tpot=\"100 ms\"", "slo.ttft=\"10 s\"",
            "serving.rate=\"0.2 req/s\""};
  const app::PlanAnswer a = app::plan(test::catalog(), r);
  REQUIRE(a.serving->meeting == 0);
  REQUIRE(a.serving->more_formats_tried);
  const std::string f = a.serving->meets_with_format;
  REQUIRE_FALSE(f.empty());
  double bits = 0;
  for (const scenario::WeightFormat& w : scenario::weight_formats()) {
    if (w.name == f) {
      bits = w.bits;
      CHECK_FALSE(w.ggml_block);  // vLLM's file: no llama.cpp block format is offered
    }
  }
  REQUIRE(bits > 0);
  r.formats = {f};
  CHECK(app::plan(test::catalog(), r).serving->meeting > 0);
  // Every format with more bits that the GPU computes and the plan had not searched meets nothing.
  for (const scenario::WeightFormat& w : scenario::weight_formats()) {
    const bool searched =
        std::find(a.serving->formats.begin(), a.serving->formats.end(), w.name) != a.serving->formats.end();
    if (w.bits > bits && !searched && !w.ggml_block && a.scenario.system.gpu.supports(w.compute)) {
      INFO(w.name);
      r.formats = {std::string(w.name)};
      CHECK(app::plan(test::catalog(), r).serving->meeting == 0);
    }
  }
  // The report says it.
  const std::string text = report::plan_serving_text(a.scenario, a.options, *a.serving);
  CHECK(text.find("with --formats " + f + " a deployment on the same GPUs meets the SLO") != std::string::npos);
}
