// gpusim._gpusim: the library behind the Python package gpusim (python/gpusim/__init__.py,
// docs/python.md). Thin on purpose: each function does what its CLI subcommand does and returns
// the same report JSON (docs/report.md), which the package parses; only the sweep's rows (report
// fields at full precision) and a GPU's figures, which have no JSON report, are built here. Arguments arrive already in
// the CLI's form (scenario path and optional TOML text, "KEY=VALUE" overrides, spec directories); the package turns
// Python values into them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "gpusim/gpusim.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

using gpusim::Catalog;
using gpusim::ParsedScenario;
using gpusim::Scenario;
using Strings = std::vector<std::string>;
// The --set KEY=VALUE texts and the --unset keys of a call (Python gives them as a tuple).
using Overrides = std::pair<Strings, Strings>;

// The exception type a base::InputError becomes: gpusim.InputError once the package registers it
// (it is defined in Python, with its attributes), ValueError until then. Never released: the
// translator may run until the interpreter ends.
PyObject* g_input_error = PyExc_ValueError;

// The built-in catalog is shared by every call without spec directories, so the specs it resolves
// are parsed once per process (a Catalog may be shared between threads); one with directories is
// loaded afresh, since their files may have changed between calls.
std::shared_ptr<const Catalog> catalog_of(const Strings& dirs) {
  static const auto builtin = std::make_shared<const Catalog>(Catalog::builtin());
  return dirs.empty() ? builtin : std::make_shared<const Catalog>(gpusim::load_catalog(dirs));
}

// A GPU what-if as the package passes it: (memory bandwidth factor, clock factor, PCIe generation
// or 0 for the GPU's own).
using Variant = std::tuple<double, double, int>;

gpusim::app::GpuVariant variant_of(const Variant& v) {
  gpusim::app::GpuVariant out;
  out.memory_bandwidth = std::get<0>(v);
  out.clock = std::get<1>(v);
  if (std::get<2>(v) != 0) {
    out.pcie_gen = std::get<2>(v);
  }
  return out;
}

gpusim::app::EstimateRequest estimate_request(const std::string& path, const std::optional<std::string>& text,
                                              const Overrides& sets, const std::string& gpu, const Variant& variant) {
  gpusim::app::EstimateRequest r;
  r.scenario = gpusim::app::ScenarioSource{path, text};
  r.sets = sets.first;
  r.unsets = sets.second;
  r.gpu = gpu;
  r.variant = variant_of(variant);
  return r;
}

// A problem's place as Python names it: an override the library calls "--set KEY=VALUE" (the
// command line's flag) is the package's overrides["KEY"] = VALUE (the value as TOML, the form the
// package gave it in); "--unset KEY" is overrides["KEY"] = None.
std::string python_words(const std::string& where) {
  const std::string unset = "--unset ";
  if (where.rfind(unset, 0) == 0) {
    return "overrides[\"" + where.substr(unset.size()) + "\"] = None";
  }
  const std::string flag = "--set ";
  if (where.rfind(flag, 0) != 0) {
    return where;
  }
  const std::string set = where.substr(flag.size());
  const std::size_t eq = set.find('=');
  if (eq == std::string::npos) {
    return "overrides " + set;
  }
  return "overrides[\"" + set.substr(0, eq) + "\"] = " + set.substr(eq + 1);
}

// A request's field as the Python function names its keyword.
[[noreturn]] void raise_request(const gpusim::app::RequestError& e) {
  const std::string& field = e.option();
  throw std::invalid_argument(field.empty() ? e.problem()
                                            : (field == "sets" ? std::string("overrides") : field) + " " + e.problem());
}

py::object field_value(const gpusim::answer::FieldValue& v) {
  if (const auto* d = std::get_if<double>(&v)) {
    if (!std::isfinite(*d)) {
      return py::none();  // as the JSON report's null
    }
    // An integral value is an int, as json.loads gives for the report's exact numbers ("8", not "8.0").
    if (std::abs(*d) < 9007199254740992.0 && *d == std::trunc(*d)) {
      return py::int_(static_cast<long long>(*d));
    }
    return py::float_(*d);
  }
  if (const auto* b = std::get_if<bool>(&v)) {
    return py::bool_(*b);
  }
  if (const auto* s = std::get_if<std::string>(&v)) {
    return py::str(*s);
  }
  if (const auto* p = std::get_if<gpusim::physics::IntraPath>(&v)) {
    return py::str(gpusim::report::intra_path_text(*p));
  }
  return py::none();
}

