// Chart geometry shared by every SVG gpusim draws (see report/plot.hpp for the rules and sources).
#include "report/plot.hpp"

#include <algorithm>
#include <cmath>

namespace gpusim::report::plot {

namespace {

// Heckbert's nicenum: the nice number near x, rounded (for a step) or taken up (for a range).
double nice_number(double x, bool round) {
  const double exp = std::floor(std::log10(x));
  const double f = x / std::pow(10.0, exp);
  double nf = 10;
  if (round) {
    nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  } else {
    nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  }
  return nf * std::pow(10.0, exp);
}

// Multiples of 1000 named as people read them.
struct Prefix {
  double div;
  const char* suffix;
};
constexpr Prefix kPrefixes[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};

}  // namespace

Ticks nice_ticks(double lo, double hi, int target) {
  Ticks t;
  const double range = nice_number(hi - lo, false);
  t.step = nice_number(range / std::max(1, target - 1), true);
  const double first = std::floor(lo / t.step + 1e-9);
  const double last = std::ceil(hi / t.step - 1e-9);
  for (double k = first; k <= last; k += 1) {
    const double v = k * t.step;  // k × step, not a running sum, so ticks carry no accumulated error
    t.values.push_back(std::abs(v) < t.step * 1e-9 ? 0.0 : v);
  }
  return t;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  const double d0 = std::floor(std::log10(lo));
  const double d1 = std::ceil(std::log10(hi));
  const bool fine = d1 - d0 < 3;
  for (double d = d0; d <= d1; d += 1) {
    for (const double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !fine) {
        continue;
      }
      const double v = m * std::pow(10.0, d);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) {
        out.push_back(v);
      }
    }
  }
  return out;
}

std::string tick_label(double v, double step) {
  if (v == 0.0) {
    return "0";
  }
  double div = 1;
  const char* suffix = "";
  for (const Prefix& p : kPrefixes) {
    if (std::abs(v) >= p.div) {
      div = p.div;
      suffix = p.suffix;
      break;
    }
  }
  if (step <= 0) {
    return strfmt("%.3g%s", v / div, suffix);
  }
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step / div) + 1e-9)));
  return strfmt("%.*f%s", decimals, v / div, suffix);
}

double Scale::axis(double v) const { return log ? std::log10(v) : v; }

