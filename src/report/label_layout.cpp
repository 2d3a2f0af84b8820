// Text measured before it is drawn, and labels placed where they hit nothing (see
// gpusim/report.hpp for the rules and sources).
#include <algorithm>
#include <cmath>

#include "gpusim/report.hpp"

namespace gpusim::report::plot {

namespace {

// Advance widths of Helvetica, 1/1000 em, for the printable ASCII range 32..126 [adobe-core14-afm].
constexpr int kHelvetica[95] = {
    278,  278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,  // ' ' .. '/'
    556,  556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,  // '0' .. '?'
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,  // '@' .. 'O'
    667,  778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,  // 'P' .. '_'
    333,  556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,  // '`' .. 'o'
    556,  556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584};      // 'p' .. '~'
// A code point outside ASCII (×, ·, –, ≤, µ): about a digit's width; the dashes wider.
constexpr int kOtherAdvance = 600;
constexpr int kEmDashAdvance = 1000;
// Browsers draw "sans-serif" with DejaVu Sans on Debian and Arial elsewhere; DejaVu Sans runs about
// 15 % wider than Helvetica (its digits 636 against 556, 'a' 613 against 556 per 1000 em), so every
// width is taken that much larger.
constexpr double kFaceMargin = 1.15;
// Ascent and descent of a sans-serif face as fractions of the font size (Helvetica: 718 and 207
// per 1000 em [adobe-core14-afm]), rounded up to cover accents and DejaVu's taller ascent.
constexpr double kAscent = 0.8;
constexpr double kDescent = 0.22;
// Space between a marker and its label, and between successive rings of candidates.
constexpr double kGap = 2.5;
constexpr double kRings[] = {0, 10, 22, 36, 54, 78};

}  // namespace

double text_width(std::string_view s, double size) {
  double em = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 32 && c < 127) {
      em += kHelvetica[c - 32];
    } else if (c >= 0xC0) {  // the lead byte of a multi-byte code point; continuation bytes add nothing
      const bool dash = c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                        static_cast<unsigned char>(s[i + 2]) == 0x94;  // U+2014 em dash
      em += dash ? kEmDashAdvance : kOtherAdvance;
    }
  }
  return em / 1000.0 * size * kFaceMargin;
}

Box text_box(double x, double y, std::string_view s, double size, Anchor anchor, double rotate) {
  const double w = text_width(s, size);
  // Along the text: [a, b] from the anchor point; across it: [-ascent, +descent] from the baseline.
  const double a = anchor == Anchor::kStart ? 0 : anchor == Anchor::kMiddle ? -w / 2 : -w;
  const double b = a + w;
  const double up = kAscent * size;
  const double down = kDescent * size;
  if (std::abs(rotate + 90) < 1e-9) {  // reads upwards: (dx, dy) → (dy, −dx)
    return {x - up, y - b, x + down, y - a};
  }
  if (std::abs(rotate - 90) < 1e-9) {  // reads downwards: (dx, dy) → (−dy, dx)
    return {x - down, y + a, x + up, y + b};
  }
  return {x + a, y - up, x + b, y + down};
}

bool overlaps(const Box& a, const Box& b, double touch) {
  const double w = std::min(a.right, b.right) - std::max(a.left, b.left);
  const double h = std::min(a.bottom, b.bottom) - std::max(a.top, b.top);
  return w > touch && h > touch;
}

bool within(const Box& inner, const Box& outer, double slack) {
  return inner.left >= outer.left - slack && inner.right <= outer.right + slack && inner.top >= outer.top - slack &&
         inner.bottom <= outer.bottom + slack;
}

std::optional<Placement> place_label(double px, double py, double clearance, std::string_view text, double size,
                                     const std::vector<Box>& taken, const Box& bounds) {
  // Directions in order of preference: right, left, above, below, then the four diagonals.
  constexpr double kDiagonal = 0.7071067811865476;  // cos 45°
  const std::pair<double, double> dirs[] = {{1, 0},
                                            {-1, 0},
                                            {0, -1},
                                            {0, 1},
                                            {kDiagonal, -kDiagonal},
                                            {-kDiagonal, -kDiagonal},
                                            {kDiagonal, kDiagonal},
                                            {-kDiagonal, kDiagonal}};
  const double up = kAscent * size;
  const double down = kDescent * size;
  for (const double ring : kRings) {
    const double d = clearance + kGap + ring;
    for (const auto& [dx, dy] : dirs) {
      Placement p;
      p.anchor = dx > 0 ? Anchor::kStart : dx < 0 ? Anchor::kEnd : Anchor::kMiddle;
      p.x = px + dx * d;
      // The box's near edge at distance d from the point: below its bottom when above, and so on.
      p.y = dy < 0 ? py + dy * d - down : dy > 0 ? py + dy * d + up : py + (up - down) / 2;
      p.box = text_box(p.x, p.y, text, size, p.anchor);
      if (!within(p.box, bounds, 0)) {
        continue;
      }
      const bool free = std::none_of(taken.begin(), taken.end(), [&](const Box& t) { return overlaps(p.box, t, 0); });
      if (!free) {
        continue;
      }
      p.leader = ring > 0;
      p.leader_x = std::clamp(px, p.box.left, p.box.right);
      p.leader_y = std::clamp(py, p.box.top, p.box.bottom);
      return p;
    }
  }
  return std::nullopt;
}

}  // namespace gpusim::report::plot
