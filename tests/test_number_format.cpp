// Numbers as people read them: one unit per column of durations, chosen from the column's largest
// value; three significant figures in that unit; counts worded in the singular or the plural; text
// tables aligned in code points; memory in GiB. Checked on the functions and on what the commands
// print.
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "cli_helpers.hpp"

using namespace gpusim;
using test::run;
using test::source;

namespace {

// Where duration() moves to the next unit: below 1 ms it reads in us, below 1 s in ms, below
// 120 s in s, below 2 h in min, below 72 h in h, and from there in days.
constexpr double kMs = 1e-3;
constexpr double kMinFrom = 120.0;
constexpr double kHourFrom = 2 * units::kSecondsPerHour;
constexpr double kDayFrom = 72 * units::kSecondsPerHour;

// Significant digits of a number written in fixed notation: its digits without the leading zeros.
int significant_digits(const std::string& s) {
  const std::string digits = std::regex_replace(s, std::regex("[^0-9]"), "");
  const auto first = digits.find_first_not_of('0');
  return first == std::string::npos ? 0 : static_cast<int>(digits.size() - first);
}

// A rendered line's cells: text runs separated by two spaces or more.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  const std::regex gap(" {2,}");
  const std::string trimmed = std::regex_replace(line, std::regex("^ +"), "");
  for (std::sregex_token_iterator it(trimmed.begin(), trimmed.end(), gap, -1), end; it != end; ++it) {
    out.push_back(*it);
  }
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    out.push_back(l);
  }
  return out;
}

std::size_t code_points(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

TEST_CASE("a column of durations reads in the unit duration() gives its largest value, at each threshold",
          "[report][numbers]") {
  struct Case {
    double largest;
    const char* unit;
  };
  for (const Case c : {Case{0.5 * kMs, "us"}, Case{kMs, "ms"}, Case{0.999, "ms"}, Case{1.0, "s"},
                       Case{kMinFrom - 1, "s"}, Case{kMinFrom, "min"}, Case{kHourFrom - 1, "min"}, Case{kHourFrom, "h"},
                       Case{kDayFrom - 1, "h"}, Case{kDayFrom, "days"}}) {
    INFO(c.largest << " s");
    // A smaller value beside it does not change the unit.
    const report::TimeUnit u = report::time_unit({Seconds(c.largest / 50), Seconds(c.largest)});
    CHECK(std::string(u.name) == c.unit);
    const std::string alone = report::duration(Seconds(c.largest));
    CHECK(alone.substr(alone.rfind(' ') + 1) == c.unit);
  }
  // {90 s, 3 h}: hours, 90 / 3600 = 0.025 h and 3 h.
  const Seconds short_one(90.0);
  const Seconds long_one = units::hours(3);
  const report::TimeUnit u = report::time_unit({short_one, long_one});
  CHECK(std::string(u.name) == "h");
  CHECK(u.seconds == units::kSecondsPerHour);
  CHECK(report::in_unit(short_one, u) == "0.0250");
  CHECK(report::in_unit(long_one, u) == "3.00");
}

TEST_CASE("a duration in its column's unit has three significant figures, whole from 100, and no unit",
          "[report][numbers]") {
  const report::TimeUnit seconds = report::time_unit({Seconds(1.0)});
  REQUIRE(std::string(seconds.name) == "s");
  for (int power = -5; power <= 2; ++power) {
    const double v = 1.2345 * std::pow(10.0, power);
    const std::string text = report::in_unit(Seconds(v), seconds);
    INFO(v << " s reads " << text);
    CHECK(significant_digits(text) == 3);
    CHECK(text.find_first_not_of("0123456789.") == std::string::npos);
    CHECK(std::fabs(std::stod(text) / v - 1) < 0.005);  // rounded at the third figure
  }
  // Rounding that carries into the next power of ten keeps three figures.
  CHECK(report::in_unit(Seconds(9.996), seconds) == "10.0");
  CHECK(report::in_unit(Seconds(0.9996), seconds) == "1.00");
  CHECK(report::in_unit(Seconds(99.96), seconds) == "100");
  CHECK(report::in_unit(Seconds(0), seconds) == "0");
  // From 100 on, a whole number: a long job's days in full.
  CHECK(report::in_unit(Seconds(1234.4), seconds) == "1234");
}

TEST_CASE("a count is worded in the singular when it reads 1 and in the plural otherwise", "[report][numbers]") {
  CHECK(report::count_words(0, "GPU-hour") == "0 GPU-hours");
  CHECK(report::count_words(1, "GPU-hour") == "1 GPU-hour");
  CHECK(report::count_words(2, "GPU-hour") == "2 GPU-hours");
  CHECK(report::count_words(1.5, "GPU-hour") == "1.5 GPU-hours");
  CHECK(report::count_words(1, "layout") == "1 layout");
  CHECK(report::count_words(1202, "layout") == "1202 layouts");  // a whole count in full
  CHECK(report::count_words(1, "request") == "1 request");
  CHECK(report::count_words(3, "day", "days") == "3 days");
  CHECK(report::count_words(1, "batch", "batches") == "1 batch");
  CHECK(report::count_words(2, "batch", "batches") == "2 batches");
  // Three significant figures: 1.0004 reads 1, and so is singular; 569999.7 reads 570k.
  CHECK(report::count_words(1.0004, "GPU-hour") == "1 GPU-hour");
  CHECK(report::count_words(569999.7, "GPU-hour") == "570k GPU-hours");
}

TEST_CASE("a rendered table aligns its columns counting × as one character", "[report][numbers]") {
  const std::string wide = "2 × rtx3090";  // 11 code points in 12 bytes
  REQUIRE(code_points(wide) == 11);
  REQUIRE(wide.size() > code_points(wide));
  const std::string narrow = "1 × a100";
  const std::string time = "time (h)";  // wider than every number under it
  report::Table t;
  t.header = {"system", time, "note"};
  t.right = {false, true, false};
  t.rows = {
      {wide, "3.00", "ok"}, {narrow, "0.0250", "ok"}, {"-", "cannot run: a reason that runs on past the columns"}};
  const std::string indent = "  ";
  const std::vector<std::string> out = lines(report::render(t, indent));
  REQUIRE(out.size() == 4);
  const std::size_t first = code_points(wide);  // the first column's width
  const std::size_t second = time.size();
  auto pad = [](std::size_t n) { return std::string(n, ' '); };
  CHECK(out[0] == indent + "system" + pad(first - 6) + "  " + time + "  note");
  CHECK(out[1] == indent + wide + "  " + pad(second - 4) + "3.00  ok");
  CHECK(out[2] == indent + narrow + pad(first - code_points(narrow)) + "  " + pad(second - 6) + "0.0250  ok");
  // A short row's last cell runs on past the columns it does not fill, and widens none of them.
  CHECK(out[3] == indent + "-" + pad(first - 1) + "  cannot run: a reason that runs on past the columns");
  // The numbers end in the same column, counted in code points.
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(code_points(out[i].substr(0, out[i].rfind("  "))) == indent.size() + first + 2 + second);
  }
}

