// One estimate as an aligned text table, as JSON (keys in docs/report.md) and as CSV rows.
#include <variant>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"

namespace gpusim::report {
namespace {

void line(std::string& out, const char* label, const std::string& text) {
  out += strfmt("  %-11s %s\n", label, text.c_str());
}

void write_value(JsonWriter& w, const char* key, const answer::FieldValue& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, answer::Null>) {
          w.null(key);
        } else {
          w.value(key, x);
        }
      },
      v);
}

}  // namespace

std::string estimate_text(const answer::Estimate& e) {
  const step::Evaluation& ev = e.eval;
  const physics::MemoryBreakdown& m = ev.memory;
  std::string out =
      strfmt("%s — %d × %s (%.0f GiB, %.0f TFLOP/s %s dense)\n", e.scenario.c_str(), e.gpus, e.gpu_name.c_str(),
             gib(m.capacity), units::to_teraflops(ev.peak), units::to_string(ev.dtype));
  line(out, "runtime", strfmt("%s (%s): %s", e.runtime_name.c_str(), e.runtime_id.c_str(), e.runtime_summary.c_str()));
  const step::StepBreakdown& s = ev.step;
  if (ev.training) {
    std::string parts = strfmt("compute %s + exposed comm %s + overhead %s", duration(s.compute).c_str(),
                               duration(s.communication).c_str(), duration(s.overhead).c_str());
    if (s.bubble.value() > 0) {
      parts += " + pipeline bubble " + duration(s.bubble);
    }
    if (s.input_stall.value() > 0) {
      parts += " + input stall " + duration(s.input_stall);
    }
    line(out, "step",
         strfmt("%s = %s   (%s tokens)", duration(s.time).c_str(), parts.c_str(), human(ev.tokens_per_step).c_str()));
    line(out, "throughput",
         strfmt("%s tokens/s (%s per GPU)   MFU %.0f %%   HFU %.0f %%   %.0f TFLOP/s per GPU",
                human(ev.tokens_per_s).c_str(), human(ev.tokens_per_s_per_gpu).c_str(), pct(ev.mfu), pct(ev.hfu),
                units::to_teraflops(ev.model_flops_per_gpu)));
  } else {
    const step::InferenceResult& r = *ev.inference;
    line(out, "latency",
         strfmt("first token %s · %s per output token · request %s", duration(r.time_to_first_token).c_str(),
                duration(r.time_per_output_token).c_str(), duration(r.request_latency).c_str()));
    line(out, "throughput",
         strfmt("%s output tokens/s in decode (%s per GPU) · %s over whole requests · batch %.0f   %.0f TFLOP/s "
                "per GPU in decode",
                human(r.output_tokens_per_s).c_str(), human(ev.tokens_per_s_per_gpu).c_str(),
                human(r.offline_output_tokens_per_s).c_str(), r.batch, units::to_teraflops(ev.model_flops_per_gpu)));
  }
  line(out, "memory",
       strfmt("%.1f of %.1f GiB %s   weights %.2f · grads %.2f · optimizer %.2f · activations %.2f%s · other %.2f",
              gib(m.total()), gib(m.capacity), m.fits() ? "fits" : "DOES NOT FIT", gib(m.weights), gib(m.gradients),
              gib(m.optimizer), gib(m.activations),
              m.kv_cache.value() > 0 ? strfmt(" · KV cache %.2f", gib(m.kv_cache)).c_str() : "", gib(m.other)));
  if (ev.training) {
    line(out, "time",
         strfmt("%s to train %s tokens   %s GPU-hours", duration(ev.job_time).c_str(), human(ev.tokens).c_str(),
                human(units::to_hours(ev.gpu_time)).c_str()));
  }
  line(out, "power",
       strfmt("%.0f W per GPU avg at %.0f MHz SM clock (%.0f %% of the rated boost)   %.3g kWh · %.3g kg CO2e%s",
              units::to_watts(ev.gpu_avg_power), e.sm_clock_mhz, pct(ev.clock), units::to_kwh(e.energy.energy),
              units::to_kilograms(e.energy.carbon), ev.training ? "" : " per request batch"));
  const std::string breakeven = e.cost.breakeven ? strfmt("break-even %.0f days at %.0f %% use",
                                                          units::to_days(*e.cost.breakeven), pct(e.utilization))
                                                 : strfmt("owning never pays back at %.0f %% use", pct(e.utilization));
  line(out, "cost",
       strfmt("cloud %.3g USD at %.2f USD/GPU-h (%s) · owned %.3g USD (electricity %.3g + hardware %.3g) · %s",
              units::to_usd(e.cost.cloud), units::to_usd_per_hour(e.cloud_rate), e.cloud_gpu.c_str(),
              units::to_usd(e.cost.owned()), units::to_usd(e.cost.owned_electricity),
              units::to_usd(e.cost.owned_hardware), breakeven.c_str()));
  line(out, "bottleneck", strfmt("%s — %s", explain::to_string(e.diagnosis.bottleneck), bottleneck_reason(e).c_str()));
  for (std::size_t i = 0; i < e.advice.size(); ++i) {
    line(out, i == 0 ? "advice" : "", advice_text(e, e.advice[i]));
  }
  std::string kernels;
  for (std::size_t i = 0; i < ev.ops.size() && i < 5; ++i) {
    const step::OpShare& op = ev.ops[i];
    kernels += strfmt("%s%s %s %.0f %%", i == 0 ? "" : " · ", op.name.c_str(), lowering::to_string(op.phase),
                      s.compute.value() > 0 ? pct(op.time / s.compute) : 0.0);
  }
  line(out, "kernels", kernels + "  (share of kernel time)");
  return out;
}

