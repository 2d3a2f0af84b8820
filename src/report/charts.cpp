// The search commands' pictures: compare (relative speed and speed per dollar against a baseline
// GPU, the normalized bars of Dettmers' GPU buying guide [dettmers-2023]), sweep (a report
// metric against the varied key, one line per combination of the other keys) and plan (time to
// train against cloud cost of every layout that fits, with the frontier no layout beats on both).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/plot.hpp"

namespace gpusim::report {

namespace {

// A value read as a number when all of it is one ("8", "0.5"); nullopt for "fp8" or "a100".
std::optional<double> number(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

struct Bars {
  const char* title;
  std::vector<std::optional<double>> values;  // relative to the baseline; nullopt: not known
};

}  // namespace

std::string compare_svg(const std::vector<search::CompareRow>& rows, const std::string& baseline) {
  std::vector<const search::CompareRow*> runs;
  const search::CompareRow* base = nullptr;
  for (const auto& r : rows) {
    if (r.estimate && r.estimate->eval.memory.fits()) {
      runs.push_back(&r);
      if (r.gpu == baseline) {
        base = &r;
      }
    }
  }
  constexpr double kRow = 26, kTop = 70, kLabel = 150, kPanel = 200, kGap = 40;
  const double height = kTop + kRow * static_cast<double>(std::max<std::size_t>(runs.size(), 1)) + 60;
  Svg svg(kLabel + 3 * (kPanel + kGap) + 20, height);
  const bool serving = base != nullptr && base->estimate->eval.inference.has_value();
  svg.text(10, 24, strfmt("%s: each GPU relative to the %s (= 1)", serving ? "Serving" : "Training", baseline.c_str()),
           14);
  if (base == nullptr) {
    svg.text(10, 50, "the baseline GPU does not run this job", 12);
    return svg.str();
  }
  auto speed = [](const answer::Estimate& e) { return e.eval.tokens_per_s; };
  auto per_purchase = [&](const answer::Estimate& e) -> std::optional<double> {
    const double usd = units::to_usd(e.cost_inputs.purchase);
    return usd > 0 ? std::optional<double>(speed(e) / usd) : std::nullopt;
  };
  auto per_cloud = [](const answer::Estimate& e) -> std::optional<double> {
    const double v = answer::usd_per_million_tokens(e);
    return v > 0 ? std::optional<double>(1 / v) : std::nullopt;
  };
  const answer::Estimate& b = *base->estimate;
  Bars panels[3] = {{serving ? "output tokens/s" : "tokens/s (speed)", {}},
                    {"tokens/s per purchase USD", {}},
                    {"tokens per cloud USD", {}}};
  for (const auto* r : runs) {
    const answer::Estimate& e = *r->estimate;
    panels[0].values.emplace_back(speed(e) / speed(b));
    const auto p = per_purchase(e), pb = per_purchase(b);
    panels[1].values.push_back(p && pb ? std::optional<double>(*p / *pb) : std::nullopt);
    const auto c = per_cloud(e), cb = per_cloud(b);
    panels[2].values.push_back(c && cb ? std::optional<double>(*c / *cb) : std::nullopt);
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double y = kTop + kRow * static_cast<double>(i);
    svg.text(kLabel - 8, y + kRow / 2 + 4, runs[i]->gpu, 11, "end", runs[i] == base ? "#d62728" : "#222");
  }
  for (int k = 0; k < 3; ++k) {
    const double left = kLabel + k * (kPanel + kGap);
    double hi = 1;
    for (const auto& v : panels[k].values) {
      hi = std::max(hi, v.value_or(0));
    }
    const plot::Ticks ticks = plot::nice_ticks(0, hi, 4);
    const double x_hi = ticks.values.back();
    auto px = [&](double v) { return left + v / x_hi * kPanel; };
    svg.text(left + kPanel / 2, kTop - 24, panels[k].title, 12, "middle");
    for (const double t : ticks.values) {
      svg.line(px(t), kTop - 6, px(t), height - 50, "#eee", 1);
      svg.text(px(t), height - 36, plot::tick_label(t, ticks.step) + "×", 10, "middle");
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const double y = kTop + kRow * static_cast<double>(i);
      const auto& v = panels[k].values[i];
      if (!v) {
        svg.text(left + 4, y + kRow / 2 + 4, "no price", 10, "start", "#888");
        continue;
      }
      svg.rect(left, y + 4, px(*v) - left, kRow - 8, runs[i] == base ? "#d62728" : plot::series_color(0));
      svg.text(px(*v) + 4, y + kRow / 2 + 4, strfmt("%.2f", *v), 10, "start", "#333");
    }
    svg.line(px(1), kTop - 6, px(1), height - 50, "#555", 1, "4,3");
  }
  std::string left_out;
  for (const auto& r : rows) {
    if (!r.estimate || !r.estimate->eval.memory.fits()) {
      left_out += (left_out.empty() ? "" : ", ") + r.gpu;
    }
  }
  if (!left_out.empty()) {
    svg.text(10, 48, "not shown (the job does not fit or cannot run): " + left_out, 10, "start", "#555");
  }
  svg.text(10, height - 12,
           "purchase USD: the system's price from the [cost] table and spec files; cloud USD: the GPU's rate for "
           "the same work",
           10, "start", "#555");
  return svg.str();
}

SweepSample sweep_sample(const search::SweepPoint& p, const std::string& metric) {
  SweepSample s{p.values, std::nullopt};
  if (p.estimate && step::runs(p.estimate->eval)) {  // a point that does not fit has no figure
    s.y = answer::report_metric(*p.estimate, metric);
  }
  return s;
}

std::string sweep_svg(const std::vector<search::Axis>& axes, const std::vector<SweepSample>& points,
                      const std::string& metric) {
  Svg svg(760, 480);
  const plot::Frame f{90, 50, 560, 400};
  svg.text(f.left, 28, metric + " against " + axes.front().key, 14);
  // x: the first axis, numeric when every value is a number.
  const std::vector<std::string>& xs = axes.front().values;
  bool numeric = true;
  double x_lo = 1e300, x_hi = -1e300;
  for (const auto& v : xs) {
    const auto n = number(v);
    numeric = numeric && n.has_value();
    if (n) {
      x_lo = std::min(x_lo, *n);
      x_hi = std::max(x_hi, *n);
    }
  }
  auto x_of = [&](std::size_t i) { return numeric ? *number(xs[i]) : static_cast<double>(i + 1); };
  // Series: the other axes' values, in first-seen order.
  std::map<std::vector<std::string>, std::size_t> series_index;
  std::vector<std::vector<std::string>> series;
  std::vector<std::vector<std::pair<double, double>>> lines;
  double y_lo = 1e300, y_hi = -1e300;
  for (const auto& p : points) {
    const std::vector<std::string> rest(p.values.begin() + 1, p.values.end());
    auto [it, fresh] = series_index.try_emplace(rest, series.size());
    if (fresh) {
      series.push_back(rest);
      lines.emplace_back();
    }
    const auto at = std::find(xs.begin(), xs.end(), p.values.front());
    if (!p.y || at == xs.end()) {
      continue;  // a point that cannot run leaves a gap
    }
    const double y = *p.y;
    if (!std::isfinite(y)) {
      continue;
    }
    lines[it->second].emplace_back(x_of(static_cast<std::size_t>(at - xs.begin())), y);
    y_lo = std::min(y_lo, y);
    y_hi = std::max(y_hi, y);
  }
  if (y_hi < y_lo) {
    svg.text(f.left, f.top + 20, "no point of the sweep has this metric", 12);
    return svg.str();
  }
  const bool log_x = numeric && x_lo > 0 && x_hi / x_lo >= 16;
  const plot::Scale x = !numeric ? plot::Scale{0.5, static_cast<double>(xs.size()) + 0.5, false}
                        : log_x  ? plot::Scale{x_lo / 1.3, x_hi * 1.3, true}
                                 : plot::linear_scale(x_lo, x_hi, false);
  const bool log_y = y_lo > 0 && y_hi / y_lo >= 100;
  const plot::Scale y = log_y ? plot::log_scale(y_lo, y_hi) : plot::linear_scale(y_lo, y_hi, y_lo >= 0);
  plot::Chart ch(svg, f, x, y);
  ch.axes(axes.front().key + (log_x ? " (log scale)" : ""), metric + (log_y ? " (log scale)" : ""),
          numeric ? nullptr : &xs);
  for (std::size_t s = 0; s < lines.size(); ++s) {
    std::sort(lines[s].begin(), lines[s].end());
    ch.polyline(lines[s], plot::series_color(s), 2);
    for (const auto& [px, py] : lines[s]) {
      ch.dot(px, py, 3.5, plot::series_color(s), 1);
    }
    if (axes.size() > 1) {
      std::string name;
      for (std::size_t k = 1; k < axes.size(); ++k) {
        name += (k == 1 ? "" : ", ") + axes[k].key + " = " + series[s][k - 1];
      }
      const double ly = f.top + 10 + 16.0 * static_cast<double>(s);
      svg.line(f.right + 12, ly - 4, f.right + 30, ly - 4, plot::series_color(s), 2);
      svg.text(f.right + 34, ly, name, 10);
    }
  }
  return svg.str();
}

std::string plan_svg(const scenario::Scenario& sc, const search::PlanResult& r) {
  Svg svg(760, 480);
  const plot::Frame f{90, 50, 700, 400};
  svg.text(f.left, 28, "Layouts that fit: time to train against cloud cost — " + sc.name, 14);
  if (r.feasible.empty()) {
    svg.text(f.left, f.top + 20, "no layout fits", 12);
    return svg.str();
  }
  double t_lo = 1e300, t_hi = 0, c_lo = 1e300, c_hi = 0;
  for (const auto& p : r.feasible) {
    t_lo = std::min(t_lo, units::to_hours(p.job_time));
    t_hi = std::max(t_hi, units::to_hours(p.job_time));
    c_lo = std::min(c_lo, units::to_usd(p.cloud));
    c_hi = std::max(c_hi, units::to_usd(p.cloud));
  }
  // A little room around the points, so none sits on the frame.
  plot::Chart ch(svg, f, plot::log_scale(t_lo / 1.15, t_hi * 1.15), plot::log_scale(c_lo / 1.15, c_hi * 1.15));
  ch.axes("time to train (hours, log scale)", "cloud cost (USD, log scale)");
  // The frontier: sorted by time, each layout cheaper than every faster one.
  std::vector<search::PlanPoint> sorted = r.feasible;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.job_time < b.job_time || (a.job_time == b.job_time && a.cloud < b.cloud);
  });
  std::vector<std::pair<double, double>> frontier;
  double cheapest = 1e300;
  for (const auto& p : r.feasible) {
    ch.dot(units::to_hours(p.job_time), units::to_usd(p.cloud), 2.2, "#999999", 0.5);
  }
  for (const auto& p : sorted) {
    if (units::to_usd(p.cloud) < cheapest) {
      cheapest = units::to_usd(p.cloud);
      frontier.emplace_back(units::to_hours(p.job_time), cheapest);
    }
  }
  ch.polyline(frontier, "#1f77b4", 2);
  for (const auto& [t, c] : frontier) {
    ch.dot(t, c, 4, "#1f77b4", 1);
  }
  if (!r.best.empty()) {
    const search::PlanRow& b = r.best.front();
    const double t = units::to_hours(b.eval.job_time), c = units::to_usd(b.cloud);
    ch.dot(t, c, 6, "#d62728", 1);
    svg.text(ch.px(t) + 8, ch.py(c) + 18,
             strfmt("best: %d GPUs t%d p%d d%d, %s, %s", b.gpus, b.layout.tensor, b.layout.pipeline, b.layout.data,
                    duration(b.eval.job_time).c_str(), money(c).c_str()),
             10, "start", "#d62728");
  }
  svg.text(
      f.left, f.bottom + 60,
      strfmt("%zu layouts that fit (grey); blue: the frontier, no layout both faster and cheaper", r.feasible.size()),
      10, "start", "#555");
  return svg.str();
}

}  // namespace gpusim::report
