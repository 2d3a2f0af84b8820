// The serving plan: the deployments that meet the SLO, best first, the throughput-latency
// frontier (tokens/s per GPU against tokens/s per user, the trade-off batching makes), and what
// came closest when nothing meets it.
#include <algorithm>
#include <cmath>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"
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

std::string deployment(const ServingPlanRow& r) {
  return strfmt("%d GPUs, tensor %d x pipeline %d x data %d, %s weights, batch limit %lld", r.gpus, r.layout.tensor,
                r.layout.pipeline, r.layout.data, r.format.c_str(), static_cast<long long>(r.batch_limit));
}

std::string row_text(int rank, const ServingPlanRow& r, scenario::Percentile p) {
  const step::InferenceResult& i = *r.estimate.eval.inference;
  return strfmt("  %-4s %4d %3d %3d %3d %-9s %6lld %11s %11s %10.1f %10.4g %9.3g %s\n",
                rank > 0 ? std::to_string(rank).c_str() : "", r.gpus, r.layout.tensor, r.layout.pipeline, r.layout.data,
                r.format.c_str(), static_cast<long long>(r.batch_limit),
                duration(answer::percentile_of(i.ttft, p)).c_str(), duration(answer::percentile_of(i.tpot, p)).c_str(),
                r.per_user, r.per_gpu, r.usd_per_mtok, r.estimate.slo ? (r.meets() ? "yes" : "no") : "-");
}

std::string header(scenario::Percentile p) {
  const char* q = base::name_in(scenario::kPercentileNames, p);
  return strfmt("  %-4s %4s %3s %3s %3s %-9s %6s %11s %11s %10s %10s %9s %s\n", "rank", "gpus", "tp", "pp", "dp",
                "format", "limit", (std::string("TTFT ") + q).c_str(), (std::string("TPOT ") + q).c_str(), "tok/s/user",
                "tok/s/GPU", "USD/Mtok", "SLO");
}

}  // namespace

