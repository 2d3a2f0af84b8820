// One estimate as an aligned text table, as JSON (keys in docs/report.md) and as CSV rows.
#include <array>
#include <charconv>
#include <cmath>
#include <string_view>
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
        } else if constexpr (std::is_same_v<T, physics::IntraPath>) {
          w.value(key, intra_path_text(x));
        } else {
          w.value(key, x);
        }
      },
      v);
}

// " (low–high)" after a figure, both ends shown as the figure is; "" without a band.
template <class Show>
std::string band(const answer::Estimate& e, std::string_view key, Show show) {
  const std::optional<answer::Band> b = answer::band_of(e, key);
  return b ? strfmt(" (%s–%s)", show(b->low).c_str(), show(b->high).c_str()) : std::string();
}
std::string band_duration(const answer::Estimate& e, std::string_view key) {
  return band(e, key, [](double v) { return duration(Seconds(v)); });
}
std::string band_human(const answer::Estimate& e, std::string_view key) {
  return band(e, key, [](double v) { return human(v); });
}

// The inputs with the largest part in the band, each with its share.
void unknowns_line(std::string& out, const answer::Estimate& e) {
  if (!e.uncertainty) {
    return;
  }
  constexpr std::size_t kShown = 3;
  std::string text;
  std::size_t shown = 0;
  for (const answer::Contribution& c : e.uncertainty->unknowns) {
    if (shown == kShown || c.share <= 0) {
      break;
    }
    text += strfmt("%s%s %.0f %%", shown == 0 ? "" : " · ", unknown_text(c).c_str(), pct(c.share));
    ++shown;
  }
  line(out, "unknowns",
       shown == 0 ? std::string("none of the inputs varied moves the figures") : text + "  (share of the band)");
}

// The stack in words: "CUDA-graph launch, flash2 attention, fused optimizer".
std::string stack_words(const answer::Estimate::Stack& st) {
  std::string out = st.cuda_graphs ? "CUDA-graph launch, " : "eager launch, ";
  out += st.convolutions ? std::string("convolutions as implicit GEMMs")
                         : std::string(base::name_in(workload::kAttentionNames, st.attention)) + " attention";
  if (st.optimizer) {
    out += std::string(", ") + base::name_in(workload::kOptimizerImplNames, *st.optimizer) + " optimizer";
  }
  return out;
}

// The engine, its load and the layout of an inference scenario, in words.
std::string serving_words(const answer::Estimate::Serving& sv) {
  const workload::ServingEngine& en = sv.engine;
  const workload::Inference& inf = sv.inference;
  const workload::Load& load = inf.load;
  std::string engine = en.scheduler == workload::Scheduler::kStatic
                           ? (inf.batch_max ? std::string("static batches as large as memory allows")
                                            : strfmt("static batches of %lld", static_cast<long long>(inf.batch)))
                           : strfmt("continuous batching (up to %lld sequences, %lld tokens per iteration%s)",
                                    static_cast<long long>(en.max_seqs), static_cast<long long>(en.max_batched_tokens),
                                    en.chunked_prefill ? ", chunked prefill" : "");
  std::string arrival;
  switch (load.arrival) {
    case workload::Arrival::kOffline:
      arrival = load.requests > 0 ? count_words(static_cast<double>(load.requests), "request") + " queued at once"
                                  : std::string("one batch per replica");
      break;
    case workload::Arrival::kConcurrency:
      arrival = strfmt("%s, %lld in flight", count_words(static_cast<double>(load.requests), "request").c_str(),
                       static_cast<long long>(load.concurrency));
      break;
    case workload::Arrival::kPoisson:
      arrival = strfmt("%s arriving at %.3g per second (Poisson)",
                       count_words(static_cast<double>(load.requests), "request").c_str(), load.rate);
      break;
  }
  const workload::Layout& l = sv.layout;
  std::string extras;
  std::string layout = strfmt("tensor %d x pipeline %d x data %d", l.tensor, l.pipeline, l.data);
  if (const workload::Disaggregation& d = inf.disaggregated; d.on()) {
    layout = strfmt("disaggregated: %s of %s for prompts, %s of %s for decoding",
                    count_words(d.prefill, "replica").c_str(), count_words(d.prefill_tensor, "GPU").c_str(),
                    count_words(d.decode, "replica").c_str(), count_words(d.decode_tensor, "GPU").c_str());
  }
  if (const workload::Speculative& sp = inf.speculative; sp.on()) {
    extras += strfmt(" · %s speculation: %lld tokens proposed per step, %.2f accepted per step on average (α %.2f)",
                     base::name_in(workload::kSpecMethodNames, sp.method), static_cast<long long>(sp.tokens),
                     workload::tokens_per_step(sp), sp.acceptance);
    if (!sp.draft_name.empty()) {
      extras += ", draft model " + sp.draft_name;
    }
  }
  if (inf.prefix.tokens > 0 && inf.prefix.hit_rate > 0 && en.scheduler == workload::Scheduler::kContinuous) {
    extras +=
        strfmt(" · prefix cache: %lld shared prompt tokens, found cached by %.0f %% of requests",
               static_cast<long long>(inf.prefix.tokens / en.kv_block * en.kv_block), 100.0 * inf.prefix.hit_rate);
  }
  return strfmt("%s · %s · prompt %lld, output %lld tokens · %s%s", engine.c_str(), arrival.c_str(),
                static_cast<long long>(inf.prompt_tokens), static_cast<long long>(inf.output_tokens), layout.c_str(),
                extras.c_str());
}

