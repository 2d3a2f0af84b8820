// Roofline reports: an aligned table and an SVG picture (log-log axes, roofs, ridge point, ops
// sized by their share of step time). Formatting only: the numbers come from make_roofline.
#include <algorithm>
#include <cmath>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"
#include "report/plot.hpp"
#include "report/svg.hpp"

namespace gpusim::report {

using explain::Roofline;
using explain::RooflinePoint;

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
    w.value("attained_bytes_per_s", p.bandwidth.value());
    w.value("bound", p.compute_bound ? "compute" : "memory");
    w.value("share", p.share);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.take() + "\n";
}

std::string roofline_text(const std::vector<Roofline>& rs) {
  std::string text;
  for (const Roofline& r : rs) {
    if (!text.empty()) {
      text += '\n';
    }
    text += roofline_text(r);
  }
  return text;
}

std::string roofline_json(const std::vector<Roofline>& rs) {
  if (rs.size() == 1) {
    return roofline_json(rs.front());
  }
  std::string json = "[\n";
  for (const Roofline& r : rs) {
    std::string one = roofline_json(r);
    one.pop_back();  // its newline: the array separates its items
    if (json.size() > 2) {
      json += ",\n";
    }
    json += one;
  }
  return json + "\n]\n";
}

namespace {

constexpr double kWidth = 800;
constexpr plot::Frame kMain{90, 50, 630, 470};
constexpr double kIntensityLo = 1e-2;  // FLOP per DRAM byte: decode GEMVs sit near 1, big GEMMs in the hundreds
constexpr double kIntensityHi = 1e4;

// TFLOP/s: five decades down from above the fastest paper peak of any GPU drawn.
plot::Scale flops_scale(const std::vector<Roofline>& rs) {
  double top = 1;
  for (const Roofline& r : rs) {
    for (const auto& c : r.compute) {
      top = std::max(top, units::to_teraflops(c.paper));
    }
  }
  const double hi = std::ceil(std::log10(top) + 0.3);
  return {std::pow(10.0, hi - 5), std::pow(10.0, hi), true};
}

// A memory roof y = B·x up to where it meets `roof_top` (TFLOP/s), clipped to the frame, labelled
// where it enters the frame.
void memory_roof(plot::Chart& ch, Svg& svg, BytesPerSecond b, double roof_top, const char* color, double width,
                 const char* dash, const std::string& label) {
  const double tb = units::to_teraflops(FlopPerSecond(b.value()));  // TFLOP/s per FLOP/B of intensity
  const double meet = roof_top / tb;
  ch.line(kIntensityLo, kIntensityLo * tb, meet, roof_top, color, width, dash);
  if (!label.empty()) {
    const double enter = std::max(kIntensityLo, ch.y().lo / tb) * 2.5;
    if (enter < meet) {
      svg.text(ch.px(enter) + 4, ch.py(enter * tb) - 8, label, 10, "start", color);
    }
  }
}

// Kernels without FLOPs (norms, activations, residual adds, optimizer) cannot sit on the
// intensity axis; they are drawn by what they do: bytes moved against the bandwidth attained,
// under the DRAM roof. Small ones fall below it (launch and latency dominate).
void bytes_only_panel(Svg& svg, const Roofline& r, const std::vector<const RooflinePoint*>& pts, double top,
                      double share) {
  double b_lo = 1e300, b_hi = 0;
  for (const RooflinePoint* p : pts) {
    b_lo = std::min(b_lo, p->bytes.value());
    b_hi = std::max(b_hi, p->bytes.value());
  }
  const explain::MemoryRoof& dram = r.memory.front();
  const double paper = units::to_terabytes_per_second(dram.paper);
  plot::Chart ch(svg, {kMain.left, top, kMain.right, top + 200}, plot::log_scale(b_lo / 1.3, b_hi * 1.3),
                 plot::linear_scale(0, paper * 1.05));
  svg.text(kMain.left, top - 12,
           strfmt("Kernels counted by bytes only (norms, activations, residuals, optimizer): %.0f %% of kernel time",
                  pct(share)),
           12);
  ch.axes("bytes moved by the kernel (log scale)", "attained TB/s");
  const double achievable = units::to_terabytes_per_second(dram.achievable);
  ch.line(ch.x().lo, achievable, ch.x().hi, achievable, "#1f77b4", 2);
  ch.line(ch.x().lo, paper, ch.x().hi, paper, "#1f77b4", 1, "5,4");
  svg.text(kMain.right + 6, ch.py(achievable) + 4, strfmt("DRAM %.2f TB/s", achievable), 10, "start", "#1f77b4");
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const RooflinePoint& p = *pts[i];
    const double y = units::to_terabytes_per_second(p.bandwidth);
    ch.dot(p.bytes.value(), y, 3 + 22 * std::sqrt(p.share), "#1f77b4", 0.45);
    if (i + 4 >= pts.size()) {
      svg.text(ch.px(p.bytes.value()) - 6, ch.py(y) + 14 + 10.0 * static_cast<double>(pts.size() - 1 - i),
               p.name + " " + lowering::to_string(p.phase), 9, "end", "#333");
    }
  }
}

