// Private to src/report/: a plot frame that clips every line to itself, over the public geometry of
// gpusim/report.hpp (ticks, scales, clip), so each chart states only what it draws.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpusim/report.hpp"
#include "report/svg.hpp"

namespace gpusim::report::plot {

struct Frame {
  double left = 0;
  double top = 0;
  double right = 0;
  double bottom = 0;
};

class Chart {
 public:
  Chart(Svg& svg, Frame f, Scale x, Scale y) : svg_(svg), f_(f), x_(x), y_(y) {}

  // Pixel position of a data value (inside or outside the frame).
  [[nodiscard]] double px(double x) const;
  [[nodiscard]] double py(double y) const;
  [[nodiscard]] bool inside(double x, double y) const;
  [[nodiscard]] const Frame& frame() const { return f_; }
  [[nodiscard]] const Scale& x() const { return x_; }
  [[nodiscard]] const Scale& y() const { return y_; }

  // Grid, tick labels, frame and axis titles. With `x_labels`, the x axis is categorical: label i
  // sits at x = i + 1.
  // Axis titles carry their unit in parentheses (or say they are unitless); they are written with
  // the class "axis-title".
  void axes(const std::string& x_title, const std::string& y_title, const std::vector<std::string>* x_labels = nullptr);
  // A data-space line clipped to the frame; returns false when nothing of it is visible.
  bool line(double x1, double y1, double x2, double y2, const char* stroke, double width = 1.5,
            const char* dash = nullptr);
  // Consecutive points joined, each piece clipped.
  void polyline(const std::vector<std::pair<double, double>>& pts, const char* stroke, double width = 1.5,
                const char* dash = nullptr);
  // A marker at a data point when it is inside the frame.
  bool dot(double x, double y, double r, const char* fill, double opacity = 0.8);

 private:
  // The clipped segment in pixels.
  [[nodiscard]] std::optional<std::pair<std::pair<double, double>, std::pair<double, double>>> clipped(double x1,
                                                                                                       double y1,
                                                                                                       double x2,
                                                                                                       double y2) const;
  Svg& svg_;
  Frame f_;
  Scale x_;
  Scale y_;
};

// Labels placed by plot::place_label around points: each avoids every text already drawn and
// the boxes added with avoid(), and stays within `bounds`. A label placed away from its point gets
// a thin leader line back to it.
class Labels {
 public:
  Labels(Svg& svg, Box bounds) : svg_(svg), bounds_(bounds) {}
  void avoid(const Box& b) { avoid_.push_back(b); }
  // A marker of radius r at (x, y) (pixels) that later labels keep clear of.
  void avoid_marker(double x, double y, double r) { avoid_.push_back({x - r, y - r, x + r, y + r}); }
  // Draws `text` next to the point (x, y) outside a marker of radius r; false, and nothing drawn,
  // when no candidate position is free.
  bool place(double x, double y, double r, const std::string& text, double size, const char* fill = "#333");
  [[nodiscard]] const Box& bounds() const { return bounds_; }

 private:
  Svg& svg_;
  Box bounds_;
  std::vector<Box> avoid_;
};

// Layout sizes shared by the charts.
constexpr double kTitleSize = 14;
constexpr double kSubtitleSize = 11;
constexpr double kMinTitleSize = 9;  // a title shrinks to fit its width, down to this
constexpr double kMargin = 8;        // kept clear at every edge of the canvas

// A title at (x, y) that fits within [x, right]: drawn smaller when it is too wide (down to
// kMinTitleSize), then cut at a word with an ellipsis.
void title(Svg& svg, double x, double y, const std::string& text, double size, double right, const char* fill = "#222",
           const char* role = nullptr);
// Lines of `items` joined by "; " after `lead`, wrapped to [x, right], from baseline y down;
// returns the baseline below the last line. The canvas grows to hold them.
double key_lines(Svg& svg, double x, double y, double right, const std::string& lead,
                 const std::vector<std::string>& items, double size = 10, const char* fill = "#555");
// Which of a chart's markers: a circle, a square, a triangle, a diamond, by series (so series
// that coincide stay told apart in grey print), and dashes for their lines.
void marker(Svg& svg, double x, double y, double r, std::size_t series, const char* fill);
const char* series_dash(std::size_t series);  // nullptr: solid
// A cross at (x, y): a point that did not run.
void cross(Svg& svg, double x, double y, double r, const char* stroke);

// Colours of successive series (matplotlib's tab10, colour-blind tolerant in its first entries).
const char* series_color(std::size_t i);

}  // namespace gpusim::report::plot