// Power, energy, carbon and cost: the lines of a job that runs.
void power_and_cost_lines(std::string& out, const answer::Estimate& e) {
  const step::Evaluation& ev = e.eval;
  line(out, "power",
       strfmt("%.0f W per GPU avg at %.0f MHz SM clock (%.0f %% of the rated boost)   %s · %s CO2e%s",
              units::to_watts(ev.gpu_avg_power), e.sm_clock_mhz, pct(ev.clock), energy(e.energy.energy).c_str(),
              mass_kg(units::to_kilograms(e.energy.carbon)).c_str(), ev.training ? "" : " for the simulated requests"));
  const std::string breakeven =
      strfmt("break-even %s at %.0f %% use", breakeven_words(e.cost.breakeven, e.cost_inputs.lifetime).c_str(),
             pct(e.utilization));
  line(out, "cost",
       strfmt("cloud %s at %.2f USD/GPU-h (%s) · owned %s (electricity %s + hardware %s of a %s system) · %s",
              money(units::to_usd(e.cost.cloud)).c_str(), units::to_usd_per_hour(e.cloud_rate), e.cloud_gpu.c_str(),
              money(units::to_usd(e.cost.owned())).c_str(), money(units::to_usd(e.cost.owned_electricity)).c_str(),
              money(units::to_usd(e.cost.owned_hardware)).c_str(), money(units::to_usd(e.cost_inputs.purchase)).c_str(),
              breakeven.c_str()));
  if (ev.inference && ev.tokens > 0 && !e.images) {
    line(out, "", money(answer::usd_per_million_tokens(e)) + " per million output tokens in the cloud");
  }
}

// The kernels that take the step's time, largest first.
void kernels_line(std::string& out, const answer::Estimate& e) {
  const step::Evaluation& ev = e.eval;
  const step::StepBreakdown& s = ev.step;
  std::string kernels;
  for (std::size_t i = 0; i < ev.ops.size() && i < 5; ++i) {
    const step::OpShare& op = ev.ops[i];
    kernels += strfmt("%s%s %s %.0f %%", i == 0 ? "" : " · ", op.name.c_str(), lowering::to_string(op.phase),
                      s.compute.value() > 0 ? pct(op.time / s.compute) : 0.0);
  }
  line(out, "kernels", kernels + "  (share of kernel time)");
}

}  // namespace