TEST_CASE("compare's time column reads in the header's unit and its cells carry none", "[cli][compare][numbers]") {
  const test::Run r = run("compare " + source("scenarios/workstation-4x4090-1b.toml") +
                          " --gpus rtx4090,rtx5090,a100-sxm4-80gb,h100-sxm5-80gb");
  REQUIRE(r.code == 0);
  const std::vector<std::string> out = lines(r.out);
  REQUIRE(out.size() > 2);
  const std::vector<std::string> header = cells(out[1]);
  const auto column =
      std::find_if(header.begin(), header.end(), [](const std::string& h) { return h.rfind("time (", 0) == 0; });
  REQUIRE(column != header.end());
  const std::size_t k = static_cast<std::size_t>(column - header.begin());
  const std::string unit = column->substr(6, column->size() - 7);
  const std::map<std::string, double> seconds_per = {
      {"us", 1e-6}, {"ms", kMs}, {"s", 1}, {"min", 60}, {"h", units::kSecondsPerHour}, {"days", units::kSecondsPerDay}};
  REQUIRE(seconds_per.count(unit) == 1);
  double largest = 0;
  int rows = 0;
  for (std::size_t i = 2; i < out.size() && out[i].rfind("  time =", 0) != 0; ++i) {
    const std::vector<std::string> row = cells(out[i]);
    REQUIRE(row.size() == header.size());
    INFO(out[i]);
    CHECK(std::regex_match(row[k], std::regex("[0-9]+(\\.[0-9]+)?")));
    largest = std::max(largest, std::stod(row[k]));
    ++rows;
  }
  CHECK(rows == 4);
  // The header's unit is the one the column's largest value reads in on its own.
  CHECK(std::string(report::time_unit({Seconds(largest * seconds_per.at(unit))}).name) == unit);
}

TEST_CASE("no compare or plan output glues ms to a number, over every shipped scenario", "[cli][numbers]") {
  const std::regex glued("[0-9]ms");
  int scenarios = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source("scenarios"))) {
    if (entry.path().extension() != ".toml") {
      continue;
    }
    ++scenarios;
    const std::string path = entry.path().string();
    for (const std::string& args :
         // b200: a scenario in fp4 (Blackwell's alone) runs on none of the others.
         {"plan " + path, "compare " + path + " --gpus h100-sxm5-80gb,a100-sxm4-80gb,rtx4090,b200"}) {
      const test::Run r = run(args);
      INFO(args);
      CHECK(r.code == 0);
      CHECK_FALSE(std::regex_search(r.out, glued));
    }
  }
  CHECK(scenarios > 20);
}

TEST_CASE("specs list gives GPU memory in GiB and bandwidth in GB/s", "[cli][specs][numbers]") {
  const test::Run r = run("specs list");
  REQUIRE(r.code == 0);
  const std::vector<std::string> out = lines(r.out);
  REQUIRE(!out.empty());
  const std::vector<std::string> header = cells(out[0]);
  const auto memory = std::find(header.begin(), header.end(), "memory (GiB)");
  REQUIRE(memory != header.end());
  CHECK(std::find(header.begin(), header.end(), "BW (GB/s)") != header.end());
  const std::size_t k = static_cast<std::size_t>(memory - header.begin());
  const std::string id = "h100-sxm5-80gb";
  const double gib = units::to_gibibytes(test::catalog().gpu(id).memory_capacity);
  CHECK(gib == 80.0);  // 80 GiB of HBM3
  bool found = false;
  for (const std::string& l : out) {
    if (l.rfind(id + " ", 0) == 0) {
      found = true;
      CHECK(cells(l)[k] == base::strfmt("%.1f", gib));
      CHECK(cells(l)[k] == "80.0");
    }
  }
  CHECK(found);
}
