// Private to src/report/: a minimal SVG writer (elements, escaping, fixed-precision coordinates so golden files
// are stable) for the plots gpusim draws.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gpusim/base.hpp"
#include "gpusim/report.hpp"

namespace gpusim::report {

using base::strfmt;

// Text for SVG and HTML: the five characters markup gives meaning to, as entities.
inline std::string xml_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

class Svg {
 public:
  Svg(double width, double height) : width_(width), height_(height) {}

  void line(double x1, double y1, double x2, double y2, const char* stroke, double width = 1.5,
            const char* dash = nullptr) {
    body_ += strfmt("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>\n",
                    x1, y1, x2, y2, stroke, width, dash ? strfmt(" stroke-dasharray=\"%s\"", dash).c_str() : "");
  }
  // Joined points, unfilled (one element for a dense curve rather than a line per piece).
  void polyline(const std::vector<std::pair<double, double>>& pts, const char* stroke, double width = 1.5,
                const char* dash = nullptr) {
    std::string coords;
    for (const auto& [x, y] : pts) {
      coords += strfmt("%s%.1f,%.1f", coords.empty() ? "" : " ", x, y);
    }
    body_ += strfmt("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>\n", coords.c_str(),
                    stroke, width, dash ? strfmt(" stroke-dasharray=\"%s\"", dash).c_str() : "");
  }
  // A closed, filled shape (a series' marker).
  void polygon(const std::vector<std::pair<double, double>>& pts, const char* fill) {
    std::string coords;
    for (const auto& [x, y] : pts) {
      coords += strfmt("%s%.1f,%.1f", coords.empty() ? "" : " ", x, y);
    }
    body_ +=
        strfmt("<polygon points=\"%s\" fill=\"%s\" stroke=\"#333\" stroke-width=\"0.5\"/>\n", coords.c_str(), fill);
  }
  void circle(double cx, double cy, double r, const char* fill, double opacity = 0.7) {
    body_ += strfmt(
        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" fill-opacity=\"%.2f\" stroke=\"#333\" "
        "stroke-width=\"0.5\"/>\n",
        cx, cy, r, fill, opacity);
  }
  void rect(double x, double y, double w, double h, const char* fill, const char* stroke = "none") {
    body_ += strfmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"%s\"/>\n", x, y, w,
                    h, fill, stroke);
  }
  // anchor: "start" | "middle" | "end"; rotate: degrees about (x, y). `role`, when given, is written
  // as the element's class (an axis title is "axis-title") so that readers of the file can find it.
  // Every text's box is recorded (text_boxes()) for the label placer and the layout checks.
  void text(double x, double y, const std::string& s, double size = 11, const char* anchor = "start",
            const char* fill = "#222", double rotate = 0, const char* role = nullptr) {
    body_ += strfmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"%s\" fill=\"%s\"%s%s>%s</text>\n", x,
                    y, size, anchor, fill,
                    rotate != 0 ? strfmt(" transform=\"rotate(%.0f %.1f %.1f)\"", rotate, x, y).c_str() : "",
                    role != nullptr ? strfmt(" class=\"%s\"", role).c_str() : "", xml_escape(s).c_str());
    // Measured as the file states it: coordinates to 0.1 px and the size to a whole pixel.
    const double sx = std::round(x * 10) / 10, sy = std::round(y * 10) / 10, ss = std::round(size);
    boxes_.push_back({plot::text_box(sx, sy, s, ss, anchor_of(anchor), rotate), s});
  }
  [[nodiscard]] std::string str() const {
    return strfmt(
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\">\n",
               width_, height_, width_, height_) +
           strfmt("<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width_, height_) + body_ + "</svg>\n";
  }

  struct TextBox {
    plot::Box box;
    std::string text;
  };
  // The box of every text drawn so far, in drawing order.
  [[nodiscard]] const std::vector<TextBox>& text_boxes() const { return boxes_; }
  [[nodiscard]] double width() const { return width_; }
  [[nodiscard]] double height() const { return height_; }
  // The canvas grows downwards when a chart adds a key below what it planned.
  void grow_to(double height) { height_ = std::max(height_, std::ceil(height)); }

  static plot::Anchor anchor_of(const char* anchor) {
    const std::string a = anchor;
    return a == "middle" ? plot::Anchor::kMiddle : a == "end" ? plot::Anchor::kEnd : plot::Anchor::kStart;
  }

 private:
  double width_;
  double height_;
  std::string body_;
  std::vector<TextBox> boxes_;
};

}  // namespace gpusim::report