std::string estimate_json(const answer::Estimate& e) {
  JsonWriter w;
  w.begin_object();
  std::string open;  // the section whose object is open
  for (const answer::Field& f : answer::report_fields(e)) {
    if (open != f.section) {
      if (!open.empty()) {
        w.end_object();
      }
      open = f.section;
      if (!open.empty()) {
        w.begin_object(f.section);
      }
    }
    write_value(w, f.key, f.value);
  }
  if (!open.empty()) {
    w.end_object();
  }
  w.value("bottleneck_reason", bottleneck_reason(e));
  w.begin_array("advice");
  for (const auto& a : e.advice) {
    w.value(nullptr, advice_text(e, a));
  }
  w.end_array();
  w.end_object();
  return w.str() + "\n";
}

std::string estimate_csv(const std::vector<answer::Estimate>& rows) {
  std::string out =
      "scenario,gpu,gpus,step_time_s,tokens_per_s,tokens_per_s_per_gpu,mfu,hfu,memory_per_gpu_bytes,fits,"
      "train_time_s,gpu_hours,gpu_avg_w,energy_kwh,carbon_kg,cloud_usd,owned_usd,breakeven_days,bottleneck\n";
  for (const answer::Estimate& e : rows) {
    const step::Evaluation& ev = e.eval;
    out += strfmt("%s,%s,%d,%.6g,%.6g,%.6g,%.4f,%.4f,%.6g,%s,%.6g,%.6g,%.4g,%.6g,%.6g,%.6g,%.6g,%s,%s\n",
                  csv_field(e.scenario).c_str(), csv_field(e.gpu_id).c_str(), e.gpus, units::to_seconds(ev.step.time),
                  ev.tokens_per_s, ev.tokens_per_s_per_gpu, ev.mfu, ev.hfu, units::to_bytes(ev.memory.total()),
                  ev.memory.fits() ? "true" : "false", ev.training ? units::to_seconds(ev.job_time) : 0.0,
                  units::to_hours(ev.gpu_time), units::to_watts(ev.gpu_avg_power), units::to_kwh(e.energy.energy),
                  units::to_kilograms(e.energy.carbon), units::to_usd(e.cost.cloud), units::to_usd(e.cost.owned()),
                  e.cost.breakeven ? strfmt("%.1f", units::to_days(*e.cost.breakeven)).c_str() : "",
                  explain::to_string(e.diagnosis.bottleneck));
  }
  return out;
}

}  // namespace gpusim::report
