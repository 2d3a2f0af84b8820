// Text report: the DESIGN §5 content as an aligned table for a terminal.
#include "common/strfmt.hpp"

#include "gpusim/report/report.hpp"

namespace gpusim {
namespace {

using detail::strfmt;

// 570k, 1.2M, 3.4G: counts for people.
std::string human(double v) {
  const char* suffix[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (v >= 1000.0 && i < 5) {
    v /= 1000.0;
    ++i;
  }
  return v >= 100 || i == 0 ? strfmt("%.0f%s", v, suffix[i]) : strfmt("%.3g%s", v, suffix[i]);
}

std::string duration(Seconds t) {
  const double s = t.value();
  if (s == 0.0) {
    return "0";
  }
  if (s < 1e-3) {
    return strfmt("%.1f us", s * 1e6);
  }
  if (s < 1.0) {
    return strfmt("%.1f ms", s * 1e3);
  }
  if (s < 120.0) {
    return strfmt("%.2f s", s);
  }
  if (s < 2.0 * 3600.0) {
    return strfmt("%.1f min", s / 60.0);
  }
  if (s < 72.0 * 3600.0) {
    return strfmt("%.1f h", s / 3600.0);
  }
  return strfmt("%.1f days", s / 86400.0);
}

void line(std::string& out, const char* label, const std::string& text) {
  out += strfmt("  %-11s %s\n", label, text.c_str());
}

}  // namespace

std::string report_text(const Estimate& e) {
  std::string out;
  const MemoryBreakdown& m = e.memory;
  out += strfmt("%s — %d × %s (%.0f GiB, %.0f TFLOP/s %s dense)\n", e.scenario.c_str(), e.gpus, e.gpu_name.c_str(),
                units::to_gibibytes(m.capacity), units::to_teraflops(e.peak), to_string(e.dtype));
  const StepBreakdown& s = e.step;
  if (e.training) {
    std::string parts = strfmt("compute %s + exposed comm %s + overhead %s", duration(s.compute).c_str(),
                               duration(s.communication).c_str(), duration(s.overhead).c_str());
    if (s.bubble.value() > 0) {
      parts += " + pipeline bubble " + duration(s.bubble);
    }
    if (s.input_stall.value() > 0) {
      parts += " + input stall " + duration(s.input_stall);
    }
    line(out, "step",
         strfmt("%s = %s   (%s tokens)", duration(s.time).c_str(), parts.c_str(), human(e.tokens_per_step).c_str()));
    line(out, "throughput",
         strfmt("%s tokens/s (%s per GPU)   MFU %.0f %%   HFU %.0f %%   %.0f TFLOP/s per GPU",
                human(e.tokens_per_s).c_str(), human(e.tokens_per_s_per_gpu).c_str(), 100 * e.mfu, 100 * e.hfu,
                e.model_tflops_per_gpu));
  } else {
    const InferenceResult& r = *e.inference;
    line(out, "latency",
         strfmt("first token %s · %s per output token · request %s", duration(r.time_to_first_token).c_str(),
                duration(r.time_per_output_token).c_str(), duration(r.request_latency).c_str()));
    line(out, "throughput",
         strfmt("%s output tokens/s in decode (%s per GPU) · %s over whole requests · batch %.0f   %.0f TFLOP/s "
                "per GPU in decode",
                human(r.output_tokens_per_s).c_str(), human(e.tokens_per_s_per_gpu).c_str(),
                human(r.offline_output_tokens_per_s).c_str(), r.batch, e.model_tflops_per_gpu));
  }
  const double g = units::kGibi;  // memory in GiB, as devices report it
  line(out, "memory",
       strfmt("%.1f of %.1f GiB %s   weights %.2f · grads %.2f · optimizer %.2f · activations %.2f%s · other %.2f",
              m.total().value() / g, m.capacity.value() / g, m.fits() ? "fits" : "DOES NOT FIT", m.weights.value() / g,
              m.gradients.value() / g, m.optimizer.value() / g, m.activations.value() / g,
              m.kv_cache.value() > 0 ? strfmt(" · KV cache %.2f", m.kv_cache.value() / g).c_str() : "",
              m.other.value() / g));
  if (e.training) {
    line(out, "time",
         strfmt("%s to train %s tokens   %s GPU-hours", duration(e.train_time).c_str(), human(e.tokens).c_str(),
                human(e.gpu_hours).c_str()));
  }
  line(out, "power",
       strfmt("%.0f W per GPU avg   %.3g kWh · %.3g kg CO2e%s", e.gpu_avg_power.value(), e.energy_kwh, e.carbon_kg,
              e.training ? "" : " per request batch"));
  const std::string breakeven =
      e.cost.breakeven_days ? strfmt("break-even %.0f days at %.0f %% use", *e.cost.breakeven_days, 100 * e.utilization)
                            : strfmt("owning never pays back at %.0f %% use", 100 * e.utilization);
  line(out, "cost",
       strfmt("cloud %.3g USD at %.2f USD/GPU-h (%s) · owned %.3g USD (electricity %.3g + hardware %.3g) · %s",
              e.cost.cloud.value(), units::to_usd_per_hour(e.cloud_rate), e.cloud_gpu.c_str(), e.cost.owned().value(),
              e.cost.owned_electricity.value(), e.cost.owned_hardware.value(), breakeven.c_str()));
  line(out, "bottleneck", strfmt("%s — %s", to_string(e.bottleneck), e.bottleneck_reason.c_str()));
  for (std::size_t i = 0; i < e.advice.size(); ++i) {
    line(out, i == 0 ? "advice" : "", e.advice[i]);
  }
  const double total = s.compute.value();
  std::string kernels;
  for (std::size_t i = 0; i < e.ops.size() && i < 5; ++i) {
    const OpShare& op = e.ops[i];
    kernels += strfmt("%s%s %s %.0f %%", i == 0 ? "" : " · ", op.name.c_str(), to_string(op.phase),
                      total > 0 ? 100.0 * op.time.value() / total : 0.0);
  }
  line(out, "kernels", kernels + "  (share of kernel time)");
  return out;
}

std::string report_csv(const std::vector<Estimate>& rows) {
  std::string out =
      "scenario,gpu,gpus,step_time_s,tokens_per_s,tokens_per_s_per_gpu,mfu,hfu,memory_per_gpu_bytes,fits,"
      "train_time_s,gpu_hours,gpu_avg_w,energy_kwh,carbon_kg,cloud_usd,owned_usd,breakeven_days,bottleneck\n";
  for (const Estimate& e : rows) {
    std::string name = e.scenario;
    for (auto& c : name) {
      if (c == '"') {
        c = '\'';
      }
    }
    out += strfmt("\"%s\",%s,%d,%.6g,%.6g,%.6g,%.4f,%.4f,%.6g,%s,%.6g,%.6g,%.4g,%.6g,%.6g,%.6g,%.6g,%s,%s\n",
                  name.c_str(), e.gpu_id.c_str(), e.gpus, e.step.time.value(), e.tokens_per_s, e.tokens_per_s_per_gpu,
                  e.mfu, e.hfu, e.memory.total().value(), e.memory.fits() ? "true" : "false",
                  e.training ? e.train_time.value() : 0.0, e.gpu_hours, e.gpu_avg_power.value(), e.energy_kwh,
                  e.carbon_kg, e.cost.cloud.value(), e.cost.owned().value(),
                  e.cost.breakeven_days ? strfmt("%.1f", *e.cost.breakeven_days).c_str() : "", to_string(e.bottleneck));
  }
  return out;
}

}  // namespace gpusim
