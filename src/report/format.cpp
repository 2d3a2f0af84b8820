// Number formatting shared by the reports.
#include "report/format.hpp"

namespace gpusim::report {

std::string human(double v) {
  const char* suffix[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (v >= 1000.0 && i < 5) {
    v /= 1000.0;
    ++i;
  }
  return v >= 100 || i == 0 ? strfmt("%.0f%s", v, suffix[i]) : strfmt("%.3g%s", v, suffix[i]);
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
  return out;
}

}  // namespace gpusim::report