std::string plan_serving_text(const scenario::Scenario& sc, const search::PlanOptions& o,
                              const search::ServingPlanResult& r, const std::optional<SearchTiming>& timing) {
  const scenario::Percentile p = sc.slo ? sc.slo->percentile : scenario::Percentile::kP50;
  std::string formats;
  for (const auto& f : r.formats) {
    formats += (formats.empty() ? "" : ", ") + f;
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
      "  %llu candidates (GPU counts up to %d; formats %s; batch limits in powers of two): %llu do not fit, %llu "
      "simulated%s, %llu meet the SLO%s\n",
      static_cast<unsigned long long>(r.candidates), std::max(sc.system.gpus, o.max_gpus), formats.c_str(),
      static_cast<unsigned long long>(r.no_fit), static_cast<unsigned long long>(r.timed), ruled_out.c_str(),
      static_cast<unsigned long long>(r.meeting), timing ? strfmt(", in %.2f s", r.seconds).c_str() : "");
  if (!r.best.empty()) {
    out += strfmt("best by %s:\n", o.objective == search::Objective::kTime ? "output tokens/s per GPU"
                                                                           : "cloud USD per million output tokens");
    out += header(p);
    int rank = 0;
    for (const ServingPlanRow& row : r.best) {
      out += row_text(++rank, row, p);
    }
  } else if (r.closest) {
    out += "  no deployment meets the SLO; the closest is " + deployment(*r.closest) + ":\n    " +
           slo_text(*r.closest->estimate.slo) + "\n";
  } else if (r.timed == 0) {
    out += strfmt(
        "  nothing fits: the smallest candidate needs %.1f GiB of %.1f GiB per GPU; add GPUs (--max-gpus) or a "
        "smaller weight format (--formats)\n",
        gib(r.smallest_no_fit), gib(sc.system.gpu.memory_capacity));
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
    out += header(p);
    for (const ServingPlanRow& row : r.frontier) {
      out += row_text(0, row, p);
    }
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

// The frontier on log-log axes: every deployment on it, those meeting the SLO filled green.
std::string plan_serving_svg(const scenario::Scenario& sc, const search::ServingPlanResult& r) {
  constexpr double kW = 720;
  constexpr double kH = 460;
  constexpr double kLeft = 80;
  constexpr double kRight = 20;
  constexpr double kTop = 40;
  constexpr double kBottom = 60;
  Svg svg(kW, kH);
  svg.text(kW / 2, 22, "Throughput per GPU against speed per user — " + sc.name, 13, "middle");
  if (r.frontier.empty()) {
    svg.text(kW / 2, kH / 2, "no deployment fits", 13, "middle");
    return svg.str();
  }
  double x_lo = 1e300;
  double x_hi = 0;
  double y_lo = 1e300;
  double y_hi = 0;
  for (const ServingPlanRow& row : r.frontier) {
    x_lo = std::min(x_lo, row.per_user);
    x_hi = std::max(x_hi, row.per_user);
    y_lo = std::min(y_lo, row.per_gpu);
    y_hi = std::max(y_hi, row.per_gpu);
  }
  // Whole decades around the data.
  const double lx0 = std::floor(std::log10(std::max(x_lo, 1e-9)));
  const double lx1 = std::max(lx0 + 1, std::ceil(std::log10(std::max(x_hi, 1e-9))));
  const double ly0 = std::floor(std::log10(std::max(y_lo, 1e-9)));
  const double ly1 = std::max(ly0 + 1, std::ceil(std::log10(std::max(y_hi, 1e-9))));
  auto px = [&](double v) { return kLeft + (std::log10(v) - lx0) / (lx1 - lx0) * (kW - kLeft - kRight); };
  auto py = [&](double v) { return kH - kBottom - (std::log10(v) - ly0) / (ly1 - ly0) * (kH - kTop - kBottom); };
  for (double d = lx0; d <= lx1; d += 1) {
    for (const double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, d);
      if (std::log10(v) > lx1 + 1e-9) {
        break;
      }
      svg.line(px(v), kTop, px(v), kH - kBottom, "#ddd", 0.5);
      svg.text(px(v), kH - kBottom + 16, strfmt("%g", v), 10, "middle");
    }
  }
  for (double d = ly0; d <= ly1; d += 1) {
    for (const double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, d);
      if (std::log10(v) > ly1 + 1e-9) {
        break;
      }
      svg.line(kLeft, py(v), kW - kRight, py(v), "#ddd", 0.5);
      svg.text(kLeft - 6, py(v) + 4, strfmt("%g", v), 10, "end");
    }
  }
  svg.text((kLeft + kW - kRight) / 2, kH - 18, "output tokens/s per user (1 / TPOT p50)", 12, "middle");
  svg.text(18, (kTop + kH - kBottom) / 2, "output tokens/s per GPU", 12, "middle", "#222", -90);
  for (std::size_t k = 1; k < r.frontier.size(); ++k) {
    const ServingPlanRow& a = r.frontier[k - 1];
    const ServingPlanRow& b = r.frontier[k];
    svg.line(px(a.per_user), py(a.per_gpu), px(b.per_user), py(b.per_gpu), "#1f77b4", 1.5);
  }
  for (const ServingPlanRow& row : r.frontier) {
    svg.circle(px(row.per_user), py(row.per_gpu), 4.5, row.meets() ? "#2ca02c" : "#bbbbbb", 0.9);
    svg.text(px(row.per_user) + 6, py(row.per_gpu) - 6,
             strfmt("%dx tp%d %s b%lld", row.gpus, row.layout.tensor, row.format.c_str(),
                    static_cast<long long>(row.batch_limit)),
             9);
  }
  if (sc.slo) {
    svg.text(kW - kRight, kTop - 6, "green: meets the SLO · grey: misses it", 10, "end");
  }
  return svg.str();
}

}  // namespace gpusim::report
