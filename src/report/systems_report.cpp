// Reports of compare --systems: whole systems for one job, each at its best layout, with what a
// buyer weighs (purchase price, power, time, owned and cloud cost per job or per million tokens,
// the break-even of buying against renting), as text, JSON, CSV and bars.
#include <algorithm>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"
#include "report/plot.hpp"

namespace gpusim::report {

namespace {

using search::SystemRow;

// "2 × rtx3090", "2 × 8 × h100-sxm5-80gb".
std::string system_label(const search::SystemChoice& s) {
  return s.nodes > 1 ? strfmt("%d × %d × %s", s.nodes, s.gpus_per_node, s.gpu.c_str())
                     : strfmt("%d × %s", s.gpus_per_node, s.gpu.c_str());
}

std::string layout_label(const SystemRow& r) {
  const workload::Layout& l = r.layout;
  if (r.estimate->serving) {
    return strfmt("tp%d pp%d dp%d %s limit %lld", l.tensor, l.pipeline, l.data, r.format.c_str(),
                  static_cast<long long>(r.batch_limit));
  }
  return strfmt("tp%d pp%d dp%d zero%d mb%lld %s", l.tensor, l.pipeline, l.data, l.zero,
                static_cast<long long>(l.micro_batch), workload::to_string(l.recompute));
}

double owned_per_mtok(const answer::Estimate& e) {
  return e.eval.tokens > 0 ? units::to_usd(e.cost.owned()) / e.eval.tokens * units::kMega : 0.0;
}

std::string why_not(const SystemRow& r) {
  if (r.estimate && !step::runs(r.estimate->eval)) {
    return "DOES NOT FIT: " + shortfall_words(*r.estimate);
  }
  if (r.needs.value() > 0) {
    return strfmt("%s: the smallest needs %.1f GiB per GPU", r.problem.c_str(), gib(r.needs));
  }
  return r.problem;
}

bool serving_rows(const std::vector<SystemRow>& rows) {
  return std::any_of(rows.begin(), rows.end(),
                     [](const SystemRow& r) { return r.estimate && r.estimate->eval.inference.has_value(); });
}

}  // namespace

std::string systems_text(const std::string& title, const std::vector<SystemRow>& rows, search::Objective objective) {
  const bool serving = serving_rows(rows);
  const char* rank_by = serving ? (objective == search::Objective::kTime ? "the SLO met, then time per output token"
                                                                         : "the SLO met, then cloud USD per million "
                                                                           "output tokens")
                                : (objective == search::Objective::kTime ? "time to finish" : "cloud cost of the job");
  std::string out = "Compare systems: " + title + "\n  each system at its best layout, ranked by " + rank_by + "\n";
  std::vector<Seconds> times;
  for (const SystemRow& r : rows) {
    if (r.runs()) {
      times.push_back(serving ? r.estimate->eval.inference->tpot.p50 : r.estimate->eval.job_time);
    }
  }
  const TimeUnit unit = time_unit(times);
  std::vector<Seconds> ttfts;
  for (const SystemRow& r : rows) {
    if (r.runs() && serving) {
      ttfts.push_back(r.estimate->eval.inference->ttft.p99);
    }
  }
  const TimeUnit ttft_unit = time_unit(ttfts);
  Table t;
  if (serving) {
    t.header = {"rank",
                "system",
                "deployment",
                strfmt("TTFT p99 (%s)", ttft_unit.name),
                strfmt("TPOT p50 (%s)", unit.name),
                "out tokens/s",
                "SLO",
                "power (W)",
                "purchase (USD)",
                "owned USD/Mtok",
                "cloud USD/Mtok",
                "break-even"};
    t.right = {false, false, false, true, true, true, false, true, true, true, true, false};
  } else {
    t.header = {"rank",
                "system",
                "layout",
                strfmt("time (%s)", unit.name),
                "tokens/s",
                "memory/GPU (GiB)",
                "power (W)",
                "purchase (USD)",
                "owned/job (USD)",
                "cloud/job (USD)",
                "break-even"};
    t.right = {false, false, false, true, true, true, true, true, true, true, false};
  }
  int rank = 0;
  for (const SystemRow& r : rows) {
    if (!r.runs()) {
      t.rows.push_back({"-", system_label(r.system), why_not(r)});
      continue;
    }
    const answer::Estimate& e = *r.estimate;
    const std::string breakeven = breakeven_words(e.cost.breakeven, e.cost_inputs.lifetime);
    const std::string watts = strfmt("%.0f", units::to_watts(e.energy.system_power));
    const std::string purchase = amount(units::to_usd(e.cost_inputs.purchase));
    if (serving) {
      const step::InferenceResult& i = *e.eval.inference;
      t.rows.push_back({std::to_string(++rank), system_label(r.system), layout_label(r), in_unit(i.ttft.p99, ttft_unit),
                        in_unit(i.tpot.p50, unit), human(i.output_tokens_per_s),
                        e.slo ? (e.slo->met() ? "met" : "MISSED") : "-", watts, purchase, amount(owned_per_mtok(e)),
                        amount(answer::usd_per_million_tokens(e)), breakeven});
    } else {
      t.rows.push_back({std::to_string(++rank), system_label(r.system), layout_label(r), in_unit(e.eval.job_time, unit),
                        human(e.eval.tokens_per_s), strfmt("%.1f", gib(e.eval.memory.total())), watts, purchase,
                        amount(units::to_usd(e.cost.owned())), amount(units::to_usd(e.cost.cloud)), breakeven});
    }
  }
  out += render(t);
  out += serving ? "  owned = electricity + hardware share per million output tokens at the scenario's utilization; "
                   "power = GPUs and hosts while busy\n"
                 : "  time = wall clock for the whole job; owned = electricity + hardware share at the scenario's "
                   "utilization; power = GPUs and hosts while busy\n";
  out += "  break-even: owning the system against renting the same work in the cloud, at the scenario's utilization\n";
  return out;
}

std::string systems_json(const std::string& title, const std::vector<SystemRow>& rows, search::Objective objective) {
  JsonWriter w;
  w.begin_object();
  w.value("scenario", title);
  w.value("objective", base::name_in(search::kObjectiveNames, objective));
  w.begin_array("systems");
  for (const SystemRow& r : rows) {
    w.begin_object();
    w.value("system", r.text);
    w.value("gpu", r.system.gpu);
    w.value("nodes", r.system.nodes);
    w.value("gpus_per_node", r.system.gpus_per_node);
    w.value("gpus", r.system.gpus());
    w.value("layouts_sized", static_cast<double>(r.layouts));
    w.value("runs", r.runs());
    if (!r.runs()) {
      w.value("problem", why_not(r));
      w.end_object();
      continue;
    }
    const answer::Estimate& e = *r.estimate;
    w.value("gpu_name", e.gpu_name);
    const workload::Layout& l = r.layout;
    w.begin_object("layout");
    w.value("tensor", l.tensor);
    w.value("pipeline", l.pipeline);
    w.value("data", l.data);
    if (!e.serving) {
      w.value("zero", l.zero);
      w.value("micro_batch", static_cast<double>(l.micro_batch));
      w.value("recompute", workload::to_string(l.recompute));
    } else {
      w.value("weight_format", r.format);
      w.value("batch_limit", static_cast<double>(r.batch_limit));
    }
    w.end_object();
    w.value("memory_per_gpu_bytes", units::to_bytes(e.eval.memory.total()));
    if (e.eval.inference) {
      const step::InferenceResult& i = *e.eval.inference;
      w.value("ttft_p99_s", units::to_seconds(i.ttft.p99));
      w.value("tpot_p50_s", units::to_seconds(i.tpot.p50));
      w.value("output_tokens_per_s", i.output_tokens_per_s);
      e.slo ? w.value("slo_met", e.slo->met()) : w.null("slo_met");
      w.value("owned_usd_per_million_output_tokens", owned_per_mtok(e));
      w.value("cloud_usd_per_million_output_tokens", answer::usd_per_million_tokens(e));
    } else {
      w.value("time_s", units::to_seconds(e.eval.job_time));
      w.value("tokens_per_s", e.eval.tokens_per_s);
      w.value("mfu", e.eval.mfu);
      w.value("cloud_usd_per_million_tokens", answer::usd_per_million_tokens(e));
    }
    w.value("system_power_w", units::to_watts(e.energy.system_power));
    w.value("purchase_usd", units::to_usd(e.cost_inputs.purchase));
    w.value("owned_usd", units::to_usd(e.cost.owned()));
    w.value("cloud_usd", units::to_usd(e.cost.cloud));
    e.cost.breakeven ? w.value("breakeven_days", units::to_days(*e.cost.breakeven)) : w.null("breakeven_days");
    w.value("bottleneck", explain::to_string(e.diagnosis.bottleneck));
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.take() + "\n";
}

// One record per system: what it is, "ok" or why nothing runs on it, then its figures (empty when
// it does not run).
std::string systems_csv(const std::vector<SystemRow>& rows) {
  std::string out =
      "system,gpu,gpus,status,tensor,pipeline,data,weight_format,time_s,tokens_per_s,tpot_p50_s,slo_met,"
      "memory_per_gpu_bytes,system_power_w,purchase_usd,owned_usd,cloud_usd,usd_per_million_tokens,breakeven_days\n";
  for (const SystemRow& r : rows) {
    out += csv_field(r.text) + "," + csv_field(r.system.gpu) + "," + std::to_string(r.system.gpus()) + ",";
    if (!r.runs()) {
      out += csv_field(why_not(r)) + ",,,,,,,,,,,,,,,\n";
      continue;
    }
    const answer::Estimate& e = *r.estimate;
    const workload::Layout& l = r.layout;
    const bool inf = e.eval.inference.has_value();
    out += strfmt("ok,%d,%d,%d,%s,%s,%.6g,%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s\n", l.tensor, l.pipeline, l.data,
                  csv_field(r.format).c_str(), inf ? "" : strfmt("%.6g", units::to_seconds(e.eval.job_time)).c_str(),
                  inf ? e.eval.inference->output_tokens_per_s : e.eval.tokens_per_s,
                  inf ? strfmt("%.6g", units::to_seconds(e.eval.inference->tpot.p50)).c_str() : "",
                  e.slo ? (e.slo->met() ? "true" : "false") : "", units::to_bytes(e.eval.memory.total()),
                  units::to_watts(e.energy.system_power), units::to_usd(e.cost_inputs.purchase),
                  units::to_usd(e.cost.owned()), units::to_usd(e.cost.cloud), answer::usd_per_million_tokens(e),
                  e.cost.breakeven ? strfmt("%.6g", units::to_days(*e.cost.breakeven)).c_str() : "");
  }
  return out;
}

}  // namespace gpusim::report
