// gpusim breakeven SCENARIO: cloud versus owned across utilization, as a table and an SVG.
#include <algorithm>
#include <fstream>

#include "cli/options.hpp"
#include "common/strfmt.hpp"
#include "gpusim/cost/cost.hpp"
#include "gpusim/model/estimate.hpp"
#include "report/json_writer.hpp"
#include "report/svg.hpp"

namespace gpusim::cli {

using detail::strfmt;

std::vector<Override> parse_overrides(const std::vector<std::string>& sets);

namespace {

std::string picture(const std::string& title, const std::vector<BreakevenPoint>& curve, std::optional<double> cross,
                    double scenario_u) {
  constexpr double kW = 720, kH = 460, kLeft = 80, kRight = 660, kTop = 50, kBottom = 390;
  double y_max = 0;
  for (const auto& p : curve) {
    y_max = std::max({y_max, p.cloud_per_busy_hour.value() * 2.0, std::min(p.owned_per_busy_hour.value(), 1e300)});
  }
  y_max = std::min(y_max, 3.0 * curve.front().cloud_per_busy_hour.value());
  auto X = [&](double u) { return kLeft + u * (kRight - kLeft); };
  auto Y = [&](double usd) { return kBottom - std::min(usd / y_max, 1.0) * (kBottom - kTop); };
  detail::Svg svg(kW, kH);
  svg.text(kLeft, 28, title, 14);
  svg.rect(kLeft, kTop, kRight - kLeft, kBottom - kTop, "none", "#888");
  for (int i = 0; i <= 10; ++i) {
    const double u = i / 10.0;
    svg.line(X(u), kTop, X(u), kBottom, "#eee", 1);
    svg.text(X(u), kBottom + 16, strfmt("%.0f%%", 100 * u), 10, "middle");
  }
  for (int i = 0; i <= 5; ++i) {
    const double v = y_max * i / 5.0;
    svg.line(kLeft, Y(v), kRight, Y(v), "#eee", 1);
    svg.text(kLeft - 6, Y(v) + 4, strfmt("%.3g", v), 10, "end");
  }
  svg.text((kLeft + kRight) / 2, kBottom + 36, "utilization of the owned system (share of the year busy)", 12,
           "middle");
  svg.text(24, (kTop + kBottom) / 2, "USD per busy hour (whole system)", 12, "middle", "#222", -90);
  for (std::size_t i = 1; i < curve.size(); ++i) {
    svg.line(X(curve[i - 1].utilization), Y(curve[i - 1].owned_per_busy_hour.value()), X(curve[i].utilization),
             Y(curve[i].owned_per_busy_hour.value()), "#1f77b4", 2.5);
  }
  const double cloud = curve.front().cloud_per_busy_hour.value();
  svg.line(X(0), Y(cloud), X(1), Y(cloud), "#d62728", 2.5);
  svg.text(X(1) - 4, Y(cloud) - 6, strfmt("cloud %.3g USD/h", cloud), 11, "end", "#d62728");
  svg.text(X(0.55), Y(curve.back().owned_per_busy_hour.value()) - 8, "owned: hardware share + electricity", 11, "start",
           "#1f77b4");
  if (cross && *cross <= 1.0) {
    svg.line(X(*cross), kTop, X(*cross), kBottom, "#2ca02c", 1.2, "4,3");
    svg.text(X(*cross) + 4, kTop + 14, strfmt("owning pays back above %.0f%%", 100 * *cross), 11, "start", "#2ca02c");
  }
  svg.line(X(scenario_u), kBottom, X(scenario_u), kBottom - 12, "#333", 2);
  svg.text(X(scenario_u), kBottom - 16, strfmt("scenario %.0f%%", 100 * scenario_u), 10, "middle", "#333");
  return svg.str();
}

}  // namespace

int run_breakeven(const std::vector<std::string>& args) {
  Common c;
  std::string scenario;
  std::string svg;
  std::vector<std::string> sets;
  po::options_description d("options");
  add_common(d, c, true);
  d.add_options()("scenario", po::value<std::string>(&scenario), "scenario TOML file")(
      "svg", po::value<std::string>(&svg), "also write the picture to FILE (SVG)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a scenario key (repeatable)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim breakeven SCENARIO [--svg FILE] [--format text|json]\n"
             "Cost of a busy hour owned (hardware share over the lifetime + electricity) against renting the\n"
             "same work in the cloud, across utilization, and the break-even days at each (DESIGN §6).")) {
    return 0;
  }
  if (scenario.empty()) {
    throw UsageError("missing SCENARIO (see gpusim breakeven --help)");
  }
  if (c.format == "csv") {
    throw UsageError("--format must be text or json for breakeven");
  }
  check_format(c.format);
  const Catalog catalog = load_catalog(c.specs);
  const Scenario sc = load_scenario_file(catalog, scenario, parse_overrides(sets));
  const Estimate e = estimate(sc, catalog);
  std::vector<double> us;
  for (const double u : {0.02, 0.03}) {
    us.push_back(u);
  }
  for (int i = 1; i <= 20; ++i) {
    us.push_back(i / 20.0);
  }
  const std::vector<BreakevenPoint> curve = breakeven_curve(e.cost_inputs, us);
  const auto cross = crossover_utilization(e.cost_inputs);
  std::string text;
  if (c.format == "json") {
    detail::JsonWriter w;
    w.begin_object();
    w.value("scenario", sc.name);
    w.value("crossover_utilization", cross);
    w.begin_array("curve");
    for (const auto& p : curve) {
      w.begin_object();
      w.value("utilization", p.utilization);
      w.value("owned_usd_per_busy_hour", p.owned_per_busy_hour.value());
      w.value("cloud_usd_per_busy_hour", p.cloud_per_busy_hour.value());
      w.value("breakeven_days", p.days);
      w.end_object();
    }
    w.end_array();
    w.end_object();
    text = w.str() + "\n";
  } else {
    const CostInputs& in = e.cost_inputs;
    text = strfmt(
        "Break-even: %s\n  owned: %.0f USD over %.1f years, %.0f W at %.3g USD/kWh (PUE %.2g); cloud: %d x "
        "%.3g USD/GPU-h (%s), equal work = %.2f cloud hours per owned hour\n",
        sc.name.c_str(), in.purchase.value(), in.lifetime.value() / units::kSecondsPerYear, in.system_power.value(),
        units::to_usd_per_kwh(in.electricity), in.pue, in.gpus, units::to_usd_per_hour(in.cloud_rate),
        e.cloud_gpu.c_str(), in.job_time.value() > 0 ? in.cloud_job_time / in.job_time : 1.0);
    text += strfmt("  %11s %18s %18s %16s\n", "utilization", "owned USD/busy-h", "cloud USD/busy-h", "break-even");
    for (const auto& p : curve) {
      text += strfmt("  %10.0f%% %18.3g %18.3g %16s\n", 100 * p.utilization, p.owned_per_busy_hour.value(),
                     p.cloud_per_busy_hour.value(), p.days ? strfmt("%.0f days", *p.days).c_str() : "never");
    }
    text +=
        cross
            ? strfmt("  owning is cheaper over the lifetime above %.0f %% utilization (the scenario: %.0f %%)\n",
                     100 * *cross, 100 * e.utilization)
            : std::string("  renting is cheaper at any utilization: the electricity alone costs more than the rent\n");
  }
  if (!svg.empty()) {
    std::ofstream out(svg, std::ios::binary);
    if (!out) {
      throw InputError({Diagnostic{SourcePos{svg}, "--svg", "cannot open for writing"}});
    }
    out << picture("Owning vs renting: " + sc.name, curve, cross, e.utilization);
  }
  emit(text, c.out);
  return 0;
}

}  // namespace gpusim::cli
