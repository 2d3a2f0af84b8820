// The roofline picture (log-log axes, roofs, ridge point, ops sized by their share of step time)
// and several GPUs' roofs on one picture. Labels are placed where they hit no other text
// (plot::Labels); what finds no place is listed in a key below the chart.
#include <algorithm>
#include <cmath>

#include "gpusim/report.hpp"
#include "report/chart_words.hpp"
#include "report/format.hpp"
#include "report/plot.hpp"
#include "report/svg.hpp"

namespace gpusim::report {

using explain::Roofline;
using explain::RooflinePoint;

namespace {

constexpr double kWidth = 800;
constexpr plot::Frame kMain{90, 58, 620, 470};
constexpr double kIntensityLo = 1e-2;  // FLOP per DRAM byte: decode GEMVs sit near 1, big GEMMs in the hundreds
constexpr double kIntensityHi = 1e4;
constexpr double kRoofLabelSize = 10;
constexpr double kRoofLabelStep = 12;  // the least distance between two roof labels at the right
constexpr std::size_t kLabelledOps = 8;
constexpr double kAboveRoof = 1.01;  // an op this far above a roof is said to be above it

// TFLOP/s: five decades down from above the fastest paper peak of any GPU drawn.
plot::Scale flops_scale(const std::vector<Roofline>& rs) {
  double top = 1;
  for (const Roofline& r : rs) {
    for (const auto& c : r.compute) {
      top = std::max(top, units::to_teraflops(c.paper));
    }
    for (const auto& p : r.points) {
      top = std::max(top, units::to_teraflops(p.attained));
    }
  }
  const double hi = std::ceil(std::log10(top) + 0.3);
  return {std::pow(10.0, hi - 5), std::pow(10.0, hi), true};
}

// The intensity axis: 0.01 to 10^4 FLOP/B, wider when an op lies outside it.
plot::Scale intensity_scale(const std::vector<const RooflinePoint*>& pts) {
  double lo = kIntensityLo, hi = kIntensityHi;
  for (const RooflinePoint* p : pts) {
    lo = std::min(lo, p->intensity);
    hi = std::max(hi, p->intensity);
  }
  return {std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi))), true};
}

double teraflops_per_intensity(BytesPerSecond b) { return units::to_teraflops(FlopPerSecond(b.value())); }

// Labels at the right of the frame, each near its y, pushed apart so that none overlaps another
// and kept within [top, bottom].
void right_labels(Svg& svg, double x, double top, double bottom,
                  std::vector<std::pair<double, std::pair<std::string, const char*>>> labels) {
  std::sort(labels.begin(), labels.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < labels.size(); ++i) {
    labels[i].first = std::max(labels[i].first, i == 0 ? top : labels[i - 1].first + kRoofLabelStep);
  }
  for (std::size_t i = labels.size(); i-- > 0;) {  // and back up from the bottom when pushed past it
    labels[i].first = std::min(labels[i].first, i + 1 == labels.size() ? bottom : labels[i + 1].first - kRoofLabelStep);
  }
  for (const auto& [y, text] : labels) {
    svg.text(x, y, text.first, kRoofLabelSize, "start", text.second);
  }
}

void legend(Svg& svg, plot::Labels& labels) {
  const double lx = kMain.left + 10, ly = kMain.top + 10;
  svg.rect(lx, ly, 230, 72, "white", "#bbb");
  labels.avoid({lx, ly, lx + 230, ly + 72});
  svg.circle(lx + 12, ly + 14, 5, "#d62728", 0.45);
  svg.text(lx + 24, ly + 18, "compute-bound op (area ~ time)", 10);
  svg.circle(lx + 12, ly + 32, 5, "#1f77b4", 0.45);
  svg.text(lx + 24, ly + 36, "memory-bound op (left of its ridge)", 10);
  svg.line(lx + 6, ly + 50, lx + 20, ly + 50, "#555", 2);
  svg.text(lx + 24, ly + 54, "achievable roof (measured efficiency)", 10);
  svg.line(lx + 6, ly + 62, lx + 20, ly + 62, "#555", 1, "5,4");
  svg.text(lx + 24, ly + 66, "paper peak", 10);
}