std::string estimate_text(const answer::Estimate& e) {
  const step::Evaluation& ev = e.eval;
  const physics::MemoryBreakdown& m = ev.memory;
  std::string out =
      strfmt("%s — %d × %s (%.0f GiB, %.0f TFLOP/s %s dense)\n", run_title(e).c_str(), e.gpus, e.gpu_name.c_str(),
             gib(m.capacity), units::to_teraflops(ev.peak), units::to_string(ev.dtype));
  line(out, "runtime",
       strfmt("%s (%s): %s", e.runtime_name.c_str(), e.runtime_id.c_str(), stack_words(e.stack).c_str()));
  const step::StepBreakdown& s = ev.step;
  const char* unit = e.images ? "images" : "tokens";
  // A job that cannot run says so first, and gives no figure it would have only if it ran.
  const bool ran = step::runs(ev);
  if (!ran) {
    if (ev.inference && !e.images) {
      line(out, "serving", e.serving ? serving_words(*e.serving) : std::string());
    }
    line(out, "fit",
         "DOES NOT FIT: " + shortfall_words(e) +
             "; no time, throughput, power or cost is given for a job that cannot run");
  } else if (ev.training) {
    std::string parts = strfmt("compute %s + exposed comm %s + overhead %s", duration(s.compute).c_str(),
                               duration(s.communication).c_str(), duration(s.overhead).c_str());
    if (s.bubble.value() > 0) {
      parts += " + pipeline bubble " + duration(s.bubble);
    }
    if (s.input_stall.value() > 0) {
      parts += " + input stall " + duration(s.input_stall);
    }
    if (s.offload.value() > 0) {
      parts += " + offload " + duration(s.offload);
    }
    line(out, "step",
         strfmt("%s%s = %s   (%s %s)", duration(s.time).c_str(), band_duration(e, "step.time_s").c_str(), parts.c_str(),
                human(e.images ? ev.samples_per_s * s.time.value() : ev.tokens_per_step).c_str(), unit));
    // An image model counts images, its samples (a ViT's tokens are its patches).
    line(out, "throughput",
         strfmt("%s %s/s%s · %s per GPU   MFU %.0f %%   HFU %.0f %%   %.0f TFLOP/s per GPU",
                human(e.images ? ev.samples_per_s : ev.tokens_per_s).c_str(), unit,
                band_human(e, e.images ? "throughput.samples_per_s" : "throughput.tokens_per_s").c_str(),
                human(e.images ? ev.samples_per_s / e.gpus : ev.tokens_per_s_per_gpu).c_str(), pct(ev.mfu), pct(ev.hfu),
                units::to_teraflops(ev.model_flops_per_gpu)));
    unknowns_line(out, e);
  } else if (e.images) {
    const step::InferenceResult& r = *ev.inference;
    line(out, "batch",
         strfmt("%.0f images per pass on each of %d replicas: %s%s per pass", r.batch, r.replicas,
                duration(s.time).c_str(), band_duration(e, "step.time_s").c_str()));
    line(out, "throughput",
         strfmt("%s images/s%s · %s per GPU   MFU %.0f %%   %.0f TFLOP/s per GPU", human(r.requests_per_s).c_str(),
                band_human(e, "inference.requests_per_s").c_str(), human(ev.tokens_per_s_per_gpu).c_str(), pct(ev.mfu),
                units::to_teraflops(ev.model_flops_per_gpu)));
    unknowns_line(out, e);
  } else {
    const step::InferenceResult& r = *ev.inference;
    line(out, "serving", e.serving ? serving_words(*e.serving) : std::string());
    auto pcts = [&e](const step::Percentiles& p, std::string_view p50_key) {
      return strfmt("p50 %s%s · p90 %s · p99 %s", duration(p.p50).c_str(), band_duration(e, p50_key).c_str(),
                    duration(p.p90).c_str(), duration(p.p99).c_str());
    };
    line(out, "latency", "first token " + pcts(r.ttft, "inference.time_to_first_token_s"));
    line(out, "", "per output token " + pcts(r.tpot, "inference.time_per_output_token_s"));
    line(out, "", "request " + pcts(r.e2e, "inference.request_latency_s") + " · queueing p50 " + duration(r.queue.p50));
    if (r.kv_transfer.value() > 0) {
      line(out, "",
           strfmt("KV handoff from the prefill to the decode pool: %.1f MiB per request in %s on average",
                  r.kv_transfer_bytes / (1024.0 * 1024.0), duration(r.kv_transfer).c_str()));
    }
    line(out, "throughput",
         strfmt("%s output tokens/s%s over whole requests (%s per GPU) · %s in decode · %.3g requests/s",
                human(r.output_tokens_per_s).c_str(), band_human(e, "inference.output_tokens_per_s").c_str(),
                human(ev.tokens_per_s_per_gpu).c_str(), human(r.decode_tokens_per_s).c_str(), r.requests_per_s));
    line(out, "",
         strfmt("%.0f tokens/s per user · %.0f sequences in flight per replica · MBU %.0f %% in decode · %.0f "
                "TFLOP/s per GPU",
                r.tokens_per_s_per_user, r.batch, pct(r.mbu), units::to_teraflops(ev.model_flops_per_gpu)));
    if (r.saturated) {
      line(out, "load",
           strfmt("saturates at %.3g req/s; the queue grows without bound at the offered rate",
                  r.saturation_requests_per_s));
    }
    if (r.truncated) {
      line(out, "load",
           strfmt("the simulation stopped at its iteration limit with %s completed (the KV pool thrashes); "
                  "the figures are over those",
                  count_words(std::round(r.requests), "request").c_str()));
    }
    if (e.slo) {
      line(out, "SLO", slo_text(*e.slo));
    }
    unknowns_line(out, e);
  }
  line(out, "memory",
       strfmt("%.1f of %.1f GiB%s %s   weights %.2f · grads %.2f · optimizer %.2f · activations %.2f%s · other %.2f",
              gib(m.total()), gib(m.budget.value() > 0 ? m.budget : m.capacity),
              m.budget.value() > 0 ? strfmt(" (engine share of %.1f)", gib(m.capacity)).c_str() : "",
              m.gpu_fits() ? "fits" : "DOES NOT FIT", gib(m.weights), gib(m.gradients), gib(m.optimizer),
              gib(m.activations), m.kv_cache.value() > 0 ? strfmt(" · KV cache %.2f", gib(m.kv_cache)).c_str() : "",
              gib(m.other)));
  if (m.host.value() > 0 || m.nvme.value() > 0) {
    std::string where = strfmt("offloaded per GPU: host memory %.1f GiB", gib(m.host));
    if (m.host_capacity.value() > 0) {
      where += strfmt(" of %.1f%s", gib(m.host_capacity), m.host_fits() ? "" : " (DOES NOT FIT in the host's memory)");
    }
    if (m.nvme.value() > 0) {
      where += strfmt(" · NVMe %.1f GiB", gib(m.nvme));
    }
    line(out, "", where);
  }
  if (ev.inference && ev.inference->kv_request_tokens > ev.inference->kv_capacity_tokens) {
    const step::InferenceResult& r = *ev.inference;
    line(out, "",
         strfmt("KV cache holds %s tokens per replica, short of the %s one request needs: the engine would "
                "refuse to start",
                human(r.kv_capacity_tokens).c_str(), human(r.kv_request_tokens).c_str()));
  } else if (ev.inference && ev.inference->kv_capacity_tokens > 0) {
    const step::InferenceResult& r = *ev.inference;
    line(out, "",
         strfmt("KV cache holds %s tokens per replica; %.0f %% in use on average; %s",
                human(r.kv_capacity_tokens).c_str(), pct(r.kv_utilization),
                count_words(std::round(r.preemptions), "preemption").c_str()));
  }
  if (ev.training && ran) {
    line(
        out, "time",
        strfmt(
            "%s to train %s %s   %s", duration(ev.job_time).c_str(),
            human(e.images && ev.tokens_per_s > 0 ? ev.tokens * ev.samples_per_s / ev.tokens_per_s : ev.tokens).c_str(),
            unit, count_words(units::to_hours(ev.gpu_time), "GPU-hour").c_str()));
  }
  if (ran) {
    power_and_cost_lines(out, e);
  }
  line(out, "bottleneck", strfmt("%s — %s", explain::to_string(e.diagnosis.bottleneck), bottleneck_reason(e).c_str()));
  for (std::size_t i = 0; i < e.advice.size(); ++i) {
    line(out, i == 0 ? "advice" : "", advice_text(e, e.advice[i]));
  }
  if (ran) {
    kernels_line(out, e);
  }
  return out;
}