std::string estimate(const std::string& path, const std::optional<std::string>& text, const Overrides& sets,
                     const std::string& gpu, const Variant& variant, const Strings& specs) {
  const py::gil_scoped_release release;
  const auto catalog = catalog_of(specs);
  try {
    return gpusim::report::estimate_json(
        gpusim::app::estimate(*catalog, estimate_request(path, text, sets, gpu, variant)).estimate);
  } catch (const gpusim::app::RequestError& e) {
    raise_request(e);
  }
}

std::string compare_systems(const std::string& path, const std::optional<std::string>& text, const Overrides& sets,
                            const Strings& systems, const std::string& objective, const Strings& specs) {
  gpusim::app::CompareRequest request;
  request.scenario = gpusim::app::ScenarioSource{path, text};
  request.sets = sets.first;
  request.unsets = sets.second;
  request.systems = systems;
  request.objective = objective;
  const auto catalog = catalog_of(specs);
  const py::gil_scoped_release release;
  try {
    const gpusim::app::CompareAnswer a = gpusim::app::compare(*catalog, request);
    return gpusim::report::systems_json(gpusim::report::job_words(a.base), a.systems, a.objective);
  } catch (const gpusim::app::RequestError& e) {
    raise_request(e);
  }
}

std::string compare(const std::string& path, const std::optional<std::string>& text, const Overrides& sets,
                    const Strings& gpus, const Strings& specs) {
  gpusim::app::CompareRequest request;
  request.scenario = gpusim::app::ScenarioSource{path, text};
  request.sets = sets.first;
  request.unsets = sets.second;
  request.gpus = gpus;
  const auto catalog = catalog_of(specs);
  const py::gil_scoped_release release;
  try {
    return gpusim::report::compare_json(gpusim::app::compare(*catalog, request).rows);
  } catch (const gpusim::app::RequestError& e) {
    raise_request(e);
  }
}

// One dict per grid point, in grid order (first axis fastest): "values" (the axis values as
// given), "status" ("ok" or why the point cannot run) and "fields" (every report field, keyed
// "section.key").
py::list sweep(const std::string& path, const std::optional<std::string>& text, const Overrides& sets,
               const std::vector<std::pair<std::string, Strings>>& axis_values, const Strings& specs, int shard,
               int shards) {
  gpusim::app::SweepRequest request;
  request.scenario = gpusim::app::ScenarioSource{path, text};
  request.sets = sets.first;
  request.unsets = sets.second;
  for (const auto& [key, values] : axis_values) {
    request.axes.push_back(gpusim::search::Axis{key, values});
  }
  request.shard = shard;
  request.shards = shards;
  const auto catalog = catalog_of(specs);
  std::vector<gpusim::search::SweepPoint> points;
  try {
    // Every point's row, those that cannot run too: a shard of a distributed sweep where none ran
    // is still part of the whole.
    const py::gil_scoped_release release;
    (void)gpusim::app::sweep(*catalog, request, [&](const gpusim::search::SweepPoint& p) { points.push_back(p); });
  } catch (const gpusim::app::RequestError& e) {
    raise_request(e);
  }
  py::list rows;
  for (const auto& p : points) {
    py::dict fields;
    if (p.estimate) {
      for (const auto& f : gpusim::answer::report_fields(*p.estimate)) {
        const std::string key = *f.section == '\0' ? std::string(f.key) : std::string(f.section) + "." + f.key;
        fields[py::str(key)] = field_value(f.value);
      }
    }
    rows.append(
        py::dict("values"_a = p.values, "status"_a = p.estimate ? std::string("ok") : p.problem, "fields"_a = fields));
  }
  return rows;
}

gpusim::app::PlanRequest plan_request(const std::string& objective, int top, int max_gpus, const Strings& formats) {
  gpusim::app::PlanRequest request;
  request.objective = objective;
  request.top = top;
  request.max_gpus = max_gpus;
  request.formats = formats;
  return request;
}

// plan()'s checks alone: plan_many checks every question before it answers any.
void plan_check(const std::string& objective, int top, int max_gpus, const Strings& formats) {
  try {
    gpusim::app::check(plan_request(objective, top, max_gpus, formats));
  } catch (const gpusim::app::RequestError& e) {
    raise_request(e);
  }
}