void legend(Svg& svg) {
  const double lx = kMain.left + 10, ly = kMain.top + 10;
  svg.rect(lx, ly, 230, 72, "white", "#bbb");
  svg.circle(lx + 12, ly + 14, 5, "#d62728", 0.45);
  svg.text(lx + 24, ly + 18, "compute-bound op (area ~ time)", 10);
  svg.circle(lx + 12, ly + 32, 5, "#1f77b4", 0.45);
  svg.text(lx + 24, ly + 36, "memory-bound op", 10);
  svg.line(lx + 6, ly + 50, lx + 20, ly + 50, "#555", 2);
  svg.text(lx + 24, ly + 54, "achievable roof (measured efficiency)", 10);
  svg.line(lx + 6, ly + 62, lx + 20, ly + 62, "#555", 1, "5,4");
  svg.text(lx + 24, ly + 66, "paper peak", 10);
}

// Several GPUs on one set of axes: each one's DRAM roof and highlighted compute roof, and its ridge.
std::string overlay_svg(const std::vector<Roofline>& rs) {
  const double height = 560 + 16.0 * static_cast<double>(rs.size());
  Svg svg(kWidth, height);
  plot::Chart ch(svg, kMain, {kIntensityLo, kIntensityHi, true}, flops_scale(rs));
  svg.text(
      kMain.left, 28,
      "Roofline: " + std::string(units::to_string(rs.front().highlight)) + " on " + std::to_string(rs.size()) + " GPUs",
      15);
  ch.axes("arithmetic intensity (FLOP per DRAM byte, log scale)", "attainable TFLOP/s (log scale)");
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const Roofline& r = rs[i];
    const char* color = plot::series_color(i);
    const auto c = std::find_if(r.compute.begin(), r.compute.end(),
                                [&](const explain::ComputeRoof& x) { return x.dtype == r.highlight; });
    if (c == r.compute.end()) {
      continue;
    }
    const double roof = units::to_teraflops(c->achievable);
    memory_roof(ch, svg, r.memory.front().achievable, roof, color, 2, nullptr, "");
    ch.line(c->ridge, roof, kIntensityHi, roof, color, 2);
    ch.dot(c->ridge, roof, 4, color, 1);
    svg.text(
        kMain.left, kMain.bottom + 60 + 16.0 * static_cast<double>(i),
        strfmt("%s: %s %.0f TFLOP/s, DRAM %.2f TB/s, ridge %.0f FLOP/B (achievable)", r.gpu_name.c_str(),
               units::to_string(c->dtype), roof, units::to_terabytes_per_second(r.memory.front().achievable), c->ridge),
        11, "start", color);
  }
  return svg.str();
}

}  // namespace

