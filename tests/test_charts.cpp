// Chart geometry: nice ticks, clipping that keeps a line's slope, the roofline's roofs at slope 1
// on its log-log axes, the break-even curve through its own crossover mark, and a golden SVG per
// chart (approval files under tests/golden/).
#include <cmath>
#include <regex>

#include "cli_helpers.hpp"
#include "gpusim/report.hpp"

using namespace gpusim;
using namespace gpusim::test;
namespace plot = gpusim::report::plot;

namespace {

// Whether v is 1, 2 or 5 × 10^k.
bool is_nice_step(double v) {
  const double m = v / std::pow(10.0, std::floor(std::log10(v) + 1e-9));
  return std::abs(m - 1) < 1e-9 || std::abs(m - 2) < 1e-9 || std::abs(m - 5) < 1e-9;
}

struct SvgText {
  double x, y;
  std::string anchor, text;
};
std::vector<SvgText> texts(const std::string& svg) {
  std::vector<SvgText> out;
  const std::regex re(
      R"re(<text x="([-0-9.]+)" y="([-0-9.]+)" font-size="[0-9]+" text-anchor="(\w+)"[^>]*>([^<]*)</text>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back({std::stod((*it)[1]), std::stod((*it)[2]), (*it)[3], (*it)[4]});
  }
  return out;
}

// The pixel position of the tick labelled `label` on the x axis (anchor middle) or y axis (anchor end).
double tick_px(const std::vector<SvgText>& ts, const std::string& label, bool x_axis) {
  for (const auto& t : ts) {
    if (t.text == label && t.anchor == (x_axis ? "middle" : "end")) {
      return x_axis ? t.x : t.y - 4;  // y labels sit 4 px below their grid line
    }
  }
  FAIL("no tick labelled " << label);
  return 0;
}

}  // namespace

TEST_CASE("nice ticks step by 1, 2 or 5 x 10^k and cover the range", "[charts]") {
  // The break-even plot's old ticks (0.468, 0.936, ...) came from dividing the range by 5.
  for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{
           {0, 2.34}, {0, 1}, {0.3, 0.71}, {-5, 17}, {0, 4.2e6}, {12, 13}, {0, 100}}) {
    const plot::Ticks t = plot::nice_ticks(lo, hi);
    CHECK(is_nice_step(t.step));
    CHECK(t.values.front() <= lo + 1e-9 * t.step);  // k × step may round a hair past lo
    CHECK(t.values.back() >= hi - 1e-9 * t.step);
    CHECK(t.values.size() >= 3);
    CHECK(t.values.size() <= 11);
    for (const double v : t.values) {
      CHECK(std::abs(v / t.step - std::round(v / t.step)) < 1e-9);  // each tick a multiple of the step
    }
  }
  // 0..2.34: range rounded up to 5, step nicenum(5/4) = 1: 0, 1, 2, 3.
  CHECK(plot::nice_ticks(0, 2.34).values == std::vector<double>{0, 1, 2, 3});
}

TEST_CASE("log ticks are decades, with 2 and 5 between when the range is under three decades", "[charts]") {
  CHECK(plot::log_ticks(0.01, 1e4) == std::vector<double>{0.01, 0.1, 1, 10, 100, 1e3, 1e4});
  const std::vector<double> fine = plot::log_ticks(100, 5000);
  CHECK(fine == std::vector<double>{100, 200, 500, 1000, 2000, 5000});
}

TEST_CASE("tick labels use k, M, G prefixes and the digits the step needs", "[charts]") {
  CHECK(plot::tick_label(0, 0.5) == "0");
  CHECK(plot::tick_label(2.5, 0.5) == "2.5");
  CHECK(plot::tick_label(1500, 500) == "1.5k");
  CHECK(plot::tick_label(2e7, 5e6) == "20M");
  CHECK(plot::tick_label(0.01) == "0.01");
}

TEST_CASE("a clipped line keeps its slope in axis space and ends on the frame", "[charts]") {
  // y = 0.5·x on log-log axes [0.01, 1e4] × [0.01, 1e3]: log y = log x + log 0.5, slope 1. From
  // x = 0.01 it starts at y = 0.005, below the floor, so the clip moves its start to y = 0.01.
  const plot::Scale x{0.01, 1e4, true}, y{0.01, 1e3, true};
  const auto s = plot::clip({0.01, 0.005, 1e4, 5e3}, x, y);
  REQUIRE(s);
  CHECK((s->y2 - s->y1) / (s->x2 - s->x1) == Approx(1.0));
  CHECK(s->y1 == Approx(std::log10(0.01)));  // on the floor
  CHECK(s->x1 == Approx(std::log10(0.02)));  // where 0.5·x = 0.01
  CHECK(s->y2 == Approx(std::log10(1e3)));   // leaves through the ceiling
  CHECK(s->x2 == Approx(std::log10(2e3)));
  CHECK_FALSE(plot::clip({0.01, 1e-6, 0.1, 1e-5}, x, y));  // wholly below
  CHECK_FALSE(plot::clip({-1, 1, 10, 10}, x, y));          // no log of a negative
}

