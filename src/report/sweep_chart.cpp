// The sweep picture: a report metric against the first varied key, one series per combination of
// the others, each with its own colour, marker and dash (so series that coincide stay told
// apart), and a cross on the axis for each point that did not run.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>

#include "gpusim/report.hpp"
#include "report/chart_words.hpp"
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

bool varies(const std::vector<search::Axis>& axes, const std::string& key) {
  return std::any_of(axes.begin(), axes.end(), [&](const search::Axis& a) { return a.key == key; });
}

constexpr double kW = 760;
constexpr plot::Frame kFrame{90, 58, 520, 400};
constexpr double kMarkerR = 3.5;

}  // namespace

SweepSample sweep_sample(const search::SweepPoint& p, const std::string& metric) {
  SweepSample s{p.values, std::nullopt};
  if (p.estimate && step::runs(p.estimate->eval)) {  // a point that does not fit has no figure
    s.y = answer::report_metric(*p.estimate, metric);
  }
  return s;
}

std::string sweep_run_words(const search::SweepPoint& p, const std::vector<search::Axis>& axes) {
  if (!p.estimate) {
    return "";
  }
  RunParts r = run_parts(*p.estimate);
  // What the sweep varies is no fixed part of the run.
  if (varies(axes, "system.gpu")) {
    r.gpu = "each GPU";
  }
  if (varies(axes, "system.gpus") || varies(axes, "system.gpu")) {
    r.gpus = 0;
  }
  if (varies(axes, "system.gpus") || varies(axes, "parallelism.tensor") || varies(axes, "parallelism.pipeline") ||
      varies(axes, "parallelism.data")) {
    r.layout.reset();
  }
  if (varies(axes, "runtime.name")) {
    r.runtime.clear();
  }
  if (varies(axes, "training.precision") || varies(axes, "inference.weight_precision")) {
    r.precision.clear();
  }
  return run_words(r);
}

std::string sweep_svg(const std::vector<search::Axis>& axes, const std::vector<SweepSample>& points,
                      const std::string& metric, const std::string& run) {
  Svg svg(kW, 480);
  const plot::Frame f = kFrame;
  const std::string x_key = axes.front().key;
  std::string what = metric_words(metric);
  what = what.substr(0, what.find(" ("));
  what[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(what[0])));
  plot::title(svg, plot::kMargin, 22, what + " against " + key_name(x_key), plot::kTitleSize, kW - plot::kMargin);
  std::string varied;
  for (const auto& a : axes) {
    varied += (varied.empty() ? "" : ", ") + key_name(a.key);
  }
  plot::title(svg, plot::kMargin, 40, (run.empty() ? "" : run + " · ") + "varied: " + varied, plot::kSubtitleSize,
              kW - plot::kMargin, "#555");
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
  std::vector<std::vector<double>> failed;  // per series, the x of each point that did not run
  double y_lo = 1e300, y_hi = -1e300;
  for (const auto& p : points) {
    const std::vector<std::string> rest(p.values.begin() + 1, p.values.end());
    auto [it, fresh] = series_index.try_emplace(rest, series.size());
    if (fresh) {
      series.push_back(rest);
      lines.emplace_back();
      failed.emplace_back();
    }
    const auto at = std::find(xs.begin(), xs.end(), p.values.front());
    if (at == xs.end()) {
      continue;
    }
    const double x = x_of(static_cast<std::size_t>(at - xs.begin()));
    if (!p.y || !std::isfinite(*p.y)) {
      failed[it->second].push_back(x);
      continue;
    }
    lines[it->second].emplace_back(x, *p.y);
    y_lo = std::min(y_lo, *p.y);
    y_hi = std::max(y_hi, *p.y);
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
  std::string x_title = key_words(x_key, numeric);
  if (log_x) {
    x_title.insert(x_title.size() - 1, ", log scale");
  }
  std::string y_title = metric_words(metric);
  if (log_y) {
    y_title.insert(y_title.size() - 1, ", log scale");
  }
  ch.axes(x_title, y_title, numeric ? nullptr : &xs);
  // The legend at the right of the frame: one row per series, its line and marker.
  const double lx = f.right + 12;
  double ly = f.top + 10;
  bool any_failed = false;
  for (std::size_t s = 0; s < lines.size(); ++s) {
    any_failed = any_failed || !failed[s].empty();
    if (axes.size() < 2) {
      continue;
    }
    std::string name;
    for (std::size_t k = 1; k < axes.size(); ++k) {
      name += (k == 1 ? "" : ", ") + key_name(axes[k].key) + " = " + series[s][k - 1];
    }
    svg.line(lx, ly - 4, lx + 22, ly - 4, plot::series_color(s), 2, plot::series_dash(s));
    plot::marker(svg, lx + 11, ly - 4, kMarkerR, s, plot::series_color(s));
    plot::title(svg, lx + 28, ly, name, 10, kW - plot::kMargin);
    ly += 16;
  }
  if (any_failed) {
    plot::cross(svg, lx + 11, ly - 4, kMarkerR, "#d62728");
    svg.text(lx + 28, ly, "did not run (at the axis)", 10, "start", "#d62728");
  }
  // Markers of series that coincide would hide one another: each series' markers are moved
  // sideways by a little (a dodge), centred on the true x; the lines stay on it.
  const double dodge = lines.size() > 1 ? std::min(kMarkerR, 12.0 / static_cast<double>(lines.size())) : 0;
  for (std::size_t s = 0; s < lines.size(); ++s) {
    std::sort(lines[s].begin(), lines[s].end());
    ch.polyline(lines[s], plot::series_color(s), 2, plot::series_dash(s));
    const double dx = dodge * (static_cast<double>(s) - static_cast<double>(lines.size() - 1) / 2);
    for (const auto& [px, py] : lines[s]) {
      if (ch.inside(px, py)) {
        plot::marker(svg, std::clamp(ch.px(px) + dx, f.left, f.right), ch.py(py), kMarkerR, s, plot::series_color(s));
      }
    }
  }
  // Points that did not run: a cross on the x axis, inside the frame, once per x.
  plot::Labels labels(svg, {f.left, f.top, f.right, f.bottom});
  std::vector<double> crossed;
  for (const auto& fx : failed) {
    for (const double v : fx) {
      if (std::find(crossed.begin(), crossed.end(), v) == crossed.end()) {
        crossed.push_back(v);
        plot::cross(svg, ch.px(v), f.bottom - kMarkerR - 2, kMarkerR, "#d62728");
        labels.avoid_marker(ch.px(v), f.bottom - kMarkerR - 2, kMarkerR);
      }
    }
  }
  for (const double v : crossed) {  // labelled where there is room; the legend names the cross anyway
    labels.place(ch.px(v), f.bottom - kMarkerR - 2, kMarkerR + 1, "did not run", 9, "#d62728");
  }
  return svg.str();
}

}  // namespace gpusim::report