std::string roofline_svg(const std::vector<Roofline>& rs) {
  if (rs.size() != 1) {
    return overlay_svg(rs);
  }
  const Roofline& r = rs.front();
  std::vector<const RooflinePoint*> pts;
  std::vector<const RooflinePoint*> bytes_only;
  double hidden = 0;
  for (const auto& p : r.points) {
    if (p.flops.value() > 0) {
      pts.push_back(&p);
    } else {
      bytes_only.push_back(&p);
      hidden += p.share;
    }
  }
  auto by_share = [](const auto* a, const auto* b) { return a->share < b->share; };
  std::stable_sort(pts.begin(), pts.end(), by_share);
  std::stable_sort(bytes_only.begin(), bytes_only.end(), by_share);
  const bool panel = !bytes_only.empty();
  Svg svg(kWidth, panel ? 820 : 540);
  plot::Chart ch(svg, kMain, {kIntensityLo, kIntensityHi, true}, flops_scale(rs));
  svg.text(kMain.left, 28, "Roofline: " + r.gpu_name, 15);
  ch.axes("arithmetic intensity (FLOP per DRAM byte, log scale)", "attainable TFLOP/s (log scale)");

  const double roof_top = r.compute.empty() ? ch.y().hi : units::to_teraflops(r.compute.front().achievable);
  const char* mem_colors[] = {"#1f77b4", "#17becf"};
  for (std::size_t i = 0; i < r.memory.size(); ++i) {
    const auto& m = r.memory[i];
    memory_roof(ch, svg, m.achievable, roof_top, mem_colors[i % 2], 2, nullptr,
                strfmt("%s %.2f TB/s", m.name.c_str(), units::to_terabytes_per_second(m.achievable)));
    if (i == 0) {
      memory_roof(ch, svg, m.paper, roof_top, mem_colors[i % 2], 1, "5,4", "");
    }
  }
  const double dram_tb = units::to_teraflops(FlopPerSecond(r.memory.front().achievable.value()));
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
    const double roof = units::to_teraflops(c.achievable);
    const char* color = hi ? "#d62728" : "#999";
    ch.line(c.ridge, roof, kIntensityHi, roof, color, hi ? 2.5 : 1.2);
    if (hi) {
      const double paper = units::to_teraflops(c.paper);
      ch.line(paper / dram_tb, paper, kIntensityHi, paper, color, 1, "5,4");
      ch.line(c.ridge, roof, c.ridge, ch.y().lo, color, 1, "2,3");
      svg.text(ch.px(c.ridge) + 4, kMain.bottom - 6, strfmt("ridge %.0f FLOP/B", c.ridge), 10, "start", color);
    }
    svg.text(kMain.right + 6, ch.py(roof) + 4, strfmt("%s %.0f TFLOP/s", names.c_str(), roof), 10, "start", color);
  }
  // Ops: the largest last so they sit on top; label the four largest, staggered.
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const auto& p = *pts[i];
    const double x = std::clamp(p.intensity, kIntensityLo, kIntensityHi);
    const double y = std::clamp(units::to_teraflops(p.attained), ch.y().lo, ch.y().hi);
    ch.dot(x, y, 3 + 22 * std::sqrt(p.share), p.compute_bound ? "#d62728" : "#1f77b4", 0.45);
    if (i + 4 >= pts.size()) {
      const double dy = 12.0 * static_cast<double>(pts.size() - i);
      svg.line(ch.px(x), ch.py(y), ch.px(x) - 40, ch.py(y) + dy, "#999", 0.6);
      svg.text(ch.px(x) - 42, ch.py(y) + dy + 3, p.name + " " + lowering::to_string(p.phase), 9, "end", "#333");
    }
  }
  legend(svg);
  if (panel) {
    bytes_only_panel(svg, r, bytes_only, kMain.bottom + 100, hidden);
  }
  return svg.str();
}

std::string roofline_svg(const Roofline& r) { return roofline_svg(std::vector<Roofline>{r}); }

}  // namespace gpusim::report
