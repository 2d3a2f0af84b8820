// Reports of the searches: plan (ranked layouts, why the best wins, what was infeasible), compare
// (GPUs ranked for one job) and sweep (one row per grid point).
#include <algorithm>
#include <functional>

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
          "%s %s not fit in %.1f GiB per GPU%s (the smallest of them needs %.2f GiB%s)",
          count_words(static_cast<double>(n), "layout").c_str(), n == 1 ? "does" : "do",
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
                                                         : count_words(sc.system.gpus, "GPU");
  std::string text =
      strfmt("Plan: %s — %s, %s; %s sized, %llu fit and were timed", scenario_title(sc).c_str(),
             sc.system.gpu.id.c_str(), counts.c_str(), count_words(static_cast<double>(r.sized), "layout").c_str(),
             static_cast<unsigned long long>(r.timed));
  if (timing) {
    text += strfmt(" in %s (%.2f M timed/s), peak memory %.0f MB", duration(Seconds(r.seconds)).c_str(),
                   r.seconds > 0 ? static_cast<double>(r.timed) / r.seconds / units::kMega : 0.0, timing->peak_rss_mb);
  }
  text += "\n";
  // A mixture of experts adds the expert-parallel degree as a last column; a long-sequence job,
  // whose search includes context parallelism, its degree.
  const bool moe = sc.job.model.moe.has_value();
  const bool ring =
      std::any_of(r.best.begin(), r.best.end(), [](const PlanRow& row) { return row.layout.context > 1; });
  std::vector<Seconds> steps;
  std::vector<Seconds> times;
  for (const PlanRow& row : r.best) {
    steps.push_back(row.eval.step.time);
    times.push_back(row.eval.job_time);
  }
  const TimeUnit step_unit = time_unit(steps);
  const TimeUnit time = time_unit(times);
  Table t;
  t.header = {"rank", "gpus", "tensor", "pipe", "data", "zero", "micro", "recompute", "sp", "virt"};
  t.header.insert(t.header.end(), {strfmt("step (%s)", step_unit.name), "MFU (%)", "mem (GiB)",
                                   strfmt("time (%s)", time.name), "cloud (USD)"});
  t.right = {false, true, true, true, true, true, true, false, true, true, true, true, true, true, true};
  if (moe) {
    t.header.emplace_back("expert");
    t.right.push_back(true);
  }
  if (ring) {
    t.header.emplace_back("context");
    t.right.push_back(true);
  }
  int rank = 0;
  for (const PlanRow& row : r.best) {
    const Layout& l = row.layout;
    t.rows.push_back({std::to_string(++rank), std::to_string(row.gpus), std::to_string(l.tensor),
                      std::to_string(l.pipeline), std::to_string(l.data), std::to_string(l.zero),
                      std::to_string(l.micro_batch), workload::to_string(l.recompute), l.sequence ? "yes" : "no",
                      std::to_string(l.virtual_stages), in_unit(row.eval.step.time, step_unit),
                      strfmt("%.0f", pct(row.eval.mfu)), strfmt("%.1f", gib(row.eval.memory.total())),
                      in_unit(row.eval.job_time, time), amount(units::to_usd(row.cloud))});
    if (moe) {
      t.rows.back().push_back(std::to_string(l.expert));
    }
    if (ring) {
      t.rows.back().push_back(std::to_string(l.context));
    }
  }
  text += render(t);
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
// A GPU the job cannot run on, or does not fit on: said so in a row of its own, with no figure it
// would have only if it ran.
bool without_figures(const search::CompareRow& r, Table& t) {
  if (!r.estimate) {
    t.rows.push_back({"-", r.gpu, "cannot run: " + r.problem});
    return true;
  }
  if (!step::runs(r.estimate->eval)) {
    t.rows.push_back({"-", r.gpu, "DOES NOT FIT: " + shortfall_words(*r.estimate)});
    return true;
  }
  return false;
}

// One unit for a column of durations over the rows that run.
TimeUnit column_unit(const std::vector<search::CompareRow>& rows,
                     const std::function<Seconds(const answer::Estimate&)>& of) {
  std::vector<Seconds> column;
  for (const auto& r : rows) {
    if (r.estimate && step::runs(r.estimate->eval)) {
      column.push_back(of(*r.estimate));
    }
  }
  return time_unit(column);
}

