// Owning against renting across utilization: a table, JSON and an SVG picture.
#include <algorithm>
#include <cmath>

#include "gpusim/report.hpp"
#include "report/chart_words.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"
#include "report/plot.hpp"
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
  b.breakeven_at_scenario = e.cost.breakeven;
  b.run = run_words(run_parts(e));
  // The picture's curves: every half percent, and the crossover itself, so the curve passes
  // through its own mark.
  std::vector<double> dense;
  for (int i = 1; i <= 200; ++i) {
    dense.push_back(i / 200.0);
  }
  if (b.crossover && *b.crossover > 0 && *b.crossover < 1) {
    dense.insert(std::upper_bound(dense.begin(), dense.end(), *b.crossover), *b.crossover);
  }
  b.dense = cost::breakeven_curve(e.cost_inputs, dense);
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
  text += strfmt("  %11s %18s %18s  %s\n", "utilization", "owned USD/busy-h", "cloud USD/busy-h", "break-even");
  for (const auto& p : b.curve) {
    text += strfmt("  %10.0f%% %18.3g %18.3g  %s\n", pct(p.utilization), units::to_usd(p.owned_per_busy_hour),
                   units::to_usd(p.cloud_per_busy_hour), breakeven_words(p.breakeven, in.lifetime).c_str());
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
  return w.take() + "\n";
}

namespace {
// A line's label is placed about a point this far above the line, so that it does not sit on it.
constexpr double kAboveLine = 9;

// The owned cost of one busy hour at utilization u, from the dense curve (its nearest point).
double owned_at(const Breakeven& b, double u) {
  const auto it = std::min_element(b.dense.begin(), b.dense.end(), [u](const auto& p, const auto& q) {
    return std::abs(p.utilization - u) < std::abs(q.utilization - u);
  });
  return units::to_usd(it->owned_per_busy_hour);
}
}  // namespace

// Two panels over utilization: the cost of one busy hour owned and rented (they cross where
// owning pays back over the lifetime), and the ownership time after which buying wins, against
// the lifetime (the same crossover, seen as time).
std::string breakeven_svg(const Breakeven& b) {
  constexpr double kW = 760;
  constexpr plot::Frame kCost{90, 58, 640, 310};
  constexpr plot::Frame kTime{90, 400, 640, 640};
  Svg svg(kW, 720);
  plot::title(svg, plot::kMargin, 22, "Owning vs renting: " + (b.run.empty() ? b.scenario : b.run), plot::kTitleSize,
              kW - plot::kMargin);
  plot::title(svg, plot::kMargin, 40, b.scenario, plot::kSubtitleSize, kW - plot::kMargin, "#555");
  if (b.dense.empty()) {
    return svg.str();
  }
  const double cloud = units::to_usd(b.dense.front().cloud_per_busy_hour);
  const double owned_full = units::to_usd(b.dense.back().owned_per_busy_hour);
  const plot::Scale x{0, 100, false};
  plot::Chart cost_chart(svg, kCost, x, plot::linear_scale(0, std::max(2.0 * cloud, 1.3 * owned_full)));
  cost_chart.axes("utilization of the owned system (% of the year busy)", "cost per busy hour (USD/h)");
  std::vector<std::pair<double, double>> owned;
  for (const auto& p : b.dense) {
    owned.emplace_back(pct(p.utilization), units::to_usd(p.owned_per_busy_hour));
  }
  cost_chart.polyline(owned, "#1f77b4", 2.5);
  cost_chart.line(0, cloud, 100, cloud, "#d62728", 2.5);
  plot::Labels cost_labels(svg, {kCost.left, kCost.top, kCost.right, kCost.bottom});
  svg.line(cost_chart.px(pct(b.utilization)), kCost.bottom, cost_chart.px(pct(b.utilization)), kCost.bottom - 12,
           "#333", 2);
  svg.text(cost_chart.px(pct(b.utilization)), kCost.bottom - 16, strfmt("scenario %.0f%%", pct(b.utilization)), 10,
           "middle", "#333");
  cost_labels.place(cost_chart.px(96), cost_chart.py(cloud) - kAboveLine, 2, strfmt("cloud %s/h", money(cloud).c_str()),
                    11, "#d62728");
  cost_labels.place(cost_chart.px(70), cost_chart.py(owned_at(b, 0.7)) - kAboveLine, 2,
                    "owned: hardware share + electricity", 11, "#1f77b4");
  const bool crosses = b.crossover && *b.crossover <= 1.0;
  if (crosses) {
    cost_chart.line(pct(*b.crossover), cost_chart.y().lo, pct(*b.crossover), cost_chart.y().hi, "#2ca02c", 1.2, "4,3");
    cost_chart.dot(pct(*b.crossover), cloud, 4, "#2ca02c", 1);
    cost_labels.place(cost_chart.px(pct(*b.crossover)), kCost.top + 10, 2,
                      strfmt("owning pays back above %.0f%%", pct(*b.crossover)), 11, "#2ca02c");
  }

  // Break-even time against the lifetime, in days on a log axis.
  const double life = units::to_days(b.inputs.lifetime);
  double lo = life / 10, hi = life * 10;
  std::vector<std::pair<double, double>> days;
  for (const auto& p : b.dense) {
    if (p.breakeven) {
      days.emplace_back(pct(p.utilization), units::to_days(*p.breakeven));
      lo = std::min(lo, days.back().second);
    }
  }
  svg.text(kTime.left, kTime.top - 14, "Time until buying beats renting", 13);
  plot::Chart time_chart(svg, kTime, x, plot::log_scale(lo, hi));
  time_chart.axes("utilization of the owned system (% of the year busy)", "break-even (days, log scale)");
  time_chart.polyline(days, "#1f77b4", 2.5);
  time_chart.line(0, life, 100, life, "#555", 1.5, "6,4");
  plot::Labels time_labels(svg, {kTime.left, kTime.top, kTime.right, kTime.bottom});
  time_labels.place(
      time_chart.px(96), time_chart.py(life) - kAboveLine, 2,
      strfmt("lifetime %.3g years: a later break-even never pays back", units::to_years(b.inputs.lifetime)), 11,
      "#555");
  if (crosses) {
    time_chart.line(pct(*b.crossover), time_chart.y().lo, pct(*b.crossover), time_chart.y().hi, "#2ca02c", 1.2, "4,3");
    time_chart.dot(pct(*b.crossover), life, 4, "#2ca02c", 1);
  }
  if (b.breakeven_at_scenario) {
    const double d = units::to_days(*b.breakeven_at_scenario);
    if (time_chart.dot(pct(b.utilization), d, 4.5, "#333", 1)) {
      time_labels.place(time_chart.px(pct(b.utilization)), time_chart.py(d), 4.5,
                        strfmt("scenario: %s", breakeven_words(b.breakeven_at_scenario, b.inputs.lifetime).c_str()), 10,
                        "#333");
    }
  }
  return svg.str();
}

}  // namespace gpusim::report
