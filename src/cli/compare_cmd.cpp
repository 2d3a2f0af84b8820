// gpusim compare SCENARIO --gpus a,b,c: the purchase comparison, ranked by time to finish.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "cli/options.hpp"
#include "gpusim/model/estimate.hpp"
#include "gpusim/report/report.hpp"
#include "gpusim/workload/scenario.hpp"
#include "report/json_writer.hpp"

namespace gpusim::cli {

std::vector<Override> parse_overrides(const std::vector<std::string>& sets);

namespace {

struct Row {
  std::string gpu;
  std::optional<Estimate> est;
  std::string problem;  // why the scenario cannot run on this GPU
};

// Cloud cost per million tokens trained (or generated, for inference).
double usd_per_million_tokens(const Estimate& e) { return e.tokens > 0 ? e.cost.cloud.value() / e.tokens * 1e6 : 0.0; }

std::string table(const std::string& title, const std::vector<Row>& rows) {
  std::string out = title + "\n";
  char buf[512];
  std::snprintf(buf, sizeof buf, "  %-4s %-16s %5s %10s %12s %10s %12s %12s %10s %6s %-5s %s\n", "rank", "gpu", "gpus",
                "step", "time", "GPU-hours", "cloud USD", "owned USD", "USD/Mtok", "MFU", "fits", "bottleneck");
  out += buf;
  int rank = 0;
  for (const Row& r : rows) {
    if (!r.est) {
      std::snprintf(buf, sizeof buf, "  %-4s %-16s cannot run: %s\n", "-", r.gpu.c_str(), r.problem.c_str());
      out += buf;
      continue;
    }
    const Estimate& e = *r.est;
    const double hours = units::to_hours(e.train_time);
    std::snprintf(buf, sizeof buf, "  %-4d %-16s %5d %9.3gs %11.3gh %10.3g %12.4g %12.4g %10.3g %5.0f%% %-5s %s\n",
                  ++rank, r.gpu.c_str(), e.gpus, e.step.time.value(), hours, e.gpu_hours, e.cost.cloud.value(),
                  e.cost.owned().value(), usd_per_million_tokens(e), 100 * e.mfu, e.memory.fits() ? "yes" : "NO",
                  to_string(e.bottleneck));
    out += buf;
  }
  out += "  time = wall clock for the whole job; owned = electricity + hardware share at the scenario's utilization\n";
  return out;
}

std::string json(const std::vector<Row>& rows) {
  detail::JsonWriter w;
  w.begin_array();
  for (const Row& r : rows) {
    w.begin_object();
    w.value("gpu", r.gpu);
    if (!r.est) {
      w.value("runs", false);
      w.value("problem", r.problem);
    } else {
      const Estimate& e = *r.est;
      w.value("runs", true);
      w.value("gpus", e.gpus);
      w.value("step_time_s", e.step.time.value());
      w.value("time_s", e.train_time.value());
      w.value("gpu_hours", e.gpu_hours);
      w.value("cloud_usd", e.cost.cloud.value());
      w.value("owned_usd", e.cost.owned().value());
      w.value("usd_per_million_tokens", usd_per_million_tokens(e));
      w.value("mfu", e.mfu);
      w.value("fits", e.memory.fits());
      w.value("memory_per_gpu_bytes", e.memory.total().value());
      w.value("bottleneck", to_string(e.bottleneck));
    }
    w.end_object();
  }
  w.end_array();
  return w.str() + "\n";
}

}  // namespace

int run_compare(const std::vector<std::string>& args) {
  Common c;
  std::string scenario;
  std::string gpus;
  std::vector<std::string> sets;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "scenario TOML file")(
      "gpus", po::value<std::string>(&gpus), "comma-separated GPU ids to compare (required)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a scenario key (repeatable)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim compare SCENARIO --gpus ID,ID,... [--format text|json|csv]\n"
             "Ranks GPUs for one job: jobs that fit first, then by time to finish; each GPU keeps the\n"
             "scenario's GPU count and layout.")) {
    return 0;
  }
  if (scenario.empty() || gpus.empty()) {
    throw UsageError("needs SCENARIO and --gpus ID,ID,... (see gpusim compare --help)");
  }
  check_format(c.format);
  const Catalog catalog = load_catalog(c.specs);
  std::vector<Row> rows;
  std::stringstream ss(gpus);
  for (std::string id; std::getline(ss, id, ',');) {
    if (id.empty()) {
      continue;
    }
    (void)catalog.file(SpecKind::kGpu, id);  // unknown ids are bad input (exit 2)
    Row r;
    r.gpu = id;
    try {
      const Scenario sc = load_scenario_file(catalog, scenario, parse_overrides(sets), id);
      r.est = estimate(sc, catalog);
    } catch (const InputError& e) {
      r.problem = e.diagnostics().empty() ? e.what() : e.diagnostics().front().message;
    }
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    auto key = [](const Row& r) {
      return std::make_pair(!r.est ? 2 : (r.est->memory.fits() ? 0 : 1), r.est ? r.est->train_time.value() : 0.0);
    };
    return key(a) < key(b);
  });
  std::string text;
  if (c.format == "json") {
    text = json(rows);
  } else if (c.format == "csv") {
    std::vector<Estimate> ests;
    for (const auto& r : rows) {
      if (r.est) {
        ests.push_back(*r.est);
      }
    }
    text = report_csv(ests);
  } else {
    const Scenario first = load_scenario_file(catalog, scenario, parse_overrides(sets));
    text = table("Compare: " + first.name, rows);
  }
  emit(text, c.out);
  return 0;
}

}  // namespace gpusim::cli