std::string estimate_json(const answer::Estimate& e) {
  JsonWriter w;
  w.begin_object();
  // A dotted section ("inference.ttft_s") is an object inside its parent's.
  std::vector<std::string> open;
  auto split = [](const char* section) {
    std::vector<std::string> parts;
    std::string part;
    for (const char* c = section; *c != '\0'; ++c) {
      if (*c == '.') {
        parts.push_back(part);
        part.clear();
      } else {
        part += *c;
      }
    }
    if (!part.empty()) {
      parts.push_back(part);
    }
    return parts;
  };
  // The uncertainty section ends with the inputs its bands varied, largest share first (words).
  auto close = [&](const std::vector<std::string>& path) {
    if (path.size() == 1 && path[0] == "uncertainty") {
      w.begin_array("unknowns");
      if (e.uncertainty) {
        for (const answer::Contribution& c : e.uncertainty->unknowns) {
          w.value(nullptr, strfmt("%s: %.0f %% of the band", unknown_text(c).c_str(), pct(c.share)));
        }
      }
      w.end_array();
    }
    w.end_object();
  };
  for (const answer::Field& f : answer::report_fields(e)) {
    const std::vector<std::string> path = split(f.section);
    std::size_t common = 0;
    while (common < open.size() && common < path.size() && open[common] == path[common]) {
      ++common;
    }
    for (; open.size() > common; open.pop_back()) {
      close(open);
    }
    for (; open.size() < path.size(); open.push_back(path[open.size()])) {
      w.begin_object(path[open.size()].c_str());
    }
    write_value(w, f.key, f.value);
  }
  for (; !open.empty(); open.pop_back()) {
    close(open);
  }
  w.value("bottleneck_reason", bottleneck_reason(e));
  w.begin_array("advice");
  for (const auto& a : e.advice) {
    w.value(nullptr, advice_text(e, a));
  }
  w.end_array();
  w.end_object();
  return w.take() + "\n";
}