TEST_CASE("the roofline's memory roofs have slope 1 on its log-log axes even where they start below the floor",
          "[charts][roofline]") {
  const auto path = scratch() / "roof-4090.svg";
  REQUIRE(run("roofline --gpu rtx4090 --svg " + path.string()).code == 0);
  const std::string svg = read_text(path);
  const auto ts = texts(svg);
  // Pixels per decade from the axes' own tick labels.
  const double px_x = tick_px(ts, "10", true) - tick_px(ts, "1", true);
  const double px_y = tick_px(ts, "1", false) - tick_px(ts, "10", false);
  REQUIRE(px_x > 0);
  REQUIRE(px_y > 0);
  // The DRAM (#1f77b4) and L2 (#17becf) achievable roofs, the 2 px lines.
  int roofs = 0;
  const std::regex line(
      R"re(<line x1="([-0-9.]+)" y1="([-0-9.]+)" x2="([-0-9.]+)" y2="([-0-9.]+)" stroke="(#1f77b4|#17becf)" stroke-width="2.0"/>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator(); ++it) {
    const double dx = (std::stod((*it)[3]) - std::stod((*it)[1])) / px_x;  // decades of intensity
    const double dy = (std::stod((*it)[2]) - std::stod((*it)[4])) / px_y;  // decades of FLOP/s (y grows down)
    CHECK(dy / dx == Approx(1.0).epsilon(0.01));
    ++roofs;
  }
  CHECK(roofs == 2);
}

TEST_CASE("the break-even curve passes through its own crossover mark and its ticks are round", "[charts][breakeven]") {
  const auto path = scratch() / "be.svg";
  REQUIRE(run("breakeven " + source("scenarios/breakeven-desktop.toml") + " --svg " + path.string()).code == 0);
  const std::string svg = read_text(path);
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex(R"re(<circle cx="([0-9.]+)" cy="([0-9.]+)" r="4.0" fill="#2ca02c")re")));
  const std::string mark = std::string(m[1]) + "," + std::string(m[2]);
  REQUIRE(std::regex_search(svg, m, std::regex(R"re(<polyline points="([^"]+)" fill="none" stroke="#1f77b4")re")));
  CHECK_THAT(std::string(m[1]), Catch::Contains(mark));  // a vertex of the owned-cost curve
  for (const auto& t : texts(svg)) {
    if (t.anchor == "end" && t.x < 100 && t.y < 320) {  // the cost panel's y labels
      CHECK((std::stod(t.text) == 0 || is_nice_step(std::stod(t.text)) ||
             std::abs(std::stod(t.text) / 0.5 - std::round(std::stod(t.text) / 0.5)) < 1e-9));
    }
  }
  CHECK_THAT(svg, Catch::Contains("lifetime 5 years"));
}

TEST_CASE("human numbers: prefixes instead of exponents, and break-evens past the lifetime say never", "[charts]") {
  CHECK(report::money(8.034) == "8.03 USD");
  CHECK(report::money(16500) == "16.5k USD");
  CHECK(report::money(2.18e6) == "2.18M USD");
  CHECK(report::energy(Joules(295e3 * 3.6e6)) == "295 MWh");  // 295,000 kWh at 3.6 MJ per kWh
  CHECK(report::mass_kg(168000) == "168 t");
  const Seconds five_years(5 * units::kSecondsPerYear);
  CHECK(report::breakeven_words(Seconds(293 * 86400.0), five_years) == "293 days");
  CHECK(report::breakeven_words(Seconds(4571 * 86400.0), five_years) == "never within the 5-year lifetime");
  CHECK(report::breakeven_words(std::nullopt, five_years) == "never within the 5-year lifetime");
}

TEST_CASE("each chart matches its golden SVG", "[charts][golden]") {
  const auto svg = scratch() / "chart.svg";
  auto golden = [&](const std::string& args, const std::string& file) {
    const Run r = run(args + " --svg " + svg.string());
    REQUIRE(r.code == 0);
    check_golden("tests/golden/" + file, read_text(svg));
  };
  golden("breakeven " + source("scenarios/breakeven-desktop.toml"), "breakeven-desktop.svg");
  golden("compare " + source("scenarios/llama2-13b-8xa100.toml") +
             " --gpus a100-sxm4-80gb,h100-sxm5-80gb,rtx4090,l40s --baseline a100-sxm4-80gb",
         "compare-llama2-13b.svg");
  golden("sweep " + source("scenarios/gpt2-124m-rtx4090.toml") +
             " --vary system.gpus=1,2,4,8 --vary training.micro_batch=4,16 --metric step.time_s",
         "sweep-gpt2-gpus.svg");
  golden("plan " + source("scenarios/llama2-13b-8xa100.toml"), "plan-llama2-13b-8xa100.svg");
  golden("roofline --gpus rtx4090,a100-sxm4-80gb,h100-sxm5-80gb", "roofline-three-gpus.svg");
}

TEST_CASE("chart options are checked: baseline among the GPUs, a numeric metric, roofs-only overlays",
          "[charts][errors]") {
  const std::string sc = source("scenarios/llama2-13b-8xa100.toml");
  const auto svg = (scratch() / "x.svg").string();
  const Run base = run("compare " + sc + " --gpus a100-sxm4-80gb,h100-sxm5-80gb --svg " + svg + " --baseline l4");
  CHECK(base.code == 2);
  CHECK_THAT(base.err, Catch::Contains("--baseline \"l4\" is not one of --gpus"));
  CHECK(run("compare " + sc + " --gpus a100-sxm4-80gb --baseline a100-sxm4-80gb").code == 2);  // no --svg
  const Run nofit = run("compare " + sc + " --gpus rtx4090,a100-sxm4-80gb --svg " + svg);
  CHECK(nofit.code == 2);  // the first GPU, the default baseline, cannot hold the job
  CHECK_THAT(nofit.err, Catch::Contains("cannot run this job"));
  const Run metric = run("sweep " + source("scenarios/gpt2-124m-rtx4090.toml") + " --vary system.gpus=1,2 --svg " +
                         svg + " --metric step.tim_s");
  CHECK(metric.code == 2);
  CHECK_THAT(metric.err, Catch::Contains("step.tim_s"));
  CHECK(run("roofline --gpus rtx4090 " + sc).code == 2);
  CHECK(run("roofline --gpus ,").code == 2);
}
