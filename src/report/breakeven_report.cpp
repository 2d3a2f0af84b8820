// Owning against renting across utilization: a table, JSON and an SVG picture.
#include <algorithm>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"
#include "report/svg.hpp"

namespace gpusim::report {

Breakeven breakeven_of(const answer::Estimate& e) {
  Breakeven b;
  b.scenario = e.scenario;
  b.inputs = e.cost_inputs;
  b.cloud_gpu = e.cloud_gpu;
  b.utilization = e.utilization;
  // Fine steps at low utilization, where owning changes fastest, then every 5 %.
  std::vector<double> us{0.02, 0.03};
  for (int i = 1; i <= 20; ++i) {
    us.push_back(i / 20.0);
  }
  b.curve = cost::breakeven_curve(e.cost_inputs, us);
  b.crossover = cost::crossover_utilization(e.cost_inputs);
  return b;
}

std::string breakeven_text(const Breakeven& b) {
  const cost::CostInputs& in = b.inputs;
  std::string text = strfmt(
      "Break-even: %s\n  owned: %.0f USD over %.1f years, %.0f W at %.3g USD/kWh (PUE %.2g); cloud: %d x "
      "%.3g USD/GPU-h (%s), equal work = %.2f cloud hours per owned hour\n",
      b.scenario.c_str(), units::to_usd(in.purchase), units::to_years(in.lifetime), units::to_watts(in.system_power),
      units::to_usd_per_kwh(in.electricity), in.pue, in.gpus, units::to_usd_per_hour(in.cloud_rate),
      b.cloud_gpu.c_str(), in.job_time.value() > 0 ? in.cloud_job_time / in.job_time : 1.0);
  text += strfmt("  %11s %18s %18s %16s\n", "utilization", "owned USD/busy-h", "cloud USD/busy-h", "break-even");
  for (const auto& p : b.curve) {
    text += strfmt("  %10.0f%% %18.3g %18.3g %16s\n", pct(p.utilization), units::to_usd(p.owned_per_busy_hour),
                   units::to_usd(p.cloud_per_busy_hour),
                   p.breakeven ? strfmt("%.0f days", units::to_days(*p.breakeven)).c_str() : "never");
  }
  text +=
      b.crossover
          ? strfmt("  owning is cheaper over the lifetime above %.0f %% utilization (the scenario: %.0f %%)\n",
                   pct(*b.crossover), pct(b.utilization))
          : std::string("  renting is cheaper at any utilization: the electricity alone costs more than the rent\n");
  return text;
}

std::string breakeven_json(const Breakeven& b) {
  JsonWriter w;
  w.begin_object();
  w.value("scenario", b.scenario);
  w.value("crossover_utilization", b.crossover);
  w.begin_array("curve");
  for (const auto& p : b.curve) {
    w.begin_object();
    w.value("utilization", p.utilization);
    w.value("owned_usd_per_busy_hour", units::to_usd(p.owned_per_busy_hour));
    w.value("cloud_usd_per_busy_hour", units::to_usd(p.cloud_per_busy_hour));
    w.value("breakeven_days", p.breakeven ? std::optional<double>(units::to_days(*p.breakeven)) : std::nullopt);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str() + "\n";
}

std::string breakeven_svg(const Breakeven& b) {
  const std::vector<cost::BreakevenPoint>& curve = b.curve;
  constexpr double kW = 720, kH = 460, kLeft = 80, kRight = 660, kTop = 50, kBottom = 390;
  double y_max = 0;
  for (const auto& p : curve) {
    y_max = std::max({y_max, p.cloud_per_busy_hour.value() * 2.0, std::min(p.owned_per_busy_hour.value(), 1e300)});
  }
  y_max = std::min(y_max, 3.0 * curve.front().cloud_per_busy_hour.value());
  auto X = [&](double u) { return kLeft + u * (kRight - kLeft); };
  auto Y = [&](double usd) { return kBottom - std::min(usd / y_max, 1.0) * (kBottom - kTop); };
  Svg svg(kW, kH);
  svg.text(kLeft, 28, "Owning vs renting: " + b.scenario, 14);
  svg.rect(kLeft, kTop, kRight - kLeft, kBottom - kTop, "none", "#888");
  for (int i = 0; i <= 10; ++i) {
    const double u = i / 10.0;
    svg.line(X(u), kTop, X(u), kBottom, "#eee", 1);
    svg.text(X(u), kBottom + 16, strfmt("%.0f%%", pct(u)), 10, "middle");
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
  if (b.crossover && *b.crossover <= 1.0) {
    svg.line(X(*b.crossover), kTop, X(*b.crossover), kBottom, "#2ca02c", 1.2, "4,3");
    svg.text(X(*b.crossover) + 4, kTop + 14, strfmt("owning pays back above %.0f%%", pct(*b.crossover)), 11, "start",
             "#2ca02c");
  }
  svg.line(X(b.utilization), kBottom, X(b.utilization), kBottom - 12, "#333", 2);
  svg.text(X(b.utilization), kBottom - 16, strfmt("scenario %.0f%%", pct(b.utilization)), 10, "middle", "#333");
  return svg.str();
}

}  // namespace gpusim::report
