// Private to src/report/: a minimal SVG writer (elements, escaping, fixed-precision coordinates so golden files
// are stable) for the plots gpusim draws.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gpusim/base.hpp"

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
  // anchor: "start" | "middle" | "end"; rotate: degrees about (x, y).
  void text(double x, double y, const std::string& s, double size = 11, const char* anchor = "start",
            const char* fill = "#222", double rotate = 0) {
    body_ += strfmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"%s\" fill=\"%s\"%s>%s</text>\n", x, y,
                    size, anchor, fill,
                    rotate != 0 ? strfmt(" transform=\"rotate(%.0f %.1f %.1f)\"", rotate, x, y).c_str() : "",
                    xml_escape(s).c_str());
  }
  [[nodiscard]] std::string str() const {
    return strfmt(
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\">\n",
               width_, height_, width_, height_) +
           strfmt("<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width_, height_) + body_ + "</svg>\n";
  }

 private:
  double width_;
  double height_;
  std::string body_;
};

}  // namespace gpusim::report
