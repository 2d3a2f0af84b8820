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

// Colours of successive series (matplotlib's tab10, colour-blind tolerant in its first entries).
const char* series_color(std::size_t i);

}  // namespace gpusim::report::plot
