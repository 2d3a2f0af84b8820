// The serving plan: the deployments that meet the SLO, best first, the throughput-latency
// frontier (tokens/s per GPU against tokens/s per user, the trade-off batching makes), and what
// came closest when nothing meets it.
#include <algorithm>
#include <cmath>

#include "gpusim/report.hpp"
#include "report/chart_words.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"
#include "report/plot.hpp"
#include "report/svg.hpp"

namespace gpusim::report {
namespace {

using search::ServingPlanRow;

std::string slo_words(const scenario::Slo& s) {
  std::string out = strfmt("SLO at %s:", base::name_in(scenario::kPercentileNames, s.percentile));
  if (s.ttft) {
    out += " TTFT <= " + duration(*s.ttft);
  }
  if (s.tpot) {
    out += std::string(s.ttft ? "," : "") + " TPOT <= " + duration(*s.tpot);
  }
  if (s.e2e) {
    out += std::string(s.ttft || s.tpot ? "," : "") + " request <= " + duration(*s.e2e);
  }
  return out;
}

std::string speculation_words(const ServingPlanRow& r) {
  if (r.speculative_tokens == 0) {
    return "no speculation";
  }
  if (!r.estimate.serving) {
    return strfmt("speculation of %lld tokens", static_cast<long long>(r.speculative_tokens));
  }
  const workload::Speculative& sp = r.estimate.serving->inference.speculative;
  return strfmt("%s speculation of %lld tokens (%.2f per step)", base::name_in(workload::kSpecMethodNames, sp.method),
                static_cast<long long>(r.speculative_tokens), workload::tokens_per_step(sp));
}

// A split into pools, "1P+3D" (aggregated: "agg").
std::string pools_words(const ServingPlanRow& r) {
  return r.pools.on() ? strfmt("%dP+%dD", r.pools.prefill, r.pools.decode) : std::string("agg");
}

std::string deployment(const ServingPlanRow& r) {
  const std::string pools =
      r.pools.on() ? strfmt(", disaggregated into %d prefill and %d decode replicas", r.pools.prefill, r.pools.decode)
                   : "";
  return strfmt("%s, tensor %d x pipeline %d x data %d%s, %s weights, batch limit %lld%s",
                count_words(r.gpus, "GPU").c_str(), r.layout.tensor, r.layout.pipeline, r.layout.data, pools.c_str(),
                r.format.c_str(), static_cast<long long>(r.batch_limit),
                r.speculative_tokens > 0 ? (", " + speculation_words(r)).c_str() : "");
}

// The deployments as a table: rank (none on the frontier), layout, latencies at the SLO's
// percentile, each latency column in one unit, throughput and cost.
std::string deployments_text(const std::vector<ServingPlanRow>& rows, bool ranked, scenario::Percentile p,
                             bool speculation, bool pools) {
  std::vector<Seconds> ttft;
  std::vector<Seconds> tpot;
  for (const ServingPlanRow& r : rows) {
    ttft.push_back(answer::percentile_of(r.estimate.eval.inference->ttft, p));
    tpot.push_back(answer::percentile_of(r.estimate.eval.inference->tpot, p));
  }
  const TimeUnit ttft_unit = time_unit(ttft);
  const TimeUnit tpot_unit = time_unit(tpot);
  const char* q = base::name_in(scenario::kPercentileNames, p);
  Table t;
  t.header = {"rank",
              "gpus",
              "tp",
              "pp",
              "dp",
              "format",
              "limit",
              strfmt("TTFT %s (%s)", q, ttft_unit.name),
              strfmt("TPOT %s (%s)", q, tpot_unit.name),
              "tok/s/user",
              "tok/s/GPU",
              "USD/Mtok",
              "SLO"};
  t.right = {false, true, true, true, true, false, true, true, true, true, true, true, false};
  if (speculation) {  // a column for the tokens proposed per step, after the format
    t.header.insert(t.header.begin() + 6, "spec k");
    t.right.insert(t.right.begin() + 6, true);
  }
  if (pools) {  // the split into prefill and decode replicas, after the layout
    t.header.insert(t.header.begin() + 5, "pools");
    t.right.insert(t.right.begin() + 5, false);
  }
  int rank = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const ServingPlanRow& r = rows[k];
    t.rows.push_back({ranked ? std::to_string(++rank) : "", std::to_string(r.gpus), std::to_string(r.layout.tensor),
                      std::to_string(r.layout.pipeline), std::to_string(r.layout.data), r.format,
                      std::to_string(r.batch_limit), in_unit(ttft[k], ttft_unit), in_unit(tpot[k], tpot_unit),
                      strfmt("%.1f", r.per_user), amount(r.per_gpu), amount(r.usd_per_mtok),
                      r.estimate.slo ? (r.meets() ? "yes" : "no") : "-"});
    if (speculation) {
      t.rows.back().insert(t.rows.back().begin() + 6,
                           r.speculative_tokens > 0 ? std::to_string(r.speculative_tokens) : "off");
    }
    if (pools) {
      t.rows.back().insert(t.rows.back().begin() + 5, pools_words(r));
    }
  }
  return render(t);
}

// Why the best deployment speculates, or does not: its step against the best deployment of the
// other kind that meets the SLO.
std::string speculation_reason(const search::ServingPlanResult& r) {
  if (r.speculative_tokens.size() <= 1 || r.best.empty()) {
    return "";
  }
  const ServingPlanRow& top = r.best.front();
  const auto other = std::find_if(r.best.begin(), r.best.end(), [&](const ServingPlanRow& row) {
    return (row.speculative_tokens > 0) != (top.speculative_tokens > 0);
  });
  const std::string against =
      other == r.best.end()
          ? std::string(top.speculative_tokens > 0 ? "no deployment without it meets the SLO"
                                                   : "no deployment with it meets the SLO")
          : strfmt("%s / %s tok/s per GPU and %.1f / %.1f tok/s per user with %s", amount(top.per_gpu).c_str(),
                   amount(other->per_gpu).c_str(), top.per_user, other->per_user, speculation_words(*other).c_str());
  if (top.speculative_tokens > 0) {
    return "  the best speculates (" + speculation_words(top) +
           "): each step verifies its proposals in one pass that costs little more than one decode while the batch "
           "keeps decoding bound by reading the weights; " +
           against + "\n";
  }
  return "  the best does not speculate: at its batch the verify pass's extra tokens cost more than the " +
         std::string("accepted ones save; ") + against + "\n";
}

// Why the best deployment splits prefill and decode into pools, or does not: its latencies and rates
// against the best deployment of the other kind that meets the SLO.
std::string pools_reason(const search::ServingPlanResult& r, scenario::Percentile p) {
  if (!r.disaggregated || r.best.empty()) {
    return "";
  }
  const ServingPlanRow& top = r.best.front();
  const auto other = std::find_if(r.best.begin(), r.best.end(),
                                  [&](const ServingPlanRow& row) { return row.pools.on() != top.pools.on(); });
  const char* q = base::name_in(scenario::kPercentileNames, p);
  auto tpot = [&](const ServingPlanRow& row) {
    return duration(answer::percentile_of(row.estimate.eval.inference->tpot, p));
  };
  const std::string against =
      other == r.best.end()
          ? std::string(top.pools.on() ? "no aggregated deployment meets the SLO"
                                       : "no disaggregated deployment meets the SLO")
          : strfmt("TPOT %s %s against %s, %s / %s tok/s per GPU, for the best %s (%s)", q, tpot(top).c_str(),
                   tpot(*other).c_str(), amount(top.per_gpu).c_str(), amount(other->per_gpu).c_str(),
                   other->pools.on() ? "disaggregated" : "aggregated", pools_words(*other).c_str());
  if (top.pools.on()) {
    return "  the best splits prefill and decode (" + pools_words(top) +
           "): prompts no longer stall the decoding requests, and each pool runs one phase; " + against + "\n";
  }
  return "  the best is aggregated: its GPUs prefill and decode alike, with no KV handoff and no pool idle while the "
         "other is busy; " +
         against + "\n";
}

}  // namespace

