// Roofline reports: an aligned table and an SVG picture (log-log axes, roofs, ridge point, ops
// sized by their share of step time). Formatting only: the numbers come from make_roofline.
#include <algorithm>
#include <cmath>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"
#include "report/svg.hpp"

namespace gpusim::report {

using explain::Roofline;
using explain::RooflinePoint;

namespace {

std::string tick(double decade) {
  const double v = std::pow(10.0, decade);
  if (v >= 1000) {
    return strfmt("%.0fk", v / 1000);
  }
  return v >= 1 ? strfmt("%.0f", v) : strfmt("%g", v);
}

}  // namespace

std::string roofline_text(const Roofline& r) {
  std::string out = "Roofline of the " + r.gpu_name + "\n";
  out += strfmt("  %-6s %16s %16s %22s\n", "roof", "paper", "achievable", "ridge vs DRAM (FLOP/B)");
  for (const auto& c : r.compute) {
    out += strfmt("  %-6s %9.1f TFLOP/s %9.1f TFLOP/s %22.0f\n", units::to_string(c.dtype),
                  units::to_teraflops(c.paper), units::to_teraflops(c.achievable), c.ridge);
  }
  for (const auto& m : r.memory) {
    out += strfmt("  %-6s %12.2f TB/s %12.2f TB/s\n", m.name.c_str(), units::to_terabytes_per_second(m.paper),
                  units::to_terabytes_per_second(m.achievable));
  }
  if (r.points.empty()) {
    return out;
  }
  out += "\n  ops of the step (kernels counted by bytes only show no FLOPs):\n";
  out += strfmt("  %-26s %-9s %12s %12s %9s %10s %-8s %6s\n", "op", "phase", "GFLOP", "MB", "FLOP/B", "TFLOP/s",
                "bound", "share");
  for (const auto& p : r.points) {
    out += strfmt("  %-26s %-9s %12.1f %12.1f %9.1f %10.1f %-8s %5.1f%%\n", p.name.c_str(),
                  lowering::to_string(p.phase), units::to_gigaflop(p.flops), units::to_megabytes(p.bytes), p.intensity,
                  units::to_teraflops(p.attained), p.compute_bound ? "compute" : "memory", 100 * p.share);
  }
  return out;
}

std::string roofline_json(const Roofline& r) {
  JsonWriter w;
  w.begin_object();
  w.value("gpu", r.gpu_id);
  w.begin_array("compute_roofs");
  for (const auto& c : r.compute) {
    w.begin_object();
    w.value("dtype", units::to_string(c.dtype));
    w.value("paper_flops", c.paper.value());
    w.value("achievable_flops", c.achievable.value());
    w.value("ridge_flop_per_byte", c.ridge);
    w.end_object();
  }
  w.end_array();
  w.begin_array("memory_roofs");
  for (const auto& m : r.memory) {
    w.begin_object();
    w.value("name", m.name);
    w.value("paper_bytes_per_s", m.paper.value());
    w.value("achievable_bytes_per_s", m.achievable.value());
    w.end_object();
  }
  w.end_array();
  w.begin_array("ops");
  for (const auto& p : r.points) {
    w.begin_object();
    w.value("name", p.name);
    w.value("phase", lowering::to_string(p.phase));
    w.value("flops", p.flops.value());
    w.value("bytes", p.bytes.value());
    w.value("intensity", p.intensity);
    w.value("attained_flops", p.attained.value());
    w.value("bound", p.compute_bound ? "compute" : "memory");
    w.value("share", p.share);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str() + "\n";
}

std::string roofline_svg(const Roofline& r) {
  constexpr double kW = 780, kH = 540, kLeft = 80, kRight = 620, kTop = 50, kBottom = 470;
  const double x_lo = -2, x_hi = 4;  // log10 FLOP/B
  const double top = r.compute.empty() ? 1e12 : r.compute.front().paper.value();
  const double y_hi = std::ceil(std::log10(top / 1e12) + 0.3);  // log10 TFLOP/s
  const double y_lo = y_hi - 5;
  auto X = [&](double intensity) { return kLeft + (std::log10(intensity) - x_lo) / (x_hi - x_lo) * (kRight - kLeft); };
  auto Y = [&](double flops) {
    const double v = std::clamp(std::log10(flops / 1e12), y_lo, y_hi);
    return kBottom - (v - y_lo) / (y_hi - y_lo) * (kBottom - kTop);
  };
  Svg svg(kW, kH);
  svg.text(kLeft, 28, "Roofline: " + r.gpu_name, 15);
  for (double d = x_lo; d <= x_hi; d += 1) {
    svg.line(X(std::pow(10, d)), kTop, X(std::pow(10, d)), kBottom, "#e5e5e5", 1);
    svg.text(X(std::pow(10, d)), kBottom + 16, tick(d), 10, "middle");
  }
  for (double d = y_lo; d <= y_hi; d += 1) {
    svg.line(kLeft, Y(std::pow(10, d) * 1e12), kRight, Y(std::pow(10, d) * 1e12), "#e5e5e5", 1);
    svg.text(kLeft - 6, Y(std::pow(10, d) * 1e12) + 4, tick(d), 10, "end");
  }
  svg.rect(kLeft, kTop, kRight - kLeft, kBottom - kTop, "none", "#888");
  svg.text((kLeft + kRight) / 2, kBottom + 36, "arithmetic intensity (FLOP per DRAM byte, log scale)", 12, "middle");
  svg.text(24, (kTop + kBottom) / 2, "attainable TFLOP/s (log scale)", 12, "middle", "#222", -90);

  const double i_lo = std::pow(10, x_lo), i_hi = std::pow(10, x_hi);
  const FlopPerSecond roof_top = r.compute.empty() ? FlopPerSecond(top) : r.compute.front().achievable;
  const char* mem_colors[] = {"#1f77b4", "#17becf"};
  for (std::size_t i = 0; i < r.memory.size(); ++i) {
    const auto& m = r.memory[i];
    const double meet = roof_top.value() / m.achievable.value();
    svg.line(X(i_lo), Y(i_lo * m.achievable.value()), X(std::min(meet, i_hi)),
             Y(std::min(meet, i_hi) * m.achievable.value()), mem_colors[i % 2], 2);
    if (i == 0) {
      svg.line(X(i_lo), Y(i_lo * m.paper.value()), X(std::min(meet, i_hi)), Y(std::min(meet, i_hi) * m.paper.value()),
               mem_colors[i % 2], 1, "5,4");
    }
    const double li = std::pow(10, x_lo + 0.6 + 0.9 * static_cast<double>(i));
    svg.text(X(li), Y(li * m.achievable.value()) - 8,
             strfmt("%s %.2f TB/s", m.name.c_str(), units::to_terabytes_per_second(m.achievable)), 10, "start",
             mem_colors[i % 2]);
  }
  const BytesPerSecond dram = r.memory.front().achievable;
  // Roofs with the same achievable rate (fp16 and bf16) share one line and one label.
  for (std::size_t i = 0; i < r.compute.size(); ++i) {
    const auto& c = r.compute[i];
    std::string names = units::to_string(c.dtype);
    bool hi = c.dtype == r.highlight;
    bool drawn_before = false;
    for (std::size_t j = 0; j < r.compute.size(); ++j) {
      if (j != i && r.compute[j].achievable == c.achievable) {
        drawn_before = drawn_before || j < i;
        names += std::string("/") + units::to_string(r.compute[j].dtype);
        hi = hi || r.compute[j].dtype == r.highlight;
      }
    }
    if (drawn_before) {
      continue;
    }
    const double ridge = c.ridge;
    const char* color = hi ? "#d62728" : "#999";
    svg.line(X(std::max(ridge, i_lo)), Y(c.achievable.value()), X(i_hi), Y(c.achievable.value()), color,
             hi ? 2.5 : 1.2);
    if (hi) {
      svg.line(X(c.paper.value() / dram.value()), Y(c.paper.value()), X(i_hi), Y(c.paper.value()), color, 1, "5,4");
      svg.line(X(ridge), Y(c.achievable.value()), X(ridge), kBottom, color, 1, "2,3");
      svg.text(X(ridge) + 4, kBottom - 6, strfmt("ridge %.0f FLOP/B", ridge), 10, "start", color);
    }
    svg.text(kRight + 6, Y(c.achievable.value()) + 4,
             strfmt("%s %.0f TFLOP/s", names.c_str(), units::to_teraflops(c.achievable)), 10, "start", color);
  }
  // Ops: the largest last so they sit on top; label the six largest.
  std::vector<const RooflinePoint*> pts;
  double hidden = 0;  // kernels without FLOPs (copies, norms counted as bytes only) cannot sit on a log axis
  for (const auto& p : r.points) {
    if (p.flops.value() > 0) {
      pts.push_back(&p);
    } else {
      hidden += p.share;
    }
  }
  if (hidden >= 0.005) {
    svg.text(kLeft, kBottom + 54,
             strfmt("not shown: kernels counted by bytes only (norms, activations, residuals, "
                    "optimizer), %.0f %% of kernel time",
                    100 * hidden),
             10, "start", "#555");
  }
  std::stable_sort(pts.begin(), pts.end(), [](const auto* a, const auto* b) { return a->share < b->share; });
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const auto& p = *pts[i];
    const double x = X(std::clamp(p.intensity, i_lo, i_hi));
    const double y = Y(p.attained.value());
    svg.circle(x, y, 3 + 22 * std::sqrt(p.share), p.compute_bound ? "#d62728" : "#1f77b4", 0.45);
    if (i + 4 >= pts.size()) {  // the four largest, staggered so their labels do not overlap
      const double dy = 12.0 * static_cast<double>(pts.size() - i);
      svg.line(x, y, x - 40, y + dy, "#999", 0.6);
      svg.text(x - 42, y + dy + 3, p.name + " " + lowering::to_string(p.phase), 9, "end", "#333");
    }
  }
  const double lx = kLeft + 10, ly = kTop + 10;
  svg.rect(lx, ly, 230, 72, "white", "#bbb");
  svg.circle(lx + 12, ly + 14, 5, "#d62728", 0.45);
  svg.text(lx + 24, ly + 18, "compute-bound op (area ~ time)", 10);
  svg.circle(lx + 12, ly + 32, 5, "#1f77b4", 0.45);
  svg.text(lx + 24, ly + 36, "memory-bound op", 10);
  svg.line(lx + 6, ly + 50, lx + 20, ly + 50, "#555", 2);
  svg.text(lx + 24, ly + 54, "achievable roof (measured efficiency)", 10);
  svg.line(lx + 6, ly + 62, lx + 20, ly + 62, "#555", 1, "5,4");
  svg.text(lx + 24, ly + 66, "paper peak", 10);
  return svg.str();
}

}  // namespace gpusim::report