Scale linear_scale(double lo, double hi, bool from_zero) {
  if (from_zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  if (!(hi > lo)) {
    hi = lo + (lo != 0.0 ? std::abs(lo) : 1.0);
  }
  const Ticks t = nice_ticks(lo, hi);
  return {t.values.front(), t.values.back(), false};
}

Scale log_scale(double lo, double hi) {
  if (hi / lo < 100) {
    // Less than two decades of data: 1-2-5 bounds around it rather than whole decades, so the
    // points do not crowd into a corner.
    auto down = [](double v) {
      const double d = std::pow(10.0, std::floor(std::log10(v)));
      return v >= 5 * d ? 5 * d : v >= 2 * d ? 2 * d : d;
    };
    auto up = [](double v) {
      const double d = std::pow(10.0, std::floor(std::log10(v)));
      return v <= d ? d : v <= 2 * d ? 2 * d : v <= 5 * d ? 5 * d : 10 * d;
    };
    const double a = down(lo);
    const double b = up(hi);
    return {a, b > a ? b : up(a * 1.0001), true};
  }
  const double d0 = std::floor(std::log10(lo));
  const double d1 = std::max(d0 + 1, std::ceil(std::log10(hi)));
  return {std::pow(10.0, d0), std::pow(10.0, d1), true};
}

std::optional<Segment> clip(Segment s, const Scale& x, const Scale& y) {
  if (x.log && (s.x1 <= 0 || s.x2 <= 0)) {
    return std::nullopt;
  }
  if (y.log && (s.y1 <= 0 || s.y2 <= 0)) {
    return std::nullopt;
  }
  const double x1 = x.axis(s.x1), y1 = y.axis(s.y1), x2 = x.axis(s.x2), y2 = y.axis(s.y2);
  const double dx = x2 - x1, dy = y2 - y1;
  // Liang–Barsky: p_k · t ≤ q_k for the four edges.
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {x1 - x.axis(x.lo), x.axis(x.hi) - x1, y1 - y.axis(y.lo), y.axis(y.hi) - y1};
  double t0 = 0, t1 = 1;
  for (int k = 0; k < 4; ++k) {
    if (p[k] == 0) {
      if (q[k] < 0) {
        return std::nullopt;  // parallel to this edge and outside it
      }
      continue;
    }
    const double t = q[k] / p[k];
    if (p[k] < 0) {
      t0 = std::max(t0, t);
    } else {
      t1 = std::min(t1, t);
    }
  }
  if (t0 > t1) {
    return std::nullopt;
  }
  return Segment{x1 + t0 * dx, y1 + t0 * dy, x1 + t1 * dx, y1 + t1 * dy};
}

namespace {

// The ticks inside a scale's range with their labels: decades (and 2, 5) on a log scale, nice
// steps on a linear one.
std::vector<std::pair<double, std::string>> labelled_ticks(const Scale& sc) {
  std::vector<std::pair<double, std::string>> out;
  if (sc.log) {
    for (const double v : log_ticks(sc.lo, sc.hi)) {
      out.emplace_back(v, tick_label(v));
    }
    return out;
  }
  const Ticks t = nice_ticks(sc.lo, sc.hi);
  for (const double v : t.values) {
    if (v >= sc.lo - t.step * 1e-9 && v <= sc.hi + t.step * 1e-9) {
      out.emplace_back(v, tick_label(v, t.step));
    }
  }
  return out;
}

}  // namespace

double Chart::px(double x) const {
  return f_.left + (x_.axis(x) - x_.axis(x_.lo)) / (x_.axis(x_.hi) - x_.axis(x_.lo)) * (f_.right - f_.left);
}

double Chart::py(double y) const {
  return f_.bottom - (y_.axis(y) - y_.axis(y_.lo)) / (y_.axis(y_.hi) - y_.axis(y_.lo)) * (f_.bottom - f_.top);
}

bool Chart::inside(double x, double y) const {
  if ((x_.log && x <= 0) || (y_.log && y <= 0) || !std::isfinite(x) || !std::isfinite(y)) {
    return false;
  }
  return x >= x_.lo * (1 - 1e-12) && x <= x_.hi * (1 + 1e-12) && y >= y_.lo - std::abs(y_.lo) * 1e-12 &&
         y <= y_.hi + std::abs(y_.hi) * 1e-12;
}

void Chart::axes(const std::string& x_title, const std::string& y_title, const std::vector<std::string>* x_labels) {
  // Categorical labels too wide for their slot alternate between two rows.
  constexpr double kTickRow = 16;
  constexpr double kSecondRow = 12;
  double last_right = -1e300;
  bool staggered = false;
  bool second = false;
  auto grid_x = [&](double v, const std::string& label) {
    svg_.line(px(v), f_.top, px(v), f_.bottom, "#e5e5e5", 1);
    const Box b = text_box(px(v), f_.bottom + kTickRow, label, 10, Anchor::kMiddle);
    second = !second && b.left < last_right + 2;
    staggered = staggered || second;
    svg_.text(px(v), f_.bottom + kTickRow + (second ? kSecondRow : 0), label, 10, "middle");
    if (!second) {
      last_right = b.right;
    }
  };
  auto grid_y = [&](double v, const std::string& label) {
    svg_.line(f_.left, py(v), f_.right, py(v), "#e5e5e5", 1);
    svg_.text(f_.left - 6, py(v) + 4, label, 10, "end");
  };
  if (x_labels != nullptr) {
    for (std::size_t i = 0; i < x_labels->size(); ++i) {
      grid_x(static_cast<double>(i + 1), (*x_labels)[i]);
    }
  } else {
    for (const auto& [v, label] : labelled_ticks(x_)) {
      grid_x(v, label);
    }
  }
  for (const auto& [v, label] : labelled_ticks(y_)) {
    grid_y(v, label);
  }
  svg_.rect(f_.left, f_.top, f_.right - f_.left, f_.bottom - f_.top, "none", "#888");
  svg_.text((f_.left + f_.right) / 2, f_.bottom + (staggered ? 48 : 36), x_title, 12, "middle", "#222", 0,
            "axis-title");
  svg_.text(f_.left - 56, (f_.top + f_.bottom) / 2, y_title, 12, "middle", "#222", -90, "axis-title");
}

std::optional<std::pair<std::pair<double, double>, std::pair<double, double>>> Chart::clipped(double x1, double y1,
                                                                                              double x2,
                                                                                              double y2) const {
  const std::optional<Segment> s = clip({x1, y1, x2, y2}, x_, y_);
  if (!s) {
    return std::nullopt;
  }
  auto ax = [&](double a) {
    return f_.left + (a - x_.axis(x_.lo)) / (x_.axis(x_.hi) - x_.axis(x_.lo)) * (f_.right - f_.left);
  };
  auto ay = [&](double a) {
    return f_.bottom - (a - y_.axis(y_.lo)) / (y_.axis(y_.hi) - y_.axis(y_.lo)) * (f_.bottom - f_.top);
  };
  return std::make_pair(std::make_pair(ax(s->x1), ay(s->y1)), std::make_pair(ax(s->x2), ay(s->y2)));
}

bool Chart::line(double x1, double y1, double x2, double y2, const char* stroke, double width, const char* dash) {
  const auto s = clipped(x1, y1, x2, y2);
  if (!s) {
    return false;
  }
  svg_.line(s->first.first, s->first.second, s->second.first, s->second.second, stroke, width, dash);
  return true;
}

void Chart::polyline(const std::vector<std::pair<double, double>>& pts, const char* stroke, double width,
                     const char* dash) {
  // Visible pieces that join are drawn as one polyline; a piece that leaves the frame ends it.
  std::vector<std::pair<double, double>> run;
  auto flush = [&] {
    if (run.size() >= 2) {
      svg_.polyline(run, stroke, width, dash);
    }
    run.clear();
  };
  for (std::size_t i = 1; i < pts.size(); ++i) {
    const auto s = clipped(pts[i - 1].first, pts[i - 1].second, pts[i].first, pts[i].second);
    if (!s) {
      flush();
      continue;
    }
    const bool joins = !run.empty() && std::abs(run.back().first - s->first.first) < 1e-6 &&
                       std::abs(run.back().second - s->first.second) < 1e-6;
    if (!joins) {
      flush();
      run.push_back(s->first);
    }
    run.push_back(s->second);
  }
  flush();
}

bool Chart::dot(double x, double y, double r, const char* fill, double opacity) {
  if (!inside(x, y)) {
    return false;
  }
  svg_.circle(px(x), py(y), r, fill, opacity);
  return true;
}

bool Labels::place(double x, double y, double r, const std::string& text, double size, const char* fill) {
  std::vector<Box> taken = avoid_;
  for (const Svg::TextBox& t : svg_.text_boxes()) {
    taken.push_back(t.box);
  }
  const std::optional<Placement> p = place_label(x, y, r, text, size, taken, bounds_);
  if (!p) {
    return false;
  }
  if (p->leader) {
    svg_.line(x, y, p->leader_x, p->leader_y, "#aaa", 0.6);
  }
  svg_.text(p->x, p->y, text, size,
            p->anchor == Anchor::kStart ? "start"
            : p->anchor == Anchor::kEnd ? "end"
                                        : "middle",
            fill);
  return true;
}

void title(Svg& svg, double x, double y, const std::string& text, double size, double right, const char* fill,
           const char* role) {
  const double room = right - x;
  while (size > kMinTitleSize && text_width(text, size) > room) {
    size -= 0.5;
  }
  // Cut at a word, with an ellipsis, when even the smallest size is too wide.
  std::vector<std::string> words;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t space = std::min(text.find(' ', start), text.size());
    words.push_back(text.substr(start, space - start));
    start = space + 1;
  }
  std::string shown = text;
  for (std::size_t n = words.size(); n > 1 && text_width(shown, size) > room; --n) {
    shown.clear();
    for (std::size_t i = 0; i + 1 < n; ++i) {
      shown += words[i] + " ";
    }
    shown += "…";
  }
  svg.text(x, y, shown, std::floor(size), "start", fill, 0, role);
}

