// compare --systems as bars: one row per system in rank order, one panel per figure a buyer
// weighs (time, purchase price, owned and cloud cost), each on its own axis from zero in its own
// unit; a system on which the job does not run keeps its row, with the reason in place of bars.
#include <algorithm>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/plot.hpp"

namespace gpusim::report {

namespace {

using search::SystemRow;

struct Panel {
  std::string title;
  std::vector<double> values;  // one per running row
};

constexpr double kRow = 26, kTop = 84, kPanel = 190, kGap = 36, kRight = 24, kFont = 11;

}  // namespace

std::string systems_svg(const std::string& title, const std::vector<SystemRow>& rows) {
  std::vector<const SystemRow*> runs;
  for (const SystemRow& r : rows) {
    if (r.runs()) {
      runs.push_back(&r);
    }
  }
  const bool serving = !runs.empty() && runs.front()->estimate->eval.inference.has_value();
  std::vector<Seconds> times;
  for (const SystemRow* r : runs) {
    times.push_back(serving ? r->estimate->eval.inference->tpot.p50 : r->estimate->eval.job_time);
  }
  const TimeUnit unit = time_unit(times);
  std::vector<Panel> panels = {
      {serving ? strfmt("time per output token, p50 (%s)", unit.name) : strfmt("time to finish (%s)", unit.name), {}},
      {"purchase price (USD)", {}},
      {serving ? "owned USD per million output tokens" : "owned cost of the job (USD)", {}},
      {serving ? "cloud USD per million output tokens" : "cloud cost of the job (USD)", {}}};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const answer::Estimate& e = *runs[i]->estimate;
    panels[0].values.push_back(times[i].value() / unit.seconds);
    panels[1].values.push_back(units::to_usd(e.cost_inputs.purchase));
    const double tokens = e.eval.tokens > 0 ? e.eval.tokens : 1;
    const double per = serving ? units::kMega / tokens : 1.0;
    panels[2].values.push_back(units::to_usd(e.cost.owned()) * per);
    panels[3].values.push_back(units::to_usd(e.cost.cloud) * per);
  }
  std::vector<std::string> labels;
  double label_w = 0;
  for (const SystemRow& r : rows) {
    const search::SystemChoice& s = r.system;
    labels.push_back(s.nodes > 1 ? strfmt("%d × %d × %s", s.nodes, s.gpus_per_node, s.gpu.c_str())
                                 : strfmt("%d × %s", s.gpus_per_node, s.gpu.c_str()));
    label_w = std::max(label_w, plot::text_width(labels.back(), kFont));
  }
  const double left0 = 16 + label_w + 10;
  const double width = left0 + 4 * kPanel + 3 * kGap + kRight;
  const double height = kTop + kRow * static_cast<double>(std::max<std::size_t>(rows.size(), 1)) + 56;
  Svg svg(width, height);
  plot::title(svg, 16, 26, "Which system: " + title, plot::kTitleSize, width - plot::kMargin);
  plot::title(svg, 16, 46,
              serving ? "each system at its best deployment; shorter bars are better"
                      : "each system at its best layout; shorter bars are better",
              plot::kSubtitleSize, width - plot::kMargin, "#555");
  // Rows in rank order: those that run, then the others.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].runs()) {
      order.push_back(i);
    }
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].runs()) {
      order.push_back(i);
    }
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    const double y = kTop + kRow * static_cast<double>(k);
    svg.text(left0 - 10, y + kRow / 2 + 4, labels[order[k]], kFont, "end");
    if (!rows[order[k]].runs()) {
      svg.text(left0, y + kRow / 2 + 4, "does not run: no layout fits on it", 10, "start", "#888");
    }
  }
  for (std::size_t p = 0; p < panels.size(); ++p) {
    const double left = left0 + static_cast<double>(p) * (kPanel + kGap);
    double hi = 0;
    for (const double v : panels[p].values) {
      hi = std::max(hi, v);
    }
    const plot::Ticks ticks = plot::nice_ticks(0, hi > 0 ? hi : 1, 3);
    const double x_hi = ticks.values.back();
    auto px = [&](double v) { return left + v / x_hi * kPanel; };
    svg.text(left + kPanel / 2, kTop - 14, panels[p].title, 10, "middle");
    // Grid lines span the rows with bars; the tick labels sit under every row.
    const double bottom = kTop + kRow * static_cast<double>(runs.size());
    const double under = kTop + kRow * static_cast<double>(rows.size());
    for (const double t : ticks.values) {
      svg.line(px(t), kTop - 4, px(t), bottom + 2, "#eee", 1);
      svg.text(px(t), under + 16, plot::tick_label(t, ticks.step), 10, "middle");
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const double y = kTop + kRow * static_cast<double>(i);
      const double v = panels[p].values[i];
      svg.rect(left, y + 5, std::max(px(v) - left, 0.5), kRow - 10, plot::series_color(p));
    }
  }
  plot::title(svg, 16, height - 12,
              "owned = electricity + hardware share at the scenario's utilization; cloud = renting the same work", 10,
              width - plot::kMargin, "#555");
  return svg.str();
}

}  // namespace gpusim::report