std::string plan_serving_text(const scenario::Scenario& sc, const search::PlanOptions& o,
                              const search::ServingPlanResult& r, const std::optional<SearchTiming>& timing) {
  const scenario::Percentile p = sc.slo ? sc.slo->percentile : scenario::Percentile::kP50;
  std::string formats;
  for (const auto& f : r.formats) {
    formats += (formats.empty() ? "" : ", ") + f;
  }
  if (r.speculative_tokens.size() > 1) {
    formats += "; speculative tokens per step";
    for (const std::int64_t k : r.speculative_tokens) {
      formats += (k == r.speculative_tokens.front() ? " " : ", ") + (k > 0 ? std::to_string(k) : std::string("off"));
    }
  }
  std::string out = strfmt("Plan (serving): %s — %s, %s\n", scenario_title(sc).c_str(), sc.system.gpu.id.c_str(),
                           sc.runtime.name.c_str());
  out += strfmt("  %s · prompt %lld, output %lld tokens · %s\n",
                sc.job.inference->load.arrival == workload::Arrival::kPoisson
                    ? strfmt("Poisson arrivals at %.3g req/s", sc.job.inference->load.rate).c_str()
                    : "a closed loop of batch-limit requests in flight per replica",
                static_cast<long long>(sc.job.inference->prompt_tokens),
                static_cast<long long>(sc.job.inference->output_tokens),
                sc.slo ? slo_words(*sc.slo).c_str() : "no [slo]: every deployment that fits is ranked");
  const std::string ruled_out =
      r.ruled_out > 0 ? strfmt(", %llu not simulated (bounds show they miss the TPOT limit and would not be shown)",
                               static_cast<unsigned long long>(r.ruled_out))
                      : "";
  out += strfmt(
      "  %s (GPU counts up to %d; formats %s; batch limits in powers of two): %llu %s not fit, %llu "
      "simulated%s, %llu %s the SLO%s\n",
      count_words(static_cast<double>(r.candidates), "candidate").c_str(), std::max(sc.system.gpus, o.max_gpus),
      formats.c_str(), static_cast<unsigned long long>(r.no_fit), r.no_fit == 1 ? "does" : "do",
      static_cast<unsigned long long>(r.timed), ruled_out.c_str(), static_cast<unsigned long long>(r.meeting),
      r.meeting == 1 ? "meets" : "meet", timing ? (", in " + duration(Seconds(r.seconds))).c_str() : "");
  if (!r.best.empty()) {
    out += strfmt("best by %s:\n", o.objective == search::Objective::kTime ? "output tokens/s per GPU"
                                                                           : "cloud USD per million output tokens");
    out += deployments_text(r.best, true, p, r.speculative_tokens.size() > 1, r.disaggregated);
    out += speculation_reason(r);
    out += pools_reason(r, p);
  } else if (r.closest) {
    out += "  no deployment meets the SLO; the closest is " + deployment(*r.closest) + ":\n    " +
           slo_text(*r.closest->estimate.slo) + "\n";
  } else if (r.timed == 0) {
    out += strfmt(
        "  nothing fits: the smallest candidate needs %.1f GiB of %.1f GiB per GPU; add GPUs (--max-gpus) or a "
        "smaller weight format (--formats)\n",
        gib(r.smallest_no_fit), gib(sc.system.gpu.memory_capacity));
  }
  if (!r.meets_with_format.empty()) {
    out += strfmt("  with --formats %s a deployment on the same GPUs meets the SLO\n", r.meets_with_format.c_str());
  }
  if (r.meets_with_max_gpus > 0) {
    out += strfmt("  with --max-gpus %d a deployment meets the SLO\n", r.meets_with_max_gpus);
  } else if (r.more_gpus_tried) {
    out += strfmt(
        "  no deployment of up to %d GPUs meets the SLO in these formats: a looser SLO, a smaller weight "
        "format (--formats) or a faster GPU (--gpu)\n",
        search::kMaxSuggestedServingGpus);
  }
  if (!r.frontier.empty()) {
    out += "frontier (no other deployment gives both more tokens/s per user and more per GPU):\n";
    out += deployments_text(r.frontier, false, p, r.speculative_tokens.size() > 1, r.disaggregated);
  }
  out += "  tok/s/user = 1 / TPOT p50; tok/s/GPU = output tokens over whole requests per second per GPU\n";
  return out;
}

