// Reports: the answers in words, tables, JSON, CSV and SVG. Reporters format what the earlier
// stages computed and never compute physics; units are converted to what people read only here
// (through the units stage's named conversions). JSON keys follow docs/report.md; a number that is
// not finite is written as null, never as NaN.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusim/answer.hpp"
#include "gpusim/explain.hpp"
#include "gpusim/search.hpp"
#include "gpusim/validation.hpp"

namespace gpusim::report {

// The shortest decimal that reads back as exactly `v` (finite), as the JSON and CSV reports write
// numbers: std::to_chars's text ("124000000", "0.1", "1.5e+21"). by_printf: the same text from
// printf and strtod, what a C++ library without floating-point to_chars uses (the WebAssembly build).
std::string shortest_number(double v);
std::string shortest_number_by_printf(double v);

// ---------------------------------------------------------------- one estimate
std::string estimate_text(const answer::Estimate& e);
std::string estimate_json(const answer::Estimate& e);
// RFC 4180 CSV with the JSON report's data fields (dotted keys as the header), one row per estimate.
std::string estimate_csv(const std::vector<answer::Estimate>& rows);
std::string estimate_csv_header();
std::string estimate_csv_row(const answer::Estimate& e);
// The bottleneck in a sentence, and each piece of advice in one.
std::string bottleneck_reason(const answer::Estimate& e);
std::string advice_text(const answer::Estimate& e, const explain::Advice& a);
// Why a job cannot run (step::runs false), in numbers: "needs 54.6 GiB per GPU of the 24.0 GiB it
// may use (30.6 GiB short)", the host's shortfall, the KV cache short of one request.
std::string shortfall_words(const answer::Estimate& e);
// The job of a scenario without the hardware it names: "Llama-2-13B LoRA fine-tune, 50G tokens of
// 4096" or "Llama-3-8B serving, Poisson 2 requests/s, prompt 512 and output 256 tokens" (titles of
// answers that run it on other hardware).
std::string job_words(const scenario::Scenario& sc);
// The title of an estimate: the scenario's name, or its job's words when the hardware the name
// may describe was replaced (answer::Estimate::hardware_replaced); the report names the hardware
// that ran beside it.
std::string run_title(const answer::Estimate& e);
// The same for a scenario: its name, or its job's words when its hardware was replaced.
std::string scenario_title(const scenario::Scenario& sc);
// compare --gpus's title: the job and how many of each GPU ran it.
std::string compare_title(const scenario::Scenario& sc);
// One input the band varied, in words with its range ("runtime remainder of llm.c ±0.16").
std::string unknown_text(const answer::Contribution& c);

// ---------------------------------------------------------------- roofline
std::string roofline_text(const explain::Roofline& r);
std::string roofline_json(const explain::Roofline& r);
// Several GPUs' (app::roofline): the texts one after another; one JSON object, or an array of them.
std::string roofline_text(const std::vector<explain::Roofline>& rs);
std::string roofline_json(const std::vector<explain::Roofline>& rs);
// A self-contained SVG (log-log axes, roofs, ridge point, ops sized by time share).
std::string roofline_svg(const explain::Roofline& r);
// Several GPUs' roofs on one set of axes (DRAM and the highlighted dtype's compute roof, each
// ridge marked); one roofline draws as above.
std::string roofline_svg(const std::vector<explain::Roofline>& rs);

// ---------------------------------------------------------------- break-even
// Owning against renting across utilization (the curve computed by cost::breakeven_curve).
struct Breakeven {
  std::string scenario;
  cost::CostInputs inputs;
  std::string cloud_gpu;
  double utilization = 0;                   // the scenario's
  std::vector<cost::BreakevenPoint> curve;  // the table's utilizations
  std::vector<cost::BreakevenPoint> dense;  // every 0.5 % and the crossover: the picture's curves
  std::optional<double> crossover;
  std::optional<Seconds> breakeven_at_scenario;  // at the scenario's utilization
  std::string run;                               // what ran, in words: GPU, count, layout, runtime, precision
};
Breakeven breakeven_of(const answer::Estimate& e);
std::string breakeven_text(const Breakeven& b);
std::string breakeven_json(const Breakeven& b);
std::string breakeven_svg(const Breakeven& b);

// A single self-contained HTML page (html_report.cpp): the text report, the roofline with the
// step's ops, the kernel breakdown and the break-even curves, inline SVG, nothing fetched.
std::string estimate_html(const answer::Estimate& e, const explain::Roofline& roofline, const Breakeven& breakeven);

// ---------------------------------------------------------------- search
// A plan's report holds only what the question determines, so that one question always gives the
// same bytes; `timing` (plan --timing) adds the search's wall time (and, as text, its rate and the
// process's peak memory), which vary from run to run.
struct SearchTiming {
  double peak_rss_mb = 0;
};
std::string plan_text(const scenario::Scenario& sc, const search::PlanOptions& o, const search::PlanResult& r,
                      const std::optional<SearchTiming>& timing = std::nullopt);
std::string plan_json(const scenario::Scenario& sc, const search::PlanResult& r,
                      const std::optional<SearchTiming>& timing = std::nullopt);
// The serving plan (serving_plan_report.cpp): best deployments meeting the SLO, the frontier of
// tokens/s per GPU against tokens/s per user, and its SVG.
std::string plan_serving_text(const scenario::Scenario& sc, const search::PlanOptions& o,
                              const search::ServingPlanResult& r,
                              const std::optional<SearchTiming>& timing = std::nullopt);
std::string plan_serving_json(const scenario::Scenario& sc, const search::ServingPlanResult& r,
                              const std::optional<SearchTiming>& timing = std::nullopt);
std::string plan_serving_svg(const scenario::Scenario& sc, const search::ServingPlanResult& r);
std::string compare_text(const std::string& title, const std::vector<search::CompareRow>& rows);
std::string compare_json(const std::vector<search::CompareRow>& rows);
std::string compare_csv(const std::vector<search::CompareRow>& rows);
// compare --systems (systems_report.cpp): each system at its best layout, titled by the scenario's
// name, with the ranking the objective gave; and its bars (systems_chart.cpp).
std::string systems_text(const std::string& title, const std::vector<search::SystemRow>& rows,
                         search::Objective objective);
std::string systems_json(const std::string& title, const std::vector<search::SystemRow>& rows,
                         search::Objective objective);
std::string systems_csv(const std::vector<search::SystemRow>& rows);
std::string systems_svg(const std::string& title, const std::vector<search::SystemRow>& rows);
// Pictures (charts.cpp): compare as bars relative to `baseline` (speed, speed per purchase USD,
// tokens per cloud USD); sweep as `metric` (a report key) against the first axis, one line per
// combination of the others; plan as time against cost of every layout that fits, with the
// frontier.
std::string compare_svg(const std::vector<search::CompareRow>& rows, const std::string& baseline);
// What the sweep picture keeps of a point: its axis values and its `metric` (none when the point
// cannot run or has no such value), so that a picture of many points needs little memory.
struct SweepSample {
  std::vector<std::string> values;
  std::optional<double> y;
};
SweepSample sweep_sample(const search::SweepPoint& p, const std::string& metric);
// `run`: what ran, in words (sweep_run_words of a point that ran), for the picture's title.
std::string sweep_svg(const std::vector<search::Axis>& axes, const std::vector<SweepSample>& samples,
                      const std::string& metric, const std::string& run = "");
// The GPU, count, layout, runtime and precision of a point, leaving out what the axes vary.
std::string sweep_run_words(const search::SweepPoint& p, const std::vector<search::Axis>& axes);
std::string plan_svg(const scenario::Scenario& sc, const search::PlanResult& r);
// A sweep's rows as they are computed, so that a grid of any size is written in constant memory:
// the opening (the CSV header, JSON's "["), one record per point (`index` counts them from 0), the
// closing after `points` records. sweep_csv and sweep_json are the three put together.
enum class SweepFormat { kCsv, kJson };
std::string sweep_begin(SweepFormat f, const std::vector<search::Axis>& axes);
std::string sweep_record(SweepFormat f, const std::vector<search::Axis>& axes, const search::SweepPoint& p,
                         std::size_t index);
std::string sweep_end(SweepFormat f, std::size_t points);
std::string sweep_csv(const std::vector<search::Axis>& axes, const std::vector<search::SweepPoint>& points);
std::string sweep_json(const std::vector<search::Axis>& axes, const std::vector<search::SweepPoint>& points);

// ---------------------------------------------------------------- catalog
// GPUs with their key figures, then the link and model ids.
std::string catalog_text(const catalog::Catalog& c);

// ---------------------------------------------------------------- validation
std::string validation_text(const validation::ValidationReport& r);
std::string validation_json(const validation::ValidationReport& r);
std::string validation_csv(const validation::ValidationReport& r);
// `gpusim validate --cross-validate`: every row held out from its own publication, beside its
// prediction under the shipped specs, and what each publication's leaving out took back.
std::string cross_validation_text(const validation::CrossValidation& cv);
std::string cross_validation_json(const validation::CrossValidation& cv);
std::string cross_validation_csv(const validation::CrossValidation& cv);
// `out_dir`: where the overlay was written (empty: not written, no line for it).
std::string calibration_text(const validation::CalibrationResult& fit, const validation::ValidationReport& before,
                             const validation::ValidationReport& after, const std::string& out_dir);

// One line (no newline): which bound the report exceeds, by how much, over how many rows.
std::string threshold_breach_text(const validation::ThresholdBreach& b);

// ---------------------------------------------------------------- templates and imported specs
// `gpusim init`'s commented scenario to start from (every key documented in docs/scenarios.md).
std::string scenario_template(workload::JobKind kind);
// `gpusim model import`: the model spec file (specs/README.md) for a config.json read from
// `source`, every key commented with the JSON field it came from.
std::string model_spec_toml(const std::string& source, const scenario::ImportedModel& imported);

// The link between the GPUs of a node in words: "NVLink 4 (450 GB/s per direction)", "PCIe 4.0
// x16, no P2P: staged through host memory (12.4 GB/s achievable)" (the report's system.intra_node).
std::string intra_path_text(const physics::IntraPath& p);

// ---------------------------------------------------------------- numbers for people
// Three significant digits and a prefix instead of an exponent: "8.03 USD", "16.5k USD",
// "2.18M USD"; "850 Wh", "10.3 kWh", "421 MWh"; "4.1 kg", "168 t".
std::string money(double usd);
std::string energy(Joules e);
std::string mass_kg(double kg);
// "293 days", "3.8 years", or "never within the 5-year lifetime" when the break-even is past the
// lifetime or owning never pays back.
std::string breakeven_words(const std::optional<Seconds>& t, Seconds lifetime);
// "4.1 us", "12.3 ms", "4.12 s", "3.2 min", "21.8 h", "12.0 days".
std::string duration(Seconds t);
// One unit for a column of durations, so that a column reads in one unit: the unit duration() gives
// its largest value.
struct TimeUnit {
  double seconds = 1;  // one unit, in seconds
  const char* name = "s";
};
TimeUnit time_unit(const std::vector<Seconds>& column);
// t in the column's unit, three significant figures (0.0250, 3.00, 12.5) and whole from 100 on
// (180, 1234), the unit left to the column's header.
std::string in_unit(Seconds t, TimeUnit u);
// Three significant figures below 1000, then k/M/G/T/P; never an exponent (money() without "USD").
std::string amount(double v);
// A count and what it counts, singular when the number reads "1": "1 GPU-hour", "2 GPU-hours",
// "1.5 GPU-hours", "0 layouts". A whole number is written in full (1202 layouts), any other with
// three significant figures (amount()). `many` defaults to `one` + "s".
std::string count_words(double n, const std::string& one, const std::string& many = {});
// A text table whose columns are as wide as their widest cell (counted in code points, so "×" is
// one): a row with fewer cells than the header lets its last cell run on (a row that says why it
// has no figures).
struct Table {
  std::vector<std::string> header;
  std::vector<bool> right;  // per column: aligned right (numbers) or left (words)
  std::vector<std::vector<std::string>> rows;
};
std::string render(const Table& t, const std::string& indent = "  ");

// ---------------------------------------------------------------- chart geometry (plot.cpp)
// Ticks follow Heckbert's "nice numbers" [heckbert-1990]: a step of 1, 2 or 5 × 10^k chosen so
// that about `target` ticks cover the range, each tick a multiple of the step. Lines are clipped in
// axis space (after the log) with the Liang–Barsky parametric clip [liang-barsky-1984], so a roof
// y = B·x that starts below a plot's floor stays a straight line of slope 1 on log-log axes instead
// of bending where a clamp would flatten it.
namespace plot {

// A nice step (1, 2 or 5 × 10^k) near span / target, and the multiples of it covering [lo, hi]:
// the first tick ≤ lo, the last ≥ hi. Needs finite lo < hi and target ≥ 2.
struct Ticks {
  double step = 1;
  std::vector<double> values;
};
Ticks nice_ticks(double lo, double hi, int target = 5);

// Ticks for a log axis over [lo, hi] (both > 0): every decade; with fewer than three decades, the
// 2 and 5 multiples too. Values inside [lo, hi] only.
std::vector<double> log_ticks(double lo, double hi);

// A tick label as people read it: "0", "0.25", "40", "1.5k", "20M"; `step` sets the digits a
// linear axis needs (0 for a log axis: the value's own shortest form).
std::string tick_label(double v, double step = 0);

struct Scale {
  double lo = 0;  // data units; > 0 on a log scale
  double hi = 1;
  bool log = false;
  // Axis space: the value itself, or its log10.
  [[nodiscard]] double axis(double v) const;
};

// A range for data [lo, hi] on a linear axis: widened to nice ticks, from 0 when `from_zero`.
Scale linear_scale(double lo, double hi, bool from_zero = true);
// Whole decades around [lo, hi] (both > 0); under two decades of data, the nearest 1, 2 or 5 × 10^k
// around it.
Scale log_scale(double lo, double hi);

// A segment in axis space clipped to the [x.lo, x.hi] × [y.lo, y.hi] box; nullopt when it lies
// wholly outside. Liang–Barsky: the segment is p(t) = a + t·(b − a), t ∈ [0, 1], kept where every
// edge's inequality holds.
struct Segment {
  double x1, y1, x2, y2;
};
std::optional<Segment> clip(Segment s, const Scale& x, const Scale& y);

// Text boxes and label placement (label_layout.cpp). SVG text is measured before a browser lays it out,
// from the advance widths of Helvetica (Adobe's Helvetica AFM, 1/1000 em per glyph), widened by a
// margin for the wider sans-serif faces browsers substitute (DejaVu Sans, Arial). A box spans the
// ascent above the baseline and the descent below it, about one font size in all.
enum class Anchor { kStart, kMiddle, kEnd };
struct Box {
  double left = 0;
  double top = 0;
  double right = 0;
  double bottom = 0;
};
// The width of `s` (UTF-8) at font size `size`, in the same units as `size`.
double text_width(std::string_view s, double size);
// The box of text drawn at (x, y) (its baseline point) with SVG's text-anchor; `rotate` is 0, 90
// or -90 degrees about (x, y) (other angles are measured as 0).
Box text_box(double x, double y, std::string_view s, double size, Anchor anchor = Anchor::kStart, double rotate = 0);
// Whether two boxes overlap by more than `touch` in both directions (boxes that only touch do not).
bool overlaps(const Box& a, const Box& b, double touch = 0.5);
// Whether `inner` lies within `outer`, to `slack`.
bool within(const Box& inner, const Box& outer, double slack = 0.5);

// A greedy label placer [imhof-1975 ranks positions around a point the same way: right, left,
// above, below]: the first candidate whose box hits no taken box and stays within `bounds`.
// Candidates sit around the point (px, py) outside a marker of radius `clearance`; those further
// out come with a leader line back to the point. nullopt when none is free: the caller lists the
// label elsewhere (a legend or a key).
struct Placement {
  double x = 0;  // the text's anchor point and baseline
  double y = 0;
  Anchor anchor = Anchor::kStart;
  Box box;
  bool leader = false;  // a line from the point to (leader_x, leader_y), the box's nearest point
  double leader_x = 0;
  double leader_y = 0;
};
std::optional<Placement> place_label(double px, double py, double clearance, std::string_view text, double size,
                                     const std::vector<Box>& taken, const Box& bounds);

}  // namespace plot

}  // namespace gpusim::report