// RFC 4180 [rfc-4180]: a header of the JSON report's data fields, named by their dotted keys and in
// report order, then one record per estimate; text fields quoted when they hold a comma, quote or
// line break; null as an empty field; numbers exact, as in JSON.
namespace {

std::string dotted(const answer::Field& f) {
  std::string out = f.section;
  if (!out.empty()) {
    out += '.';
  }
  out += f.key;
  return out;
}

std::string csv_value(const answer::FieldValue& v) {
  if (const double* d = std::get_if<double>(&v)) {
    return std::isfinite(*d) ? exact_number(*d) : "";
  }
  if (const bool* b = std::get_if<bool>(&v)) {
    return *b ? "true" : "false";
  }
  if (const std::string* s = std::get_if<std::string>(&v)) {
    return csv_field(*s);
  }
  if (const auto* p = std::get_if<physics::IntraPath>(&v)) {
    return csv_field(intra_path_text(*p));
  }
  return "";
}

}  // namespace

std::string estimate_csv_header() {
  // The fields are the same for every estimate; their list comes from an empty one.
  std::string out;
  for (const answer::Field& f : answer::report_fields(answer::Estimate{})) {
    if (!out.empty()) {
      out += ',';
    }
    out += csv_field(dotted(f));
  }
  return out + "\n";
}

std::string estimate_csv_row(const answer::Estimate& e) {
  const std::vector<answer::Field> fields = answer::report_fields(e);
  std::string out;
  out.reserve(16 * fields.size());  // a row's numbers take about this many characters each
  bool first = true;
  for (const answer::Field& f : fields) {
    if (!first) {
      out += ',';
    }
    first = false;
    if (const double* d = std::get_if<double>(&f.value); d != nullptr && std::isfinite(*d)) {
      std::array<char, 32> buf{};  // as exact_number, without a string of its own
      out.append(buf.data(), write_shortest(buf.data(), buf.data() + buf.size(), *d));
    } else {
      out += csv_value(f.value);
    }
  }
  out += '\n';
  return out;
}

std::string estimate_csv(const std::vector<answer::Estimate>& rows) {
  std::string out = estimate_csv_header();
  for (const answer::Estimate& e : rows) {
    out += estimate_csv_row(e);
  }
  return out;
}

}  // namespace gpusim::report