std::string plan_serving_json(const scenario::Scenario& sc, const search::ServingPlanResult& r,
                              const std::optional<SearchTiming>& timing) {
  JsonWriter w;
  w.begin_object();
  w.value("scenario", sc.name);
  w.value("candidates", static_cast<double>(r.candidates));
  w.value("no_fit", static_cast<double>(r.no_fit));
  w.value("simulated", static_cast<double>(r.timed));
  w.value("ruled_out", static_cast<double>(r.ruled_out));
  w.value("meeting_slo", static_cast<double>(r.meeting));
  if (!r.meets_with_format.empty()) {
    w.value("meets_with_format", r.meets_with_format);
  } else {
    w.null("meets_with_format");
  }
  if (r.meets_with_max_gpus > 0) {
    w.value("meets_with_max_gpus", static_cast<double>(r.meets_with_max_gpus));
  } else {
    w.null("meets_with_max_gpus");
  }
  if (timing) {
    w.value("seconds", r.seconds);
  }
  auto rows = [&w](const char* key, const std::vector<ServingPlanRow>& list) {
    w.begin_array(key);
    for (const ServingPlanRow& row : list) {
      const step::InferenceResult& i = *row.estimate.eval.inference;
      w.begin_object();
      w.value("gpus", row.gpus);
      w.value("tensor", row.layout.tensor);
      w.value("pipeline", row.layout.pipeline);
      w.value("data", row.layout.data);
      w.value("weight_format", row.format);
      w.value("batch_limit", static_cast<double>(row.batch_limit));
      w.value("speculative_tokens", static_cast<double>(row.speculative_tokens));
      w.value("prefill_replicas", row.pools.prefill);
      w.value("decode_replicas", row.pools.decode);
      w.value("ttft_p50_s", units::to_seconds(i.ttft.p50));
      w.value("ttft_p99_s", units::to_seconds(i.ttft.p99));
      w.value("tpot_p50_s", units::to_seconds(i.tpot.p50));
      w.value("tpot_p99_s", units::to_seconds(i.tpot.p99));
      w.value("tokens_per_s_per_user", row.per_user);
      w.value("tokens_per_s_per_gpu", row.per_gpu);
      w.value("usd_per_million_output_tokens", row.usd_per_mtok);
      if (row.estimate.slo) {
        w.value("meets_slo", row.meets());
      } else {
        w.null("meets_slo");
      }
      w.end_object();
    }
    w.end_array();
  };
  rows("best", r.best);
  rows("frontier", r.frontier);
  if (r.closest) {
    rows("closest", {*r.closest});
  }
  w.end_object();
  return w.take() + "\n";
}

