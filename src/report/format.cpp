// Number formatting shared by the reports.
#include "report/format.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "gpusim/report.hpp"
#include "report/shortest.hpp"

namespace gpusim::report {

std::string shortest_number(double v) {
  std::array<char, 32> buf{};
  return std::string(buf.data(), write_shortest(buf.data(), buf.data() + buf.size(), v));
}

std::string shortest_number_by_printf(double v) {
  std::array<char, 32> buf{};
  return std::string(buf.data(), write_shortest_printf(buf.data(), buf.data() + buf.size(), v));
}

std::string human(double v) {
  const char* suffix[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (v >= 1000.0 && i < 5) {
    v /= 1000.0;
    ++i;
  }
  return v >= 100 || i == 0 ? strfmt("%.0f%s", v, suffix[i]) : strfmt("%.3g%s", v, suffix[i]);
}

namespace {

// Three significant digits below 1000, then k/M/G/T/P (human()); never an exponent.
std::string three_digits(double v) {
  if (v < 0) {
    std::string out = three_digits(-v);
    out.insert(out.begin(), '-');  // not "-" + s: g++ 12 flags that with a false -Wrestrict
    return out;
  }
  if (v >= 1000) {
    return human(v);
  }
  if (v >= 100 || v == 0) {
    return strfmt("%.0f", v);
  }
  if (v >= 1) {
    return strfmt("%.3g", v);
  }
  // Below 1: fixed notation with three significant digits, 0.0000259 rather than 2.59e-05.
  const int decimals = std::min(15, 2 - static_cast<int>(std::floor(std::log10(v))));
  std::string out = strfmt("%.*f", decimals, v);
  while (out.back() == '0') {
    out.pop_back();
  }
  if (out.back() == '.') {
    out.pop_back();
  }
  return out;
}

}  // namespace

std::string money(double usd) { return three_digits(usd) + " USD"; }
std::string amount(double v) { return three_digits(v); }

std::string energy(Joules e) {
  const double kwh = units::to_kwh(e);
  if (kwh < 1) {
    return three_digits(kwh * 1e3) + " Wh";
  }
  const char* prefix[] = {"kWh", "MWh", "GWh", "TWh"};
  double v = kwh;
  int i = 0;
  while (v >= 1000 && i < 3) {
    v /= 1000;
    ++i;
  }
  return three_digits(v) + " " + prefix[i];
}

std::string mass_kg(double kg) {
  if (kg >= 1000) {
    return three_digits(kg / 1000) + " t";
  }
  if (kg >= 1 || kg == 0) {
    return three_digits(kg) + " kg";
  }
  return kg >= 1e-3 ? three_digits(kg * 1e3) + " g" : three_digits(kg * 1e6) + " mg";
}

std::string breakeven_words(const std::optional<Seconds>& t, Seconds lifetime) {
  if (!t || *t > lifetime) {
    return "never within the " + strfmt("%.3g", units::to_years(lifetime)) + "-year lifetime";
  }
  return units::to_days(*t) < 1096 ? count_words(std::round(units::to_days(*t)), "day")
                                   : strfmt("%.1f years", units::to_years(*t));
}

std::string duration(Seconds t) {
  const double s = t.value();
  if (s == 0.0) {
    return "0";
  }
  if (s < 1e-3) {
    return strfmt("%.1f us", units::to_us(t));
  }
  if (s < 1.0) {
    return strfmt("%.1f ms", units::to_ms(t));
  }
  if (s < 120.0) {
    return strfmt("%.2f s", s);
  }
  if (s < 2.0 * units::kSecondsPerHour) {
    return strfmt("%.1f min", s / 60.0);
  }
  if (s < 72.0 * units::kSecondsPerHour) {
    return strfmt("%.1f h", units::to_hours(t));
  }
  return strfmt("%.1f days", units::to_days(t));
}

TimeUnit time_unit(const std::vector<Seconds>& column) {
  double most = 0;
  for (const Seconds t : column) {
    most = std::max(most, t.value());
  }
  // The thresholds of duration(), so that a column's largest value reads as it would alone.
  if (most < 1e-3) {
    return {1e-6, "us"};
  }
  if (most < 1.0) {
    return {1e-3, "ms"};
  }
  if (most < 120.0) {
    return {1, "s"};
  }
  if (most < 2.0 * units::kSecondsPerHour) {
    return {60, "min"};
  }
  if (most < 72.0 * units::kSecondsPerHour) {
    return {units::kSecondsPerHour, "h"};
  }
  return {24 * units::kSecondsPerHour, "days"};
}

std::string in_unit(Seconds t, TimeUnit u) {
  const double v = t.value() / u.seconds;
  if (v == 0 || !std::isfinite(v)) {
    return strfmt("%.0f", v);
  }
  // Three significant figures: as many decimals as the magnitude leaves, one fewer when rounding
  // carries into the next power of ten (9.996 reads 10.0).
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  int decimals = std::clamp(2 - magnitude, 0, 15);
  const double scale = std::pow(10.0, decimals);
  if (decimals > 0 && std::fabs(std::round(v * scale) / scale) >= std::pow(10.0, magnitude + 1)) {
    --decimals;
  }
  return strfmt("%.*f", decimals, v);
}

std::string count_words(double n, const std::string& one, const std::string& many) {
  const std::string number = n == std::floor(n) && std::fabs(n) < 1e15 ? strfmt("%.0f", n) : amount(n);
  return number + " " + (number == "1" ? one : many.empty() ? one + "s" : many);
}

namespace {
std::size_t code_points(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}
}  // namespace

std::string render(const Table& t, const std::string& indent) {
  std::vector<std::size_t> width(t.header.size(), 0);
  auto widen = [&](const std::vector<std::string>& cells, bool full) {
    for (std::size_t i = 0; i < cells.size() && i < width.size(); ++i) {
      if (full || i + 1 < cells.size()) {  // a short row's last cell runs on
        width[i] = std::max(width[i], code_points(cells[i]));
      }
    }
  };
  widen(t.header, true);
  for (const auto& r : t.rows) {
    widen(r, r.size() == t.header.size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = indent;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const bool last = i + 1 == cells.size();
      const std::size_t pad =
          i < width.size() && width[i] > code_points(cells[i]) ? width[i] - code_points(cells[i]) : 0;
      const bool right = i < t.right.size() && t.right[i] && cells.size() == t.header.size();
      if (right) {
        out.append(pad, ' ');
      }
      out += cells[i];
      if (!right && !last) {
        out.append(pad, ' ');
      }
      if (!last) {
        out += "  ";
      }
    }
    while (!out.empty() && out.back() == ' ') {
      out.pop_back();
    }
    return out + "\n";
  };
  std::string out = line(t.header);
  for (const auto& r : t.rows) {
    out += line(r);
  }
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) {
    return s;
  }
  std::string out = "\"";
  for (const char c : s) {
    out += c;
    if (c == '"') {
      out += '"';
    }
  }
  return out + "\"";
}

std::string slo_text(const answer::SloCheck& c) {
  std::string out =
      strfmt("%s at %s:", c.met() ? "met" : "MISSED", base::name_in(scenario::kPercentileNames, c.slo.percentile));
  const char* sep = " ";
  auto one = [&](const char* what, const std::optional<Seconds>& limit, const std::optional<Seconds>& got) {
    if (!limit || !got) {
      return;
    }
    const double over = *got / *limit - 1.0;
    out += strfmt("%s%s %s %s %s", sep, what, duration(*got).c_str(), over <= 0 ? "<=" : ">", duration(*limit).c_str());
    if (over > 0) {
      out += strfmt(" (+%.0f %%)", pct(over));
    }
    sep = " · ";
  };
  one("TTFT", c.slo.ttft, c.ttft);
  one("TPOT", c.slo.tpot, c.tpot);
  one("request", c.slo.e2e, c.e2e);
  if (c.saturated) {
    out += "; the offered rate saturates the deployment";
  }
  if (c.incomplete) {
    out += "; the simulation stopped before serving the whole load";
  }
  return out;
}

}  // namespace gpusim::report
