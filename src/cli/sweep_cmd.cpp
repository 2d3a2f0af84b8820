// gpusim sweep SCENARIO --vary KEY=V1,V2,...: a grid over scenario keys, one CSV (or JSON) row per
// point; points that cannot run say why in their row. --shard I/N runs every N-th point from I.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/options.hpp"
#include "common/strfmt.hpp"
#include "gpusim/model/estimate.hpp"
#include "gpusim/report/report.hpp"
#include "report/json_writer.hpp"

namespace gpusim::cli {

using detail::strfmt;

std::vector<Override> parse_overrides(const std::vector<std::string>& sets);

namespace {

struct Axis {
  std::string key;
  std::vector<std::string> values;
};

Axis parse_axis(const std::string& s) {
  const auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
    throw UsageError("--vary expects KEY=V1,V2,... (e.g. system.gpus=8,16,32), got \"" + s + "\"");
  }
  Axis a{s.substr(0, eq), {}};
  std::stringstream ss(s.substr(eq + 1));
  for (std::string v; std::getline(ss, v, ',');) {
    if (!v.empty()) {
      a.values.push_back(v);
    }
  }
  return a;
}

std::string csv_quote(std::string s) {
  for (auto& ch : s) {
    if (ch == '"') {
      ch = '\'';
    }
  }
  return "\"" + s + "\"";
}

}  // namespace

int run_sweep(const std::vector<std::string>& args) {
  Common c;
  c.format = "csv";
  std::string scenario;
  std::vector<std::string> varies;
  std::vector<std::string> sets;
  std::string shard = "0/1";
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "scenario TOML file")(
      "vary", po::value<std::vector<std::string>>(&varies)->composing(),
      "KEY=V1,V2,... (repeatable: the grid is their product)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "fixed override (repeatable)")(
      "shard", po::value<std::string>(&shard)->default_value("0/1"), "I/N: run points I, I+N, I+2N, ...");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim sweep SCENARIO --vary KEY=V1,V2,... [--vary ...] [--format csv|json] [--shard I/N]\n"
             "Estimates every point of the grid; default output CSV, one row per point.")) {
    return 0;
  }
  if (scenario.empty() || varies.empty()) {
    throw UsageError("needs SCENARIO and at least one --vary KEY=V1,V2,... (see gpusim sweep --help)");
  }
  if (c.format == "text") {
    c.format = "csv";
  }
  check_format(c.format);
  int shard_i = 0, shard_n = 1;
  if (std::sscanf(shard.c_str(), "%d/%d", &shard_i, &shard_n) != 2 || shard_n < 1 || shard_i < 0 ||
      shard_i >= shard_n) {
    throw UsageError("--shard expects I/N with 0 <= I < N, got \"" + shard + "\"");
  }
  std::vector<Axis> axes;
  std::size_t points = 1;
  for (const auto& v : varies) {
    axes.push_back(parse_axis(v));
    points *= axes.back().values.size();
  }
  const Catalog catalog = load_catalog(c.specs);
  const std::vector<Override> fixed = parse_overrides(sets);
  (void)load_scenario_file(catalog, scenario, fixed);  // the base scenario itself must be valid (exit 2)

  std::string header;
  for (const auto& a : axes) {
    header += a.key + ",";
  }
  std::string out = header + "status," + report_csv({}).substr(0, report_csv({}).find('\n') + 1);
  detail::JsonWriter w;
  w.begin_array();
  std::size_t done = 0;
  for (std::size_t i = static_cast<std::size_t>(shard_i); i < points; i += static_cast<std::size_t>(shard_n)) {
    std::vector<Override> o = fixed;
    std::size_t rest = i;
    std::string values;
    for (const auto& a : axes) {
      const std::string& v = a.values[rest % a.values.size()];
      rest /= a.values.size();
      o.push_back(Override{a.key, v});
      values += v + ",";
    }
    std::string status = "ok";
    std::optional<Estimate> e;
    try {
      e = estimate(load_scenario_file(catalog, scenario, o), catalog);
    } catch (const InputError& err) {
      status = err.diagnostics().empty() ? err.what() : err.diagnostics().front().message;
    }
    if (c.format == "json") {
      w.begin_object();
      for (std::size_t k = 0; k < axes.size(); ++k) {
        w.value(axes[k].key.c_str(), o[fixed.size() + k].value);
      }
      w.value("status", status);
      if (e) {
        w.value("step_time_s", e->step.time.value());
        w.value("tokens_per_s", e->tokens_per_s);
        w.value("mfu", e->mfu);
        w.value("memory_per_gpu_bytes", e->memory.total().value());
        w.value("fits", e->memory.fits());
        w.value("train_time_s", e->train_time.value());
        w.value("cloud_usd", e->cost.cloud.value());
        w.value("bottleneck", to_string(e->bottleneck));
      }
      w.end_object();
    } else {
      const std::string row = e ? report_csv({*e}) : std::string();
      out += values + csv_quote(status) + "," + (e ? row.substr(row.find('\n') + 1) : std::string("\n"));
    }
    ++done;
    if (points > 50 && done % 50 == 0) {
      std::cerr << strfmt(
          "sweep: %zu of %zu points\n", done,
          (points - static_cast<std::size_t>(shard_i) + shard_n - 1) / static_cast<std::size_t>(shard_n));
    }
  }
  w.end_array();
  emit(c.format == "json" ? w.str() + "\n" : out, c.out);
  return 0;
}

}  // namespace gpusim::cli