// The frontier on log-log axes: every deployment on it, those meeting the SLO filled green, and
// the SLO's TPOT limit as the least tokens/s per user (1 / TPOT) it allows.
std::string plan_serving_svg(const scenario::Scenario& sc, const search::ServingPlanResult& r) {
  constexpr double kW = 720;
  constexpr plot::Frame f{80, 58, 700, 390};
  Svg svg(kW, 470);
  plot::title(svg, plot::kMargin, 22, "Serving plan: throughput per GPU against speed per user", plot::kTitleSize,
              kW - plot::kMargin);
  // What ran: the best deployment, else the first of the frontier; the GPU and runtime either way.
  RunParts run = run_parts(sc);
  const ServingPlanRow* shown = !r.best.empty() ? &r.best.front() : !r.frontier.empty() ? &r.frontier.front() : nullptr;
  if (shown != nullptr) {
    run.gpus = shown->gpus;
    run.layout = shown->layout;
    run.precision = shown->format;
  }
  plot::title(
      svg, plot::kMargin, 40,
      (r.best.empty() ? "" : "best: ") + run_words(run) + " · " + (sc.slo ? slo_words(*sc.slo) : std::string("no SLO")),
      plot::kSubtitleSize, kW - plot::kMargin, "#555");
  if (r.frontier.empty()) {
    svg.text(kW / 2, f.top + 40, "no deployment fits", 13, "middle");
    return svg.str();
  }
  // The least tokens/s per user the TPOT limit allows; 0 without one.
  const double slo_x =
      sc.slo && sc.slo->tpot && units::to_seconds(*sc.slo->tpot) > 0 ? 1 / units::to_seconds(*sc.slo->tpot) : 0;
  double x_lo = slo_x > 0 ? slo_x : 1e300, x_hi = slo_x;
  double y_lo = 1e300, y_hi = 0;
  for (const ServingPlanRow& row : r.frontier) {
    x_lo = std::min(x_lo, row.per_user);
    x_hi = std::max(x_hi, row.per_user);
    y_lo = std::min(y_lo, row.per_gpu);
    y_hi = std::max(y_hi, row.per_gpu);
  }
  // Room around the points, so that none sits on the frame.
  plot::Chart ch(svg, f, plot::log_scale(x_lo / 1.15, x_hi * 1.15), plot::log_scale(y_lo / 1.15, y_hi * 1.15));
  ch.axes("output tokens/s per user (tokens/s, 1 / TPOT p50, log scale)",
          "output tokens/s per GPU (tokens/s, log scale)");
  plot::Labels labels(svg, {f.left, f.top, f.right, f.bottom});
  // The legend first, at the top right inside the frame, so that labels keep clear of it.
  const char* const kLegend[] = {"frontier (no deployment beats both)", "meets the SLO; grey: misses it",
                                 "TPOT limit (1 / TPOT)", "TPOT limit: none in the SLO"};
  double legend_w = 0;
  for (const char* t : kLegend) {
    legend_w = std::max(legend_w, plot::text_width(t, 10) + 36);
  }
  const double lx = f.right - legend_w - 8, ly = f.top + 8;
  svg.rect(lx, ly, legend_w, sc.slo ? 50 : 22, "white", "#bbb");
  labels.avoid({lx, ly, lx + legend_w, ly + (sc.slo ? 50 : 22)});
  svg.line(lx + 6, ly + 11, lx + 22, ly + 11, "#1f77b4", 1.5);
  svg.text(lx + 28, ly + 15, kLegend[0], 10);
  if (sc.slo) {
    svg.circle(lx + 14, ly + 27, 4.5, "#2ca02c", 0.9);
    svg.text(lx + 28, ly + 31, kLegend[1], 10);
    svg.line(lx + 6, ly + 43, lx + 22, ly + 43, "#d62728", 1.5, "5,3");
    svg.text(lx + 28, ly + 47, slo_x > 0 ? kLegend[2] : kLegend[3], 10);
  }
  if (slo_x > 0) {
    ch.line(slo_x, ch.y().lo, slo_x, ch.y().hi, "#d62728", 1.5, "5,3");
    labels.place(ch.px(slo_x), f.bottom - 12, 2, strfmt("SLO: TPOT <= %s", duration(*sc.slo->tpot).c_str()), 10,
                 "#d62728");
  }
  std::vector<std::pair<double, double>> line;
  for (const ServingPlanRow& row : r.frontier) {
    line.emplace_back(row.per_user, row.per_gpu);
  }
  if (line.size() >= 2) {
    ch.polyline(line, "#1f77b4", 1.5);
  }
  for (const ServingPlanRow& row : r.frontier) {
    ch.dot(row.per_user, row.per_gpu, 4.5, row.meets() ? "#2ca02c" : "#bbbbbb", 0.9);
    labels.avoid_marker(ch.px(row.per_user), ch.py(row.per_gpu), 4.5);
  }
  std::vector<std::string> key;
  for (const ServingPlanRow& row : r.frontier) {
    const std::string name = strfmt("%d × TP %d %s batch %lld", row.gpus, row.layout.tensor, row.format.c_str(),
                                    static_cast<long long>(row.batch_limit));
    if (!labels.place(ch.px(row.per_user), ch.py(row.per_gpu), 4.5, name, 9)) {
      key.push_back(strfmt("%s at %.3g tokens/s per user", name.c_str(), row.per_user));
    }
  }
  if (!key.empty()) {
    plot::key_lines(svg, f.left, f.bottom + 64, kW - plot::kMargin, "Also on the frontier:", key);
  }
  return svg.str();
}

}  // namespace gpusim::report
