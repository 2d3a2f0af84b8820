// The WebAssembly module's face (web/CMakeLists.txt): the application layer's requests
// (include/gpusim/app.hpp) as functions of strings, for the page (web/page.js). A scenario is its
// TOML text and the name its messages give; overrides are "key=value" lines. Every function
// returns the command line's own output for the same request (its JSON or SVG), or, for a request
// it cannot take, {"error": the command line's message} (file:line:col, the key, the value and
// the accepted range).
#include <emscripten/bind.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gpusim/app.hpp"
#include "gpusim/report.hpp"

namespace {

using gpusim::app::ScenarioSource;

const gpusim::catalog::Catalog& catalog() {
  static const gpusim::catalog::Catalog c = gpusim::catalog::Catalog::builtin();
  return c;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      out.push_back(line);
    }
  }
  return out;
}

std::string error_json(const std::string& message) { return nlohmann::json{{"error", message}}.dump(); }

// The answer of `make`, or the error JSON of what it threw.
template <class Make>
std::string answered(Make&& make) {
  try {
    return make();
  } catch (const gpusim::InputError& e) {
    std::string all;
    for (const gpusim::Diagnostic& d : e.diagnostics()) {
      all += d.format() + "\n";
    }
    return error_json(all.empty() ? e.what() : all);
  } catch (const std::exception& e) {
    return error_json(e.what());
  }
}

// A GPU what-if as JSON, {"memory_bandwidth": x, "clock": x, "pcie_gen": n} (each optional; "" or
// {}: none).
gpusim::app::GpuVariant variant_of(const nlohmann::json& j) {
  gpusim::app::GpuVariant v;
  if (j.is_object()) {
    v.memory_bandwidth = j.value("memory_bandwidth", 1.0);
    v.clock = j.value("clock", 1.0);
    if (j.contains("pcie_gen") && !j.at("pcie_gen").is_null()) {
      v.pcie_gen = j.at("pcie_gen").get<int>();
    }
  }
  return v;
}

gpusim::app::GpuVariant variant_of(const std::string& json) {
  return json.empty() ? gpusim::app::GpuVariant{} : variant_of(nlohmann::json::parse(json));
}

gpusim::app::EstimateRequest estimate_request(const std::string& name, const std::string& text, const std::string& sets,
                                              const std::string& gpu, const std::string& variant) {
  gpusim::app::EstimateRequest r;
  r.scenario = ScenarioSource{name, text};
  r.sets = lines_of(sets);
  r.gpu = gpu;
  r.variant = variant_of(variant);
  return r;
}

// The ids and names of what a page offers to choose: GPUs (with memory, bandwidth and TDP), models
// and runtimes.
std::string catalog_json() {
  return answered([] {
    using gpusim::catalog::SpecKind;
    nlohmann::json j;
    j["gpus"] = nlohmann::json::array();
    for (const std::string& id : catalog().ids(SpecKind::kGpu)) {
      const gpusim::hardware::GpuSpec g = catalog().gpu(id);
      j["gpus"].push_back({{"id", id},
                           {"name", g.name},
                           {"memory_gib", g.memory_capacity.value() / 1073741824.0},
                           {"memory_bandwidth_gbs", g.memory_bandwidth.value() / 1e9},
                           {"tdp_w", g.tdp.value()}});
    }
    j["models"] = catalog().ids(SpecKind::kModel);
    j["runtimes"] = nlohmann::json::array();
    for (const std::string& id : catalog().ids(SpecKind::kRuntime)) {
      j["runtimes"].push_back({{"id", id}, {"name", catalog().runtime(id).name}});
    }
    return j.dump();
  });
}

// `variant`: a GPU what-if as variant_of reads it.
std::string estimate(const std::string& name, const std::string& text, const std::string& sets, const std::string& gpu,
                     const std::string& variant) {
  return answered([&] {
    return gpusim::report::estimate_json(
        gpusim::app::estimate(catalog(), estimate_request(name, text, sets, gpu, variant)).estimate);
  });
}

std::string breakeven_svg(const std::string& name, const std::string& text, const std::string& sets,
                          const std::string& gpu, const std::string& variant) {
  return answered([&] {
    return gpusim::report::breakeven_svg(
        gpusim::app::breakeven(catalog(), estimate_request(name, text, sets, gpu, variant)));
  });
}

// The patch spec file of a GPU what-if: what `--specs DIR` needs as DIR/gpus/<gpu>.toml to give the
// command line the same GPU.
std::string variant_patch(const std::string& gpu, const std::string& variant) {
  return answered(
      [&] { return std::string(gpusim::app::gpu_variant_patch(catalog(), gpu, variant_of(variant)).text); });
}

// The scenario's step on its GPU's roofs (`gpusim roofline --scenario`).
std::string roofline_svg(const std::string& name, const std::string& text, const std::string& sets,
                         const std::string& gpu, const std::string& variant) {
  return answered([&] {
    gpusim::app::RooflineRequest r;
    r.gpu = gpu;
    r.variant = variant_of(variant);
    r.scenario = ScenarioSource{name, text};
    r.sets = lines_of(sets);
    return gpusim::report::roofline_svg(gpusim::app::roofline(catalog(), r));
  });
}

