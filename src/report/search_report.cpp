// Reports of the searches: plan (ranked layouts, why the best wins, what was infeasible), compare
// (GPUs ranked for one job) and sweep (one row per grid point).
#include <algorithm>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"

namespace gpusim::report {
namespace {

using search::PlanRow;
using workload::Layout;

std::string describe(int gpus, const Layout& l) {
  return strfmt("gpus %d, tensor %d, pipeline %d, data %d, zero %d, micro_batch %lld, recompute %s%s%s%s%s", gpus,
                l.tensor, l.pipeline, l.data, l.zero, static_cast<long long>(l.micro_batch),
                workload::to_string(l.recompute), l.sequence ? ", sequence" : "",
                l.virtual_stages > 1 ? strfmt(", virtual_stages %d", l.virtual_stages).c_str() : "",
                l.expert > 1 ? strfmt(", expert %d", l.expert).c_str() : "",
                l.context > 1 ? strfmt(", context %d", l.context).c_str() : "");
}

// What separates the winner from the runner-up, in words.
std::string why_best(const search::PlanResult& r, search::Objective obj) {
  if (r.best.size() < 2) {
    return "the only feasible layout";
  }
  const PlanRow& a = r.best[0];
  const PlanRow& b = r.best[1];
  std::string diff;
  auto add = [&diff](const std::string& s) { diff += (diff.empty() ? "" : ", ") + s; };
  const Layout& x = a.layout;
  const Layout& y = b.layout;
  if (a.gpus != b.gpus) {
    add(strfmt("gpus %d vs %d", a.gpus, b.gpus));
  }
  if (x.tensor != y.tensor) {
    add(strfmt("tensor %d vs %d", x.tensor, y.tensor));
  }
  if (x.pipeline != y.pipeline) {
    add(strfmt("pipeline %d vs %d", x.pipeline, y.pipeline));
  }
  if (x.zero != y.zero) {
    add(strfmt("zero %d vs %d", x.zero, y.zero));
  }
  if (x.micro_batch != y.micro_batch) {
    add(strfmt("micro_batch %lld vs %lld", static_cast<long long>(x.micro_batch),
               static_cast<long long>(y.micro_batch)));
  }
  if (x.recompute != y.recompute) {
    add(strfmt("recompute %s vs %s", workload::to_string(x.recompute), workload::to_string(y.recompute)));
  }
  if (x.sequence != y.sequence) {
    add(x.sequence ? "sequence parallel" : "no sequence parallelism");
  }
  if (x.virtual_stages != y.virtual_stages) {
    add(strfmt("virtual_stages %d vs %d", x.virtual_stages, y.virtual_stages));
  }
  if (x.expert != y.expert) {
    add(strfmt("expert %d vs %d", x.expert, y.expert));
  }
  if (x.context != y.context) {
    add(strfmt("context %d vs %d", x.context, y.context));
  }
  const double gain = 1.0 - a.objective(obj) / b.objective(obj);
  const step::StepBreakdown& s = a.eval.step;
  const std::string vs = gain < 5e-4 ? strfmt("ties with #2 (%s) and needs less memory: %.1f vs %.1f GiB", diff.c_str(),
                                              gib(a.eval.memory.total()), gib(b.eval.memory.total()))
                                     : strfmt("%.1f %% better than #2 (%s)", pct(gain),
                                              diff.empty() ? "same layout, different GPU count" : diff.c_str());
  return strfmt(
      "%s; its step is %.0f %% compute, %.0f %% exposed communication, %.0f %% pipeline bubble, %.0f %% overhead",
      vs.c_str(), pct(s.compute / s.time), pct(s.communication / s.time), pct(s.bubble / s.time),
      pct(s.overhead / s.time));
}

std::string region_text(const scenario::Scenario& sc, const search::PlanResult& r, const search::Region& g) {
  const workload::ModelShape& m = sc.job.model;
  const auto n = static_cast<unsigned long long>(g.count);
  switch (g.why) {
    case search::Infeasible::kNoFit: {
      const workload::Training* t = sc.job.training ? &*sc.job.training : nullptr;
      const bool offload = t != nullptr && (t->offload_optimizer != workload::Offload::kNone ||
                                            t->offload_params != workload::Offload::kNone || t->offload_activations);
      return strfmt(
          "%llu layouts do not fit in %.1f GiB per GPU%s (the smallest of them needs %.2f GiB%s)", n,
          gib(sc.system.gpu.memory_capacity),
          offload ? strfmt(" or their offload in the host's %.0f GiB", gib(sc.system.host.memory)).c_str() : "",
          gib(r.closest_memory), offload ? " on the GPU" : "");
    }
    case search::Infeasible::kTensorDivides:
      return strfmt("%llu x tensor degrees that do not divide the %lld heads and ffn_hidden %lld", n,
                    static_cast<long long>(m.heads), static_cast<long long>(m.ffn_hidden));
    case search::Infeasible::kPipelineDivides:
      return strfmt("%llu x pipeline stages that do not divide the %lld layers", n, static_cast<long long>(m.layers));
    case search::Infeasible::kDataDivides:
      return strfmt("%llu x data-parallel degrees that do not divide the global batch of %lld", n,
                    static_cast<long long>(sc.job.training->global_batch));
  }
  return {};
}

}  // namespace

std::string plan_text(const scenario::Scenario& sc, const search::PlanOptions& o, const search::PlanResult& r,
                      const std::optional<SearchTiming>& timing) {
  const std::string counts = o.max_gpus > sc.system.gpus ? strfmt("%d to %d GPUs", sc.system.gpus, o.max_gpus)
                                                         : strfmt("%d GPUs", sc.system.gpus);
  std::string text = strfmt("Plan: %s — %s, %s; %llu layouts sized, %llu fit and were timed",
                            scenario_title(sc).c_str(), sc.system.gpu.id.c_str(), counts.c_str(),
                            static_cast<unsigned long long>(r.sized), static_cast<unsigned long long>(r.timed));
  if (timing) {
    text += strfmt(" in %.3f s (%.2f M timed/s), peak memory %.0f MB", r.seconds,
                   r.seconds > 0 ? static_cast<double>(r.timed) / r.seconds / units::kMega : 0.0, timing->peak_rss_mb);
  }
  text += "\n";
  // A mixture of experts adds the expert-parallel degree as a last column; a long-sequence job,
  // whose search includes context parallelism, its degree.
  const bool moe = sc.job.model.moe.has_value();
  const bool ring =
      std::any_of(r.best.begin(), r.best.end(), [](const PlanRow& row) { return row.layout.context > 1; });
  text += strfmt("  %-4s %5s %6s %5s %5s %4s %5s %-9s %3s %4s %9s %5s %9s %10s %11s%s%s\n", "rank", "gpus", "tensor",
                 "pipe", "data", "zero", "micro", "recompute", "sp", "virt", "step", "MFU", "mem GiB", "time", "cloud",
                 moe ? "  expert" : "", ring ? "  context" : "");
  int rank = 0;
  for (const PlanRow& row : r.best) {
    const Layout& l = row.layout;
    text += strfmt("  %-4d %5d %6d %5d %5d %4d %5lld %-9s %3s %4d %8.3fs %4.0f%% %9.1f %10s %11s%s%s\n", ++rank,
                   row.gpus, l.tensor, l.pipeline, l.data, l.zero, static_cast<long long>(l.micro_batch),
                   workload::to_string(l.recompute), l.sequence ? "yes" : "no", l.virtual_stages,
                   units::to_seconds(row.eval.step.time), pct(row.eval.mfu), gib(row.eval.memory.total()),
                   duration(row.eval.job_time).c_str(), money(units::to_usd(row.cloud)).c_str(),
                   moe ? strfmt("  %6d", l.expert).c_str() : "", ring ? strfmt("  %7d", l.context).c_str() : "");
  }
  if (!r.best.empty()) {
    text += "  best: " + why_best(r, o.objective) + "\n";
  } else if (r.closest) {
    text += strfmt(
        "  nothing fits: the closest layout (%s) needs %.1f GiB of %.1f GiB per GPU — memory ran out; add GPUs "
        "(--max-gpus), recompute, or a GPU with more memory\n",
        describe(r.closest->first, r.closest->second).c_str(), gib(r.closest_memory),
        gib(sc.system.gpu.memory_capacity));
  }
  if (!r.infeasible.empty()) {
    text += "  not feasible:\n";
    for (const auto& g : r.infeasible) {
      text += "    " + region_text(sc, r, g) + "\n";
    }
  }
  return text;
}

namespace {

// The layout of a plan row, as both of plan's JSON lists give it.
void layout_fields(JsonWriter& w, int gpus, const workload::Layout& l) {
  w.value("gpus", gpus);
  w.value("tensor", l.tensor);
  w.value("pipeline", l.pipeline);
  w.value("data", l.data);
  w.value("zero", l.zero);
  w.value("expert", l.expert);
  if (l.context > 1) {
    w.value("context", l.context);
  }
  w.value("micro_batch", static_cast<double>(l.micro_batch));
}

}  // namespace

std::string plan_json(const scenario::Scenario& sc, const search::PlanResult& r,
                      const std::optional<SearchTiming>& timing) {
  JsonWriter w;
  constexpr std::size_t kFeasibleRowBytes = 256;  // a feasible layout's object, indented (about 230 bytes)
  w.reserve((r.best.size() + r.feasible.size()) * kFeasibleRowBytes + 4096);
  w.begin_object();
  w.value("scenario", sc.name);
  w.value("sized", static_cast<double>(r.sized));
  w.value("timed", static_cast<double>(r.timed));
  if (timing) {
    w.value("seconds", r.seconds);
  }
  w.begin_array("best");
  for (const PlanRow& row : r.best) {
    w.begin_object();
    layout_fields(w, row.gpus, row.layout);
    w.value("recompute", workload::to_string(row.layout.recompute));
    w.value("sequence", row.layout.sequence);
    w.value("virtual_stages", row.layout.virtual_stages);
    w.value("step_time_s", units::to_seconds(row.eval.step.time));
    w.value("mfu", row.eval.mfu);
    w.value("memory_per_gpu_bytes", units::to_bytes(row.eval.memory.total()));
    w.value("train_time_s", units::to_seconds(row.eval.job_time));
    w.value("cloud_usd", units::to_usd(row.cloud));
    w.end_object();
  }
  w.end_array();
  // Every layout that fits (what plan --svg draws), for a frontier of one's own.
  w.begin_array("feasible");
  for (const search::PlanPoint& p : r.feasible) {
    w.begin_object();
    layout_fields(w, p.gpus, p.layout);
    w.value("train_time_s", units::to_seconds(p.job_time));
    w.value("cloud_usd", units::to_usd(p.cloud));
    w.end_object();
  }
  w.end_array();
  w.begin_array("infeasible");
  for (const auto& g : r.infeasible) {
    w.value(nullptr, region_text(sc, r, g));
  }
  w.end_array();
  w.end_object();
  return w.take() + "\n";
}

using answer::usd_per_million_tokens;

namespace {
std::string cannot_run(const search::CompareRow& r) {
  return strfmt("  %-4s %-16s cannot run: %s\n", "-", r.gpu.c_str(), r.problem.c_str());
}

// A GPU on which the job does not fit: said so, with no figure it would have only if it ran.
std::string does_not_fit(const search::CompareRow& r) {
  return strfmt("  %-4s %-16s DOES NOT FIT: %s\n", "-", r.gpu.c_str(), shortfall_words(*r.estimate).c_str());
}

// Serving scenarios compare what a user of the service sees and what it costs.
std::string compare_serving_text(const std::string& title, const std::vector<search::CompareRow>& rows) {
  std::string out = "Compare: " + title + "\n";
  out += strfmt("  %-4s %-16s %5s %10s %10s %10s %10s %12s %10s %10s %-5s %-6s %s\n", "rank", "gpu", "gpus", "TTFT p50",
                "TTFT p99", "TPOT p50", "TPOT p99", "out tok/s", "req/s", "USD/Mtok", "fits", "SLO", "bottleneck");
  int rank = 0;
  for (const auto& r : rows) {
    if (!r.estimate) {
      out += cannot_run(r);
      continue;
    }
    if (!step::runs(r.estimate->eval)) {
      out += does_not_fit(r);
      continue;
    }
    const answer::Estimate& e = *r.estimate;
    const step::InferenceResult& i = *e.eval.inference;
    out += strfmt("  %-4d %-16s %5d %8.1fms %8.1fms %8.1fms %8.1fms %12.4g %10.3g %10.3g %-5s %-6s %s%s\n", ++rank,
                  r.gpu.c_str(), e.gpus, units::to_ms(i.ttft.p50), units::to_ms(i.ttft.p99), units::to_ms(i.tpot.p50),
                  units::to_ms(i.tpot.p99), i.output_tokens_per_s, i.requests_per_s, usd_per_million_tokens(e),
                  e.eval.memory.fits() ? "yes" : "NO", e.slo ? (e.slo->met() ? "met" : "MISSED") : "-",
                  explain::to_string(e.diagnosis.bottleneck), i.saturated ? " (saturated)" : "");
  }
  out +=
      "  ranked by the SLO met, then cloud USD per million output tokens; latencies per request over the simulated "
      "load\n";
  return out;
}
}  // namespace

std::string compare_text(const std::string& title, const std::vector<search::CompareRow>& rows) {
  for (const auto& r : rows) {
    if (r.estimate && r.estimate->eval.inference) {
      return compare_serving_text(title, rows);
    }
  }
  std::string out = "Compare: " + title + "\n";
  out += strfmt("  %-4s %-16s %5s %10s %12s %10s %12s %12s %10s %6s %-5s %s\n", "rank", "gpu", "gpus", "step", "time",
                "GPU-hours", "cloud", "owned", "per Mtok", "MFU", "fits", "bottleneck");
  int rank = 0;
  for (const auto& r : rows) {
    if (!r.estimate) {
      out += cannot_run(r);
      continue;
    }
    if (!step::runs(r.estimate->eval)) {
      out += does_not_fit(r);
      continue;
    }
    const answer::Estimate& e = *r.estimate;
    out += strfmt("  %-4d %-16s %5d %10s %12s %10s %12s %12s %10s %5.0f%% %-5s %s\n", ++rank, r.gpu.c_str(), e.gpus,
                  duration(e.eval.step.time).c_str(), duration(e.eval.job_time).c_str(),
                  human(units::to_hours(e.eval.gpu_time)).c_str(), money(units::to_usd(e.cost.cloud)).c_str(),
                  money(units::to_usd(e.cost.owned())).c_str(), money(usd_per_million_tokens(e)).c_str(),
                  pct(e.eval.mfu), e.eval.memory.fits() ? "yes" : "NO", explain::to_string(e.diagnosis.bottleneck));
  }
  out += "  time = wall clock for the whole job; owned = electricity + hardware share at the scenario's utilization\n";
  return out;
}

std::string compare_json(const std::vector<search::CompareRow>& rows) {
  JsonWriter w;
  w.begin_array();
  for (const auto& r : rows) {
    w.begin_object();
    w.value("gpu", r.gpu);
    if (!r.estimate) {
      w.value("runs", false);
      w.value("problem", r.problem);
    } else {
      const answer::Estimate& e = *r.estimate;
      // A job that does not fit has no figure it would have only if it ran: those are null.
      const bool ran = step::runs(e.eval);
      auto figure = [&](const char* key, double v) { ran ? w.value(key, v) : w.null(key); };
      w.value("runs", true);
      w.value("gpus", e.gpus);
      figure("step_time_s", units::to_seconds(e.eval.step.time));
      figure("time_s", units::to_seconds(e.eval.job_time));
      figure("gpu_hours", units::to_hours(e.eval.gpu_time));
      figure("cloud_usd", units::to_usd(e.cost.cloud));
      figure("owned_usd", units::to_usd(e.cost.owned()));
      figure("usd_per_million_tokens", usd_per_million_tokens(e));
      if (e.slo) {
        ran ? w.value("slo_met", e.slo->met()) : w.null("slo_met");
      }
      figure("mfu", e.eval.mfu);
      w.value("fits", ran);
      w.value("memory_per_gpu_bytes", units::to_bytes(e.eval.memory.total()));
      w.value("bottleneck", explain::to_string(e.diagnosis.bottleneck));
    }
    w.end_object();
  }
  w.end_array();
  return w.take() + "\n";
}

// One record per GPU, as sweep does per point: the GPU id, `status` ("ok", or why the job cannot
// run on it, the remaining fields empty), then the report's fields.
std::string compare_csv(const std::vector<search::CompareRow>& rows) {
  const std::string columns = estimate_csv_header();
  std::string out = "gpu,status," + columns;
  const auto empty_columns = static_cast<std::size_t>(std::count(columns.begin(), columns.end(), ','));
  for (const auto& r : rows) {
    out += csv_field(r.gpu) + ",";
    if (r.estimate) {
      out += "ok," + estimate_csv_row(*r.estimate);
    } else {
      out += csv_field(r.problem) + std::string(empty_columns + 1, ',') + "\n";  // N fields after status
    }
  }
  return out;
}

std::string sweep_begin(SweepFormat f, const std::vector<search::Axis>& axes) {
  if (f == SweepFormat::kJson) {
    return "[";
  }
  std::string out;
  for (const auto& a : axes) {
    out += csv_field("vary." + a.key) + ",";  // "vary.": a varied key may also be a report field (system.gpus)
  }
  return out + "status," + estimate_csv_header();
}

std::string sweep_record(SweepFormat f, const std::vector<search::Axis>& axes, const search::SweepPoint& p,
                         std::size_t index) {
  if (f == SweepFormat::kCsv) {
    std::string out;
    for (const auto& v : p.values) {
      out += csv_field(v) + ",";
    }
    if (p.estimate) {
      return out + "ok," + estimate_csv_row(*p.estimate);
    }
    static const std::size_t empty_columns = [] {
      const std::string columns = estimate_csv_header();
      return static_cast<std::size_t>(std::count(columns.begin(), columns.end(), ','));
    }();
    return out + csv_field(p.problem) + std::string(empty_columns + 1, ',') + "\n";  // N fields after status
  }
  JsonWriter w(1);  // an element of the top-level array
  w.begin_object();
  for (std::size_t k = 0; k < axes.size(); ++k) {
    w.value(axes[k].key.c_str(), p.values[k]);
  }
  w.value("status", p.estimate ? std::string("ok") : p.problem);
  if (p.estimate) {
    const answer::Estimate& e = *p.estimate;
    // A point that does not fit has no figure it would have only if it ran: those are null.
    const bool ran = step::runs(e.eval);
    auto figure = [&](const char* key, double v) { ran ? w.value(key, v) : w.null(key); };
    figure("step_time_s", units::to_seconds(e.eval.step.time));
    figure("tokens_per_s", e.eval.tokens_per_s);
    figure("mfu", e.eval.mfu);
    w.value("memory_per_gpu_bytes", units::to_bytes(e.eval.memory.total()));
    w.value("fits", ran);
    figure("train_time_s", units::to_seconds(e.eval.job_time));
    figure("cloud_usd", units::to_usd(e.cost.cloud));
    w.value("bottleneck", explain::to_string(e.diagnosis.bottleneck));
  }
  w.end_object();
  return std::string(index == 0 ? "" : ",") + "\n  " + w.str();
}

std::string sweep_end(SweepFormat f, std::size_t /*points*/) { return f == SweepFormat::kJson ? "\n]\n" : ""; }

namespace {
std::string sweep_all(SweepFormat f, const std::vector<search::Axis>& axes,
                      const std::vector<search::SweepPoint>& points) {
  std::string out = sweep_begin(f, axes);
  for (std::size_t i = 0; i < points.size(); ++i) {
    out += sweep_record(f, axes, points[i], i);
  }
  return out + sweep_end(f, points.size());
}
}  // namespace

std::string sweep_csv(const std::vector<search::Axis>& axes, const std::vector<search::SweepPoint>& points) {
  return sweep_all(SweepFormat::kCsv, axes, points);
}

std::string sweep_json(const std::vector<search::Axis>& axes, const std::vector<search::SweepPoint>& points) {
  return sweep_all(SweepFormat::kJson, axes, points);
}

}  // namespace gpusim::report