double key_lines(Svg& svg, double x, double y, double right, const std::string& lead,
                 const std::vector<std::string>& items, double size, const char* fill) {
  const double line_height = size * 1.4;
  std::string current = lead;
  auto flush = [&] {
    svg.grow_to(y + size + kMargin);  // the descent and the margin
    svg.text(x, y, current, size, "start", fill);
    y += line_height;
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string piece = items[i] + (i + 1 < items.size() ? ";" : "");
    const std::string joined = current + (current.empty() ? "" : " ") + piece;
    if (!current.empty() && text_width(joined, size) > right - x) {
      flush();
      current = piece;
    } else {
      current = joined;
    }
  }
  if (!current.empty()) {
    flush();
  }
  return y;
}

void marker(Svg& svg, double x, double y, double r, std::size_t series, const char* fill) {
  switch (series % 4) {
    case 0:
      svg.circle(x, y, r, fill, 1);
      break;
    case 1:
      svg.rect(x - r * 0.9, y - r * 0.9, r * 1.8, r * 1.8, fill);
      break;
    case 2:
      svg.polygon({{x, y - r * 1.15}, {x + r, y + r * 0.75}, {x - r, y + r * 0.75}}, fill);
      break;
    default:
      svg.polygon({{x, y - r * 1.2}, {x + r * 1.2, y}, {x, y + r * 1.2}, {x - r * 1.2, y}}, fill);
  }
}

const char* series_dash(std::size_t series) {
  static const char* const kDashes[] = {nullptr, "7,3", "2,2", "9,3,2,3"};
  return kDashes[series % 4];
}

void cross(Svg& svg, double x, double y, double r, const char* stroke) {
  svg.line(x - r, y - r, x + r, y + r, stroke, 2);
  svg.line(x - r, y + r, x + r, y - r, stroke, 2);
}

const char* series_color(std::size_t i) {
  static const char* const kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                        "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kColors[i % 10];
}

}  // namespace gpusim::report::plot