// Serving scenarios compare what a user of the service sees and what it costs.
std::string compare_serving_text(const std::string& title, const std::vector<search::CompareRow>& rows) {
  using Pick = Seconds (*)(const step::InferenceResult&);
  const Pick picks[] = {[](const step::InferenceResult& i) { return i.ttft.p50; },
                        [](const step::InferenceResult& i) { return i.ttft.p99; },
                        [](const step::InferenceResult& i) { return i.tpot.p50; },
                        [](const step::InferenceResult& i) { return i.tpot.p99; }};
  std::vector<TimeUnit> units;
  for (const Pick pick : picks) {
    units.push_back(column_unit(rows, [pick](const answer::Estimate& e) { return pick(*e.eval.inference); }));
  }
  const char* const latencies[] = {"TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99"};
  Table t;
  t.header = {"rank", "gpu", "gpus"};
  for (std::size_t k = 0; k < units.size(); ++k) {
    t.header.push_back(strfmt("%s (%s)", latencies[k], units[k].name));
  }
  t.header.insert(t.header.end(), {"out tok/s", "req/s", "USD/Mtok", "purchase (USD)", "fits", "SLO", "bottleneck"});
  t.right = {false, false, true, true, true, true, true, true, true, true, true, false, false, false};
  int rank = 0;
  for (const auto& r : rows) {
    if (without_figures(r, t)) {
      continue;
    }
    const answer::Estimate& e = *r.estimate;
    const step::InferenceResult& i = *e.eval.inference;
    std::vector<std::string> row = {std::to_string(++rank), r.gpu, std::to_string(e.gpus)};
    for (std::size_t k = 0; k < units.size(); ++k) {
      row.push_back(in_unit(picks[k](i), units[k]));
    }
    row.insert(row.end(),
               {amount(i.output_tokens_per_s), amount(i.requests_per_s), amount(usd_per_million_tokens(e)),
                amount(units::to_usd(e.cost_inputs.purchase)), e.eval.memory.fits() ? "yes" : "NO",
                e.slo ? (e.slo->met() ? "met" : "MISSED") : "-",
                std::string(explain::to_string(e.diagnosis.bottleneck)) + (i.saturated ? " (saturated)" : "")});
    t.rows.push_back(std::move(row));
  }
  return "Compare: " + title + "\n" + render(t) +
         "  ranked by the SLO met, then cloud USD per million output tokens; latencies per request over the "
         "simulated load\n";
}
}  // namespace

std::string compare_text(const std::string& title, const std::vector<search::CompareRow>& rows) {
  for (const auto& r : rows) {
    if (r.estimate && r.estimate->eval.inference) {
      return compare_serving_text(title, rows);
    }
  }
  const TimeUnit step_unit = column_unit(rows, [](const answer::Estimate& e) { return e.eval.step.time; });
  const TimeUnit time = column_unit(rows, [](const answer::Estimate& e) { return e.eval.job_time; });
  Table t;
  t.header = {"rank", "gpu", "gpus", strfmt("step (%s)", step_unit.name), strfmt("time (%s)", time.name)};
  t.header.insert(t.header.end(), {"GPU-hours", "cloud (USD)", "owned (USD)", "purchase (USD)", "per Mtok (USD)",
                                   "MFU (%)", "fits", "bottleneck"});
  t.right = {false, false, true, true, true, true, true, true, true, true, true, false, false};
  int rank = 0;
  for (const auto& r : rows) {
    if (without_figures(r, t)) {
      continue;
    }
    const answer::Estimate& e = *r.estimate;
    t.rows.push_back({std::to_string(++rank), r.gpu, std::to_string(e.gpus), in_unit(e.eval.step.time, step_unit),
                      in_unit(e.eval.job_time, time), amount(units::to_hours(e.eval.gpu_time)),
                      amount(units::to_usd(e.cost.cloud)), amount(units::to_usd(e.cost.owned())),
                      amount(units::to_usd(e.cost_inputs.purchase)), amount(usd_per_million_tokens(e)),
                      strfmt("%.0f", pct(e.eval.mfu)), e.eval.memory.fits() ? "yes" : "NO",
                      explain::to_string(e.diagnosis.bottleneck)});
  }
  return "Compare: " + title + "\n" + render(t) +
         "  time = wall clock for the whole job; owned = electricity + hardware share at the scenario's "
         "utilization\n";
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
      w.value("purchase_usd", units::to_usd(e.cost_inputs.purchase));  // the system's price, run or not
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