std::string plan(const std::string& path, const std::optional<std::string>& text, const Overrides& sets,
                 const std::string& gpu, const std::string& objective, int top, int max_gpus, const Strings& formats,
                 const Strings& specs) {
  gpusim::app::PlanRequest request = plan_request(objective, top, max_gpus, formats);
  request.scenario = gpusim::app::ScenarioSource{path, text};
  request.sets = sets.first;
  request.unsets = sets.second;
  request.gpu = gpu;
  const auto catalog = catalog_of(specs);
  const py::gil_scoped_release release;
  try {
    const gpusim::app::PlanAnswer a = gpusim::app::plan(*catalog, request);
    return a.serving ? gpusim::report::plan_serving_json(a.scenario, *a.serving)
                     : gpusim::report::plan_json(a.scenario, *a.training);
  } catch (const gpusim::app::RequestError& e) {
    raise_request(e);
  }
}

std::string roofline(const std::string& gpu, const Strings& gpus, const std::optional<std::string>& path,
                     const std::optional<std::string>& text, const Overrides& sets,
                     const std::optional<std::string>& dtype, const Variant& variant, const Strings& specs) {
  gpusim::app::RooflineRequest request;
  request.variant = variant_of(variant);
  request.gpu = gpu;
  request.gpus = gpus;
  if (path) {
    request.scenario = gpusim::app::ScenarioSource{*path, text};
  }
  request.sets = sets.first;
  request.unsets = sets.second;
  request.dtype = dtype;
  const auto catalog = catalog_of(specs);
  const py::gil_scoped_release release;
  try {
    return gpusim::report::roofline_json(gpusim::app::roofline(*catalog, request));
  } catch (const gpusim::app::RequestError& e) {
    raise_request(e);
  }
}

std::string breakeven(const std::string& path, const std::optional<std::string>& text, const Overrides& sets,
                      const std::string& gpu, const Variant& variant, const Strings& specs) {
  const py::gil_scoped_release release;
  const auto catalog = catalog_of(specs);
  try {
    return gpusim::report::breakeven_json(
        gpusim::app::breakeven(*catalog, estimate_request(path, text, sets, gpu, variant)));
  } catch (const gpusim::app::RequestError& e) {
    raise_request(e);
  }
}

// `gpusim validate --format json`, with or without --cross-validate.
std::string validate(const Strings& inputs, const std::string& role, bool cross_validate, const Strings& specs) {
  const py::gil_scoped_release release;
  const auto catalog = catalog_of(specs);
  gpusim::app::ValidateRequest r;
  r.inputs = inputs;
  r.role = role;
  r.cross_validate = cross_validate;
  try {
    const gpusim::app::ValidateAnswer a = gpusim::app::validate(*catalog, r);
    return a.cross ? gpusim::report::cross_validation_json(*a.cross) : gpusim::report::validation_json(*a.report);
  } catch (const gpusim::app::RequestError& e) {
    raise_request(e);
  }
}

// `gpusim calibrate`: the overlay's files (path under the overlay folder to text), the text report,
// and the validation JSON before and after.
py::dict calibrate(const Strings& inputs, const Strings& specs) {
  const auto catalog = catalog_of(specs);
  gpusim::app::CalibrateAnswer a;
  {
    const py::gil_scoped_release release;
    try {
      a = gpusim::app::calibrate(*catalog, {inputs});
    } catch (const gpusim::app::RequestError& e) {
      raise_request(e);
    }
  }
  py::dict files;
  for (const auto& f : a.files) {
    files[py::str(f.relative_path)] = f.text;
  }
  return py::dict("files"_a = files, "report"_a = gpusim::report::calibration_text(a.fit, a.before, a.after, ""),
                  "before"_a = gpusim::report::validation_json(a.before),
                  "after"_a = gpusim::report::validation_json(a.after));
}

// `gpusim model import CONFIG.json`: the model spec file's text.
std::string import_model(const std::string& config, const Strings& specs) {
  const py::gil_scoped_release release;
  return gpusim::app::import_model(*catalog_of(specs), {config, ""}).text;
}

// `gpusim init KIND`.
std::string init(const std::string& kind) {
  try {
    return gpusim::app::init(kind);
  } catch (const gpusim::app::RequestError& e) {
    raise_request(e);
  }
}

Strings spec_ids(const std::string& kind, const Strings& specs) {
  const auto k = gpusim::base::value_in(gpusim::catalog::kSpecFolders, kind);
  if (!k) {
    throw std::invalid_argument("kind must be one of " + gpusim::base::quoted_names(gpusim::catalog::kSpecFolders) +
                                ", got \"" + kind + "\"");
  }
  return catalog_of(specs)->ids(*k);
}

