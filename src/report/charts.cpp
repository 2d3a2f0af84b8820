// The search commands' pictures: compare (relative speed and speed per dollar against a baseline
// GPU, the normalized bars of Dettmers' GPU buying guide [dettmers-2023]), sweep (a report
// metric against the varied key, one line per combination of the other keys) and plan (time to
// train against cloud cost of every layout that fits, with the frontier no layout beats on both).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "gpusim/report.hpp"
#include "report/chart_words.hpp"
#include "report/format.hpp"
#include "report/plot.hpp"

namespace gpusim::report {

namespace {

struct Bars {
  const char* title;
  std::vector<std::optional<double>> values;  // relative to the baseline; nullopt: not known
};

}  // namespace

std::string compare_svg(const std::vector<search::CompareRow>& rows, const std::string& baseline) {
  std::vector<const search::CompareRow*> runs;
  const search::CompareRow* base = nullptr;
  for (const auto& r : rows) {
    if (r.estimate && r.estimate->eval.memory.fits()) {
      runs.push_back(&r);
      if (r.gpu == baseline) {
        base = &r;
      }
    }
  }
  // Rows are named by the GPU's display name; the label column is as wide as the widest.
  constexpr double kRow = 26, kTop = 84, kPanel = 200, kGap = 40, kNameSize = 11;
  double label_w = 60;
  for (const auto* r : runs) {
    label_w = std::max(label_w, plot::text_width(r->estimate->gpu_name, kNameSize));
  }
  const double label = plot::kMargin + label_w + 8;
  const double height = kTop + kRow * static_cast<double>(std::max<std::size_t>(runs.size(), 1)) + 60;
  const double width = label + 3 * (kPanel + kGap) + 20;
  Svg svg(width, height);
  const bool serving = base != nullptr && base->estimate->eval.inference.has_value();
  const std::string base_name = base != nullptr ? base->estimate->gpu_name : baseline;
  plot::title(svg, plot::kMargin, 22,
              strfmt("%s: each GPU relative to the %s (= 1)", serving ? "Serving" : "Training", base_name.c_str()),
              plot::kTitleSize, width - plot::kMargin);
  if (base == nullptr) {
    svg.text(plot::kMargin, 50, "the baseline GPU does not run this job", 12);
    return svg.str();
  }
  RunParts each = run_parts(*base->estimate);
  each.gpu = "each GPU";
  plot::title(svg, plot::kMargin, 40, run_words(each), plot::kSubtitleSize, width - plot::kMargin, "#555");
  auto speed = [](const answer::Estimate& e) { return e.eval.tokens_per_s; };
  auto per_purchase = [&](const answer::Estimate& e) -> std::optional<double> {
    const double usd = units::to_usd(e.cost_inputs.purchase);
    return usd > 0 ? std::optional<double>(speed(e) / usd) : std::nullopt;
  };
  auto per_cloud = [](const answer::Estimate& e) -> std::optional<double> {
    const double v = answer::usd_per_million_tokens(e);
    return v > 0 ? std::optional<double>(1 / v) : std::nullopt;
  };
  const answer::Estimate& b = *base->estimate;
  Bars panels[3] = {{serving ? "output tokens/s (× baseline)" : "tokens/s (× baseline)", {}},
                    {"tokens/s per purchase USD (× baseline)", {}},
                    {"tokens per cloud USD (× baseline)", {}}};
  for (const auto* r : runs) {
    const answer::Estimate& e = *r->estimate;
    panels[0].values.emplace_back(speed(e) / speed(b));
    const auto p = per_purchase(e), pb = per_purchase(b);
    panels[1].values.push_back(p && pb ? std::optional<double>(*p / *pb) : std::nullopt);
    const auto c = per_cloud(e), cb = per_cloud(b);
    panels[2].values.push_back(c && cb ? std::optional<double>(*c / *cb) : std::nullopt);
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double y = kTop + kRow * static_cast<double>(i);
    svg.text(label - 8, y + kRow / 2 + 4, runs[i]->estimate->gpu_name, kNameSize, "end",
             runs[i] == base ? "#d62728" : "#222");
  }
  for (int k = 0; k < 3; ++k) {
    const double left = label + k * (kPanel + kGap);
    double hi = 1;
    for (const auto& v : panels[k].values) {
      hi = std::max(hi, v.value_or(0));
    }
    const plot::Ticks ticks = plot::nice_ticks(0, hi, 4);
    const double x_hi = ticks.values.back();
    auto px = [&](double v) { return left + v / x_hi * kPanel; };
    plot::title(svg, left, kTop - 14, panels[k].title, 12, left + kPanel + kGap - 6, "#222", "axis-title");
    for (const double t : ticks.values) {
      svg.line(px(t), kTop - 6, px(t), height - 50, "#eee", 1);
      svg.text(px(t), height - 36, plot::tick_label(t, ticks.step) + "×", 10, "middle");
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const double y = kTop + kRow * static_cast<double>(i);
      const auto& v = panels[k].values[i];
      if (!v) {
        svg.text(left + 4, y + kRow / 2 + 4, "no price", 10, "start", "#888");
        continue;
      }
      svg.rect(left, y + 4, px(*v) - left, kRow - 8, runs[i] == base ? "#d62728" : plot::series_color(0));
      // The value after its bar, or inside it when the bar reaches the panel's end.
      const std::string value = strfmt("%.2f", *v);
      const bool inside = px(*v) + 4 + plot::text_width(value, 10) > left + kPanel + kGap - 4;
      svg.text(inside ? px(*v) - 4 : px(*v) + 4, y + kRow / 2 + 4, value, 10, inside ? "end" : "start",
               inside ? "#fff" : "#333");
    }
    svg.line(px(1), kTop - 6, px(1), height - 50, "#555", 1, "4,3");
  }
  std::string left_out;
  for (const auto& r : rows) {
    if (!r.estimate || !r.estimate->eval.memory.fits()) {
      left_out += (left_out.empty() ? "" : ", ") + (r.estimate ? r.estimate->gpu_name : r.gpu);
    }
  }
  if (!left_out.empty()) {
    plot::title(svg, plot::kMargin, 56, "not shown (the job does not fit or cannot run): " + left_out, 10,
                width - plot::kMargin, "#555");
  }
  plot::title(svg, plot::kMargin, height - 12,
              "purchase USD: the system's price from the [cost] table and spec files; cloud USD: the GPU's rate for "
              "the same work",
              10, width - plot::kMargin, "#555");
  return svg.str();
}

std::string plan_svg(const scenario::Scenario& sc, const search::PlanResult& r) {
  constexpr double kW = 760;
  Svg svg(kW, 500);
  const plot::Frame f{90, 58, 700, 400};
  plot::title(svg, plot::kMargin, 22, "Layouts that fit: time to train against cloud cost", plot::kTitleSize,
              kW - plot::kMargin);
  if (r.feasible.empty()) {
    plot::title(svg, plot::kMargin, 40, run_words(run_parts(sc)), plot::kSubtitleSize, kW - plot::kMargin, "#555");
    svg.text(f.left, f.top + 20, "no layout fits", 12);
    return svg.str();
  }
  double t_lo = 1e300, t_hi = 0, c_lo = 1e300, c_hi = 0;
  int g_lo = r.feasible.front().gpus, g_hi = g_lo;
  for (const auto& p : r.feasible) {
    t_lo = std::min(t_lo, units::to_hours(p.job_time));
    t_hi = std::max(t_hi, units::to_hours(p.job_time));
    c_lo = std::min(c_lo, units::to_usd(p.cloud));
    c_hi = std::max(c_hi, units::to_usd(p.cloud));
    g_lo = std::min(g_lo, p.gpus);
    g_hi = std::max(g_hi, p.gpus);
  }
  // What ran: the best layout, or the scenario's GPU and runtime when none is ranked.
  RunParts run = run_parts(sc);
  if (!r.best.empty()) {
    run.gpus = r.best.front().gpus;
    run.layout = r.best.front().layout;
  }
  plot::title(svg, plot::kMargin, 40,
              (r.best.empty() ? "" : "best: ") + run_words(run) +
                  (g_lo == g_hi ? "" : strfmt(" · %d to %d GPUs tried", g_lo, g_hi)),
              plot::kSubtitleSize, kW - plot::kMargin, "#555");
  // A little room around the points, so none sits on the frame.
  plot::Chart ch(svg, f, plot::log_scale(t_lo / 1.15, t_hi * 1.15), plot::log_scale(c_lo / 1.15, c_hi * 1.15));
  ch.axes("time to train (hours, log scale)", "cloud cost (USD, log scale)");
  for (const auto& p : r.feasible) {
    ch.dot(units::to_hours(p.job_time), units::to_usd(p.cloud), 2.2, "#999999", 0.5);
  }
  // The frontier: sorted by time, each layout cheaper than every faster one. With one GPU count
  // the cost is mostly the time times a fixed rate, and the points lie on one line: no frontier
  // is drawn then.
  std::vector<search::PlanPoint> sorted = r.feasible;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.job_time < b.job_time || (a.job_time == b.job_time && a.cloud < b.cloud);
  });
  std::vector<std::pair<double, double>> frontier;
  double cheapest = 1e300;
  for (const auto& p : sorted) {
    if (units::to_usd(p.cloud) < cheapest) {
      cheapest = units::to_usd(p.cloud);
      frontier.emplace_back(units::to_hours(p.job_time), cheapest);
    }
  }
  const bool trade_off = g_lo != g_hi && frontier.size() >= 2;
  if (trade_off) {
    ch.polyline(frontier, "#1f77b4", 2);
    for (const auto& [t, c] : frontier) {
      ch.dot(t, c, 4, "#1f77b4", 1);
    }
  }
  plot::Labels labels(svg, {f.left, f.top, f.right, f.bottom});
  if (!r.best.empty()) {
    const search::PlanRow& b = r.best.front();
    const double t = units::to_hours(b.eval.job_time), c = units::to_usd(b.cloud);
    ch.dot(t, c, 6, "#d62728", 1);
    const std::string words =
        strfmt("best: %s TP %d × PP %d × DP %d, %s, %s", count_words(b.gpus, "GPU").c_str(), b.layout.tensor,
               b.layout.pipeline, b.layout.data, duration(b.eval.job_time).c_str(), money(c).c_str());
    if (!labels.place(ch.px(t), ch.py(c), 6, words, 10, "#d62728")) {
      plot::title(svg, f.left, f.bottom + 80, words, 10, kW - plot::kMargin, "#d62728");
    }
  }
  const std::string fit = count_words(static_cast<double>(r.feasible.size()), "layout") +
                          (r.feasible.size() == 1 ? " that fits" : " that fit");
  plot::title(svg, f.left, f.bottom + 62,
              trade_off ? strfmt("%s (grey); blue: the frontier, no layout both faster and cheaper", fit.c_str())
                        : strfmt("%s (grey), all on %s: no frontier is drawn (plan --max-gpus tries more GPU counts)",
                                 fit.c_str(), count_words(g_lo, "GPU").c_str()),
              10, kW - plot::kMargin, "#555");
  return svg.str();
}

}  // namespace gpusim::report
