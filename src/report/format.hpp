// Private to src/report/: numbers and durations as people read them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusim/answer.hpp"
#include "gpusim/base.hpp"
#include "gpusim/report.hpp"
#include "gpusim/units.hpp"

namespace gpusim::report {

using base::strfmt;

// 570k, 1.2M, 3.4G: counts for people.
std::string human(double v);
// "4.1 us", "12.3 ms", "4.12 s", "3.2 min", "21.8 h", "12.0 days".
std::string duration(Seconds t);
// One unit for a column of durations, so that a column reads in one unit: the unit duration() gives
// its largest value.
struct TimeUnit {
  double seconds = 1;  // one unit, in seconds
  const char* name = "s";
};
TimeUnit time_unit(const std::vector<Seconds>& column);
// t in the column's unit, three significant figures, the unit left to the column's header.
std::string in_unit(Seconds t, TimeUnit u);
// Three significant figures below 1000, then k/M/G/T/P; never an exponent (money() without "USD").
std::string amount(double v);
// A text table whose columns are as wide as their widest cell (counted in code points, so "×" is
// one): a row with fewer cells than the header lets its last cell run on (a row that says why it
// has no figures).
struct Table {
  std::vector<std::string> header;
  std::vector<bool> right;  // per column: aligned right (numbers) or left (words)
  std::vector<std::vector<std::string>> rows;
};
std::string render(const Table& t, const std::string& indent = "  ");
// Percent of a fraction: 0.42 -> 42.
inline double pct(double fraction) { return 100.0 * fraction; }
// Memory is quoted in GiB, as devices report it.
inline double gib(Bytes b) { return units::to_gibibytes(b); }
// RFC 4180 field: quoted when it holds a comma, quote or newline; quotes doubled.
std::string csv_field(const std::string& s);
// "met at p99: TTFT 174 ms <= 300 ms · TPOT 15.2 ms <= 20 ms", or what misses and by how much.
std::string slo_text(const answer::SloCheck& c);

}  // namespace gpusim::report