// The job on each GPU of `gpus` (one id per line) as bars relative to the first.
std::string compare_svg(const std::string& name, const std::string& text, const std::string& sets,
                        const std::string& gpus) {
  return answered([&] {
    gpusim::app::CompareRequest r;
    r.scenario = ScenarioSource{name, text};
    r.sets = lines_of(sets);
    r.gpus = lines_of(gpus);
    return gpusim::report::compare_svg(gpusim::app::compare(catalog(), r).rows, r.gpus.front());
  });
}

// A request as JSON: {"scenario": {"path", "text"}, "sets": [...], "gpu", "bands", "gpus": [...],
// "dtype", "objective", "top", "max_gpus", "formats": [...], "gpu_variant": {...}} (the fields its command takes),
// answered with the command line's --format json output for estimate, breakeven, roofline, compare, plan and sweep
// ("vary": ["KEY=V1,V2", ...], "shard", "shards").
ScenarioSource source_of(const nlohmann::json& j) {
  const nlohmann::json& s = j.at("scenario");
  ScenarioSource out{s.at("path").get<std::string>(), std::nullopt};
  if (s.contains("text")) {
    out.text = s.at("text").get<std::string>();
  }
  return out;
}

std::vector<std::string> strings(const nlohmann::json& j, const char* key) {
  return j.contains(key) ? j.at(key).get<std::vector<std::string>>() : std::vector<std::string>{};
}

std::string request(const std::string& command, const std::string& json) {
  return answered([&]() -> std::string {
    const nlohmann::json j = nlohmann::json::parse(json);
    const std::string gpu = j.value("gpu", std::string());
    if (command == "estimate" || command == "breakeven") {
      gpusim::app::EstimateRequest r;
      r.scenario = source_of(j);
      r.sets = strings(j, "sets");
      r.gpu = gpu;
      r.bands = j.value("bands", true);
      r.variant = variant_of(j.value("gpu_variant", nlohmann::json()));
      return command == "estimate" ? gpusim::report::estimate_json(gpusim::app::estimate(catalog(), r).estimate)
                                   : gpusim::report::breakeven_json(gpusim::app::breakeven(catalog(), r));
    }
    if (command == "roofline") {
      gpusim::app::RooflineRequest r;
      r.gpu = gpu;
      r.gpus = strings(j, "gpus");
      if (j.contains("scenario")) {
        r.scenario = source_of(j);
      }
      r.sets = strings(j, "sets");
      if (j.contains("dtype")) {
        r.dtype = j.at("dtype").get<std::string>();
      }
      r.variant = variant_of(j.value("gpu_variant", nlohmann::json()));
      return gpusim::report::roofline_json(gpusim::app::roofline(catalog(), r));
    }
    if (command == "compare") {
      gpusim::app::CompareRequest r;
      r.scenario = source_of(j);
      r.sets = strings(j, "sets");
      r.gpus = strings(j, "gpus");
      return gpusim::report::compare_json(gpusim::app::compare(catalog(), r).rows);
    }
    if (command == "plan") {
      gpusim::app::PlanRequest r;
      r.scenario = source_of(j);
      r.sets = strings(j, "sets");
      r.gpu = gpu;
      r.objective = j.value("objective", r.objective);
      r.top = j.value("top", r.top);
      r.max_gpus = j.value("max_gpus", r.max_gpus);
      r.formats = strings(j, "formats");
      const gpusim::app::PlanAnswer a = gpusim::app::plan(catalog(), r);
      return a.serving ? gpusim::report::plan_serving_json(a.scenario, *a.serving)
                       : gpusim::report::plan_json(a.scenario, *a.training);
    }
    if (command == "sweep") {  // the command line's --format json document
      gpusim::app::SweepRequest r;
      r.scenario = source_of(j);
      r.sets = strings(j, "sets");
      for (const std::string& v : strings(j, "vary")) {
        r.axes.push_back(gpusim::search::parse_axis(v));
      }
      r.shard = j.value("shard", 0);
      r.shards = j.value("shards", 1);
      std::string out = gpusim::report::sweep_begin(gpusim::report::SweepFormat::kJson, r.axes);
      std::size_t count = 0;
      const gpusim::app::SweepAnswer a = gpusim::app::sweep(catalog(), r, [&](const gpusim::search::SweepPoint& p) {
        out += gpusim::report::sweep_record(gpusim::report::SweepFormat::kJson, r.axes, p, count++);
      });
      if (!a.refusal.empty()) {
        throw gpusim::InputError(a.refusal);
      }
      return out + gpusim::report::sweep_end(gpusim::report::SweepFormat::kJson, count);
    }
    return error_json("no command \"" + command + "\": estimate, breakeven, roofline, compare, plan or sweep");
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(gpusim) {
  emscripten::function("request", &request);
  emscripten::function("catalog", &catalog_json);
  emscripten::function("estimate", &estimate);
  emscripten::function("breakevenSvg", &breakeven_svg);
  emscripten::function("rooflineSvg", &roofline_svg);
  emscripten::function("compareSvg", &compare_svg);
  emscripten::function("variantPatch", &variant_patch);
}