std::string op_name(const RooflinePoint& p) { return p.name + " " + lowering::to_string(p.phase); }

// Kernels without FLOPs (norms, activations, residual adds, optimizer) cannot sit on the
// intensity axis; they are drawn by what they do: bytes moved against the bandwidth attained,
// under the DRAM roof. Small ones fall below it (launch and latency dominate).
void bytes_only_panel(Svg& svg, const Roofline& r, const std::vector<const RooflinePoint*>& pts, double top,
                      double share) {
  double b_lo = 1e300, b_hi = 0, bw_hi = 0;
  for (const RooflinePoint* p : pts) {
    b_lo = std::min(b_lo, p->bytes.value());
    b_hi = std::max(b_hi, p->bytes.value());
    bw_hi = std::max(bw_hi, units::to_terabytes_per_second(p->bandwidth));
  }
  const explain::MemoryRoof& dram = r.memory.front();
  const double paper = units::to_terabytes_per_second(dram.paper);
  const plot::Frame f{kMain.left, top, kMain.right, top + 200};
  plot::Chart ch(svg, f, plot::log_scale(b_lo / 1.3, b_hi * 1.3), plot::linear_scale(0, std::max(paper, bw_hi) * 1.05));
  plot::title(svg, kMain.left, top - 12,
              strfmt("Kernels counted by bytes only (norms, activations, residuals, optimizer): %.0f %% of kernel time",
                     pct(share)),
              12, kWidth - plot::kMargin);
  ch.axes("bytes moved by the kernel (bytes, log scale)", "attained bandwidth (TB/s)");
  const double achievable = units::to_terabytes_per_second(dram.achievable);
  ch.line(ch.x().lo, achievable, ch.x().hi, achievable, "#1f77b4", 2);
  ch.line(ch.x().lo, paper, ch.x().hi, paper, "#1f77b4", 1, "5,4");
  right_labels(svg, f.right + 6, f.top + 8, f.bottom,
               {{ch.py(achievable) + 4, {strfmt("DRAM %.2f TB/s", achievable), "#1f77b4"}},
                {ch.py(paper) + 4, {strfmt("paper %.2f TB/s", paper), "#1f77b4"}}});
  plot::Labels labels(svg, {f.left, f.top, f.right, f.bottom});
  for (const RooflinePoint* p : pts) {
    const double y = units::to_terabytes_per_second(p->bandwidth);
    ch.dot(p->bytes.value(), y, 3 + 22 * std::sqrt(p->share), "#1f77b4", 0.45);
  }
  for (std::size_t i = pts.size(); i-- > 0 && i + 4 >= pts.size();) {  // labels keep clear of their markers
    labels.avoid_marker(ch.px(pts[i]->bytes.value()), ch.py(units::to_terabytes_per_second(pts[i]->bandwidth)),
                        3 + 22 * std::sqrt(pts[i]->share));
  }
  for (std::size_t i = pts.size(); i-- > 0 && i + 4 >= pts.size();) {  // the four largest
    const RooflinePoint& p = *pts[i];
    const double y = units::to_terabytes_per_second(p.bandwidth);
    labels.place(ch.px(p.bytes.value()), ch.py(y), 3 + 22 * std::sqrt(p.share), op_name(p), 9);
  }
}