// The figures `gpusim specs list` shows and a little more, in SI units (docs/python.md).
py::dict gpu(const std::string& id, const Strings& specs) {
  namespace units = gpusim::units;
  const gpusim::hardware::GpuSpec g = catalog_of(specs)->gpu(id);
  py::dict peak;
  for (const auto& [dtype, name] : units::kDTypeNames) {
    if (g.supports(dtype)) {
      peak[name] = g.peak_for(dtype).value();
    }
  }
  return py::dict("id"_a = g.id, "name"_a = g.name, "arch"_a = gpusim::hardware::to_string(g.arch),
                  "form_factor"_a = gpusim::base::name_in(gpusim::hardware::kFormFactorNames, g.form_factor),
                  "sm_count"_a = g.sm_count, "boost_clock_hz"_a = g.boost_clock.value(), "peak_flops"_a = peak,
                  "memory_type"_a = g.memory_type, "memory_bytes"_a = units::to_bytes(g.memory_capacity),
                  "memory_bandwidth_bytes_per_s"_a = g.memory_bandwidth.value(),
                  "l2_bytes"_a = units::to_bytes(g.l2_size), "pcie_gen"_a = g.pcie_gen, "peer_link"_a = g.peer_link,
                  "peer_bandwidth_bytes_per_s"_a = g.peer_bandwidth.value(), "tdp_w"_a = units::to_watts(g.tdp),
                  "idle_w"_a = units::to_watts(g.idle_power), "purchase_usd"_a = units::to_usd(g.purchase),
                  "purchase_date"_a = g.purchase_date, "cloud_usd_per_hour"_a = units::to_usd_per_hour(g.cloud_rate),
                  "cloud_date"_a = g.cloud_date, "sources"_a = g.sources, "origin"_a = g.origin);
}

void set_input_error(const py::object& type) {
  if (PyExceptionClass_Check(type.ptr()) == 0) {
    throw std::invalid_argument("_set_input_error expects an exception class");
  }
  g_input_error = type.inc_ref().ptr();
}

}  // namespace

PYBIND11_MODULE(_gpusim, m) {
  m.doc() = "gpusim's library; use the package gpusim (docs/python.md), not this module.";
  m.attr("__version__") = GPUSIM_VERSION;

  // InputError(message, diagnostics): the message as the CLI prints it, one Diagnostic per line.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) {
        std::rethrow_exception(p);
      }
    } catch (const gpusim::InputError& e) {
      std::string message;
      py::list diagnostics;
      for (gpusim::Diagnostic d : e.diagnostics()) {
        d.pos.file = python_words(d.pos.file);
        message += (message.empty() ? "" : "\n") + d.format();
        diagnostics.append(py::dict("file"_a = d.pos.file, "line"_a = d.pos.line, "column"_a = d.pos.column,
                                    "key"_a = d.key, "message"_a = d.message));
      }
      const py::tuple args = py::make_tuple(message.empty() ? std::string(e.what()) : message, diagnostics);
      PyErr_SetObject(g_input_error, args.ptr());
    }
  });

  m.def("_set_input_error", &set_input_error, "type"_a);
  m.def("estimate", &estimate, "path"_a, "text"_a, "sets"_a, "gpu"_a, "variant"_a, "specs"_a);
  m.def("compare", &compare, "path"_a, "text"_a, "sets"_a, "gpus"_a, "specs"_a);
  m.def("compare_systems", &compare_systems, "path"_a, "text"_a, "sets"_a, "systems"_a, "objective"_a, "specs"_a);
  m.def("sweep", &sweep, "path"_a, "text"_a, "sets"_a, "axes"_a, "specs"_a, "shard"_a = 0, "shards"_a = 1);
  m.def("plan", &plan, "path"_a, "text"_a, "sets"_a, "gpu"_a, "objective"_a, "top"_a, "max_gpus"_a, "formats"_a,
        "specs"_a);
  m.def("plan_check", &plan_check, "objective"_a, "top"_a, "max_gpus"_a, "formats"_a);
  m.def("roofline", &roofline, "gpu"_a, "gpus"_a, "path"_a, "text"_a, "sets"_a, "dtype"_a, "variant"_a, "specs"_a);
  m.def("breakeven", &breakeven, "path"_a, "text"_a, "sets"_a, "gpu"_a, "variant"_a, "specs"_a);
  m.def("validate", &validate, "inputs"_a, "role"_a, "cross_validate"_a, "specs"_a);
  m.def("calibrate", &calibrate, "inputs"_a, "specs"_a);
  m.def("import_model", &import_model, "config"_a, "specs"_a);
  m.def("init", &init, "kind"_a);
  m.def("spec_ids", &spec_ids, "kind"_a, "specs"_a);
  m.def("gpu", &gpu, "id"_a, "specs"_a);
}
