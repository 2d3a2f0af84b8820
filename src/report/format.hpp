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
// duration(), time_unit(), in_unit(), amount(), count_words() and Table with render() are declared
// in gpusim/report.hpp.
// Percent of a fraction: 0.42 -> 42.
inline double pct(double fraction) { return 100.0 * fraction; }
// Memory is quoted in GiB, as devices report it.
inline double gib(Bytes b) { return units::to_gibibytes(b); }
// RFC 4180 field: quoted when it holds a comma, quote or newline; quotes doubled.
std::string csv_field(const std::string& s);
// "met at p99: TTFT 174 ms <= 300 ms · TPOT 15.2 ms <= 20 ms", or what misses and by how much.
std::string slo_text(const answer::SloCheck& c);

}  // namespace gpusim::report