// Several GPUs on one set of axes: each one's DRAM roof and highlighted compute roof, and its ridge.
std::string overlay_svg(const std::vector<Roofline>& rs) {
  const double height = 560 + 16.0 * static_cast<double>(rs.size());
  Svg svg(kWidth, height);
  plot::Chart ch(svg, kMain, {kIntensityLo, kIntensityHi, true}, flops_scale(rs));
  std::string names;
  for (const Roofline& r : rs) {
    names += (names.empty() ? "" : ", ") + r.gpu_name;
  }
  plot::title(svg, kMain.left, 24,
              strfmt("Roofline: %s on %zu GPUs", units::to_string(rs.front().highlight), rs.size()), plot::kTitleSize,
              kWidth - plot::kMargin);
  plot::title(svg, kMain.left, 42, names + " (roofs only, no step)", plot::kSubtitleSize, kWidth - plot::kMargin,
              "#555");
  ch.axes("arithmetic intensity (FLOP per DRAM byte, log scale)", "attainable rate (TFLOP/s, log scale)");
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const Roofline& r = rs[i];
    const char* color = plot::series_color(i);
    const auto c = std::find_if(r.compute.begin(), r.compute.end(),
                                [&](const explain::ComputeRoof& x) { return x.dtype == r.highlight; });
    if (c == r.compute.end()) {
      continue;
    }
    const double roof = units::to_teraflops(c->achievable);
    const double tb = teraflops_per_intensity(r.memory.front().achievable);
    ch.line(kIntensityLo, kIntensityLo * tb, roof / tb, roof, color, 2);
    ch.line(c->ridge, roof, kIntensityHi, roof, color, 2);
    ch.dot(c->ridge, roof, 4, color, 1);
    plot::title(
        svg, kMain.left, kMain.bottom + 66 + 16.0 * static_cast<double>(i),
        strfmt("%s: %s %.0f TFLOP/s, DRAM %.2f TB/s, ridge %.0f FLOP/B (achievable)", r.gpu_name.c_str(),
               units::to_string(c->dtype), roof, units::to_terabytes_per_second(r.memory.front().achievable), c->ridge),
        11, kWidth - plot::kMargin, color);
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
  Svg svg(kWidth, panel ? 830 : 550);
  const plot::Scale xs = intensity_scale(pts);
  plot::Chart ch(svg, kMain, xs, flops_scale(rs));
  plot::title(svg, kMain.left, 24, "Roofline: " + r.gpu_name, plot::kTitleSize, kWidth - plot::kMargin);
  if (r.run) {
    const RunParts run{r.gpu_name, r.run->gpus, r.run->layout, r.run->runtime, units::to_string(r.run->dtype)};
    plot::title(svg, kMain.left, 42, "ops of one step of " + run_words(run), plot::kSubtitleSize,
                kWidth - plot::kMargin, "#555");
  }
  ch.axes("arithmetic intensity (FLOP per DRAM byte, log scale)", "attainable rate (TFLOP/s, log scale)");

  // The highlighted roof: the memory roofs end where they meet it; a higher compute roof is
  // reached along a dotted continuation.
  const auto hl = std::find_if(r.compute.begin(), r.compute.end(),
                               [&](const explain::ComputeRoof& c) { return c.dtype == r.highlight; });
  const double roof_hl = hl == r.compute.end() ? ch.y().hi : units::to_teraflops(hl->achievable);
  const double paper_hl = hl == r.compute.end() ? ch.y().hi : units::to_teraflops(hl->paper);
  const double roof_max = r.compute.empty() ? ch.y().hi : units::to_teraflops(r.compute.front().achievable);
  std::vector<std::pair<double, std::pair<std::string, const char*>>> right;
  plot::Labels labels(svg, {kMain.left, kMain.top, kMain.right, kMain.bottom});
  legend(svg, labels);
  const char* mem_colors[] = {"#1f77b4", "#17becf"};
  std::vector<std::pair<double, std::pair<double, std::string>>> mem_labels;  // (x, (y, text)) in data space
  for (std::size_t i = 0; i < r.memory.size(); ++i) {
    const auto& m = r.memory[i];
    const double tb = teraflops_per_intensity(m.achievable);
    ch.line(xs.lo, xs.lo * tb, roof_hl / tb, roof_hl, mem_colors[i % 2], 2);
    if (roof_max > roof_hl) {
      ch.line(roof_hl / tb, roof_hl, roof_max / tb, roof_max, mem_colors[i % 2], 1, "1,3");
    }
    if (i == 0) {
      const double paper_tb = teraflops_per_intensity(m.paper);
      ch.line(xs.lo, xs.lo * paper_tb, paper_hl / paper_tb, paper_hl, mem_colors[i % 2], 1, "5,4");
    }
    const double enter = std::max(xs.lo, ch.y().lo / tb) * 2.5;
    if (enter * tb < roof_hl) {
      mem_labels.push_back(
          {enter, {enter * tb, strfmt("%s %.2f TB/s", m.name.c_str(), units::to_terabytes_per_second(m.achievable))}});
    }
  }
  const double dram_tb = teraflops_per_intensity(r.memory.front().achievable);
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
    ch.line(c.ridge, roof, xs.hi, roof, color, hi ? 2.5 : 1.2);
    if (hi) {
      const double paper = units::to_teraflops(c.paper);
      ch.line(paper / dram_tb, paper, xs.hi, paper, color, 1, "5,4");
      ch.line(c.ridge, roof, c.ridge, ch.y().lo, color, 1, "2,3");
      svg.text(ch.px(c.ridge) + 4, kMain.bottom - 6, strfmt("ridge %.0f FLOP/B", c.ridge), 10, "start", color);
      if (ch.inside(xs.hi, paper)) {
        right.push_back({ch.py(paper) + 4, {strfmt("paper %.0f TFLOP/s", paper), color}});
      }
    }
    if (ch.inside(xs.hi, roof)) {
      right.push_back({ch.py(roof) + 4, {strfmt("%s %.0f TFLOP/s", names.c_str(), roof), color}});
    }
  }
  right_labels(svg, kMain.right + 6, kMain.top + 8, kMain.bottom + 4, right);
  for (const auto& [x, yt] : mem_labels) {
    labels.place(ch.px(x), ch.py(yt.first), 2, yt.second, 10, "#1f77b4");
  }
  // Ops: the largest last so they sit on top; the largest labelled where there is room.
  std::vector<std::string> unplaced;
  std::vector<std::string> above;
  for (const RooflinePoint* p : pts) {
    const double x = std::clamp(p->intensity, xs.lo, xs.hi);
    const double y = std::clamp(units::to_teraflops(p->attained), ch.y().lo, ch.y().hi);
    ch.dot(x, y, 3 + 22 * std::sqrt(p->share), p->compute_bound ? "#d62728" : "#1f77b4", 0.45);
    if (units::to_teraflops(p->attained) > kAboveRoof * std::min(roof_hl, p->intensity * dram_tb)) {
      above.push_back(strfmt("%s (%.0f TFLOP/s)", op_name(*p).c_str(), units::to_teraflops(p->attained)));
    }
  }
  auto marker_of = [&](const RooflinePoint& p) {
    const double x = std::clamp(p.intensity, xs.lo, xs.hi);
    const double y = std::clamp(units::to_teraflops(p.attained), ch.y().lo, ch.y().hi);
    labels.avoid_marker(ch.px(x), ch.py(y), 3 + 22 * std::sqrt(p.share));
  };
  for (std::size_t i = pts.size(); i-- > 0 && i + kLabelledOps >= pts.size();) {
    marker_of(*pts[i]);  // labels keep clear of the largest ops' markers
  }
  for (std::size_t i = pts.size(); i-- > 0 && i + kLabelledOps >= pts.size();) {
    const RooflinePoint& p = *pts[i];
    const double x = std::clamp(p.intensity, xs.lo, xs.hi);
    const double y = std::clamp(units::to_teraflops(p.attained), ch.y().lo, ch.y().hi);
    if (!labels.place(ch.px(x), ch.py(y), 3 + 22 * std::sqrt(p.share), op_name(p), 9)) {
      unplaced.push_back(strfmt("%s at %.0f FLOP/B", op_name(p).c_str(), p.intensity));
    }
  }
  double y = kMain.bottom + 62;
  if (!above.empty()) {
    y = plot::key_lines(svg, kMain.left, y, kWidth - plot::kMargin,
                        "Above the achievable roof (this shape's modelled GEMM efficiency beats the roof's):", above);
  }
  if (!unplaced.empty()) {
    y = plot::key_lines(svg, kMain.left, y, kWidth - plot::kMargin, "Also among the largest ops:", unplaced);
  }
  if (panel) {
    bytes_only_panel(svg, r, bytes_only, std::max(kMain.bottom + 110, y + 30), hidden);
    svg.grow_to(std::max(kMain.bottom + 110, y + 30) + 200 + 60);
  }
  return svg.str();
}

std::string roofline_svg(const Roofline& r) { return roofline_svg(std::vector<Roofline>{r}); }

}  // namespace gpusim::report
