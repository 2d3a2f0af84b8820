// The band of an estimate: the one evaluator (step::evaluate) re-run at both ends of the plausible
// range of each uncertain input, one input at a time, and the deviations combined in quadrature.
//
// Rule. For an output y = f(x_1, ..., x_N) of independent inputs, the law of propagation of
// uncertainty gives u_c²(y) = Σ (∂f/∂x_i)² u²(x_i) [jcgm-gum-2008, §5.1.2, eq. (10)], where each
// term (∂f/∂x_i)·u(x_i) is the change of y when x_i alone moves by its uncertainty (§5.1.3), here
// evaluated by running the model with x_i at the end of its range. Every range in the spec files
// ([uncertainty] of the architecture, GPU and runtime files; specs/README.md) is a half-width at
// the same coverage, about 80 % (1.28 standard deviations of a normal spread; the coverage factor
// of §6.2-6.3): a measured spread (1.28 × the standard deviation of the fit rows' residuals after
// calibration, pooled over the rows of one kind of benchmark, §4.2.4) or an assumption labelled
// as one. A half-width of y from each input at that coverage then adds in quadrature to the
// half-width of y:
//   Δ_i⁺ = max(0, f(x_i + a_i) − y, f(x_i − a_i) − y),  Δ_i⁻ = max(0, y − f(x_i + a_i), y − f(x_i − a_i))
//   high = y + √(Σ Δ_i⁺²),  low = max(0, y − √(Σ Δ_i⁻²))
// The upward and downward deviations stay apart: the model is not linear (a roofline switches
// bounds, a clock settles under a power limit), and a range about 0 (a remainder, a hidden share)
// is one-sided. Every reported figure is a non-negative quantity, hence the floor at 0.
//
// Scenario keys left to their defaults are inputs too: an unset micro-batch (1) ranges up to the
// largest that fits in memory and divides the batch; an unnamed runtime adds its `unnamed` range
// to the remainder (how far another stack might be from the default one). The share of each input
// is its part of Σ (Δ_i⁺² + Δ_i⁻²) in the headline figure: step time for training, output tokens
// per second for LLM serving, images per second for image inference.
//
// The model's own error comes on top, as one more input in quadrature: what cross-validation
// measured of it on publications it was not fitted to (the scenario's model_error, from the
// catalog's uncertainty/model-error.toml). Its group's quantiles of ln(predicted / measured) bound
// the measured figure at their coverage [barber-jackknife-2021]; model_error.cpp turns them into
// deviations of each figure. The assumption ranges carry the model's sensitivity to what it was
// told; this term, what it does not know it lacks.
//
// Cost: two evaluations per input that can act on the job (about ten), in `estimate` and
// `validate` only (answer::Options::uncertainty); `plan`, `sweep` and `compare` skip it. A serving
// job's deviations are taken on a reduced load (reduced_load below): the same arrivals, rate,
// lengths and seed, fewer requests, each input's relative change applied to the full run's
// figures, so the band costs about one full simulation rather than twenty.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string_view>

#include "gpusim/answer.hpp"

namespace gpusim::answer {
namespace {

using Values = std::array<std::optional<double>, kBandCount>;

// The band keys' values of an evaluation, through the report's own fields (fields.cpp): a band
// key means exactly what the key means.
Values values_of(const step::Evaluation& ev, int gpus) {
  Estimate probe;
  probe.eval = ev;
  probe.gpus = gpus;
  Values out;
  for (const Field& f : all_fields(probe)) {
    const double* d = std::get_if<double>(&f.value);
    if (d == nullptr || !std::isfinite(*d)) {
      continue;
    }
    // The field's full key is section + "." + key (key alone at the top level), matched in place.
    const std::string_view section = f.section;
    const std::string_view key = f.key;
    for (std::size_t i = 0; i < kBandCount; ++i) {
      const std::string_view band = kBandKeys[i].key;
      const bool match = section.empty() ? band == key
                                         : band.size() == section.size() + 1 + key.size() &&
                                               band.substr(0, section.size()) == section &&
                                               band[section.size()] == '.' && band.substr(section.size() + 1) == key;
      if (match) {
        out[i] = *d;
      }
    }
  }
  return out;
}

// Every GEMM share moves together: the 16-bit one and those of fp8 and fp4 where they are stated.
void scale_gemm(hardware::Efficiency& e, double f) {
  e.gemm *= f;
  for (std::optional<double>* low : {&e.gemm_fp8, &e.gemm_fp4}) {
    if (*low) {
      **low *= f;
    }
  }
}

bool has(const std::vector<std::string>& list, std::string_view key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

// Every number an input moves: a move that changes none of them (a range clamped at 0 on its low
// side) needs no evaluation, its deviation being 0.
std::vector<double> moved_numbers(const scenario::Scenario& s) {
  const hardware::Efficiency& e = s.system.gpu.efficiency;
  const workload::Runtime& r = s.runtime;
  return {e.gemm,
          e.gemm_fp8.value_or(0),
          e.gemm_fp4.value_or(0),
          e.attention,
          e.attention_flash3.value_or(0),
          e.dram,
          e.gemv_inflight_per_sm.value(),
          e.peer_link,
          e.nvls,
          e.kernel_overhead.value(),
          e.launch_eager.value(),
          e.launch_graph.value(),
          r.gemv_inflight.value(),
          r.remainder,
          r.overlap.data_parallel,
          r.overlap.parameter_gather,
          r.overlap.tensor_parallel,
          r.overlap.pipeline,
          r.overlap.expert_parallel,
          r.dispatch.value(),
          r.serving.step_overhead.value(),
          static_cast<double>(s.layout.micro_batch)};
}

// One input: how to move it (sign −1: the low end, +1: the high end), and what the report says of it.
struct Input {
  Contribution about;
  std::function<void(scenario::Scenario&, double sign)> move;
  bool one_sided_high = false;  // a single evaluation at the high end (the micro-batch)
};

// The largest micro-batch that divides the sequences per replica and fits in memory (the layout's
// own when none larger does).
std::int64_t largest_micro_batch(const scenario::Scenario& sc) {
  const workload::Training& t = *sc.job.training;
  const std::int64_t per_replica = t.global_batch / std::max(1, sc.layout.data);
  const step::Evaluator ev(sc.system, sc.job, sc.runtime, step::Evaluator::Borrow{});
  std::vector<std::int64_t> divisors;
  for (std::int64_t d = 1; d * d <= per_replica; ++d) {
    if (per_replica % d == 0) {
      divisors.push_back(d);
      divisors.push_back(per_replica / d);
    }
  }
  std::sort(divisors.rbegin(), divisors.rend());
  for (const std::int64_t m : divisors) {
    if (m <= sc.layout.micro_batch) {
      break;
    }
    workload::Layout l = sc.layout;
    l.micro_batch = m;
    if (ev.memory(l).fits()) {
      return m;
    }
  }
  return sc.layout.micro_batch;
}

std::vector<Input> inputs_of(const scenario::Scenario& sc, const Estimate& point) {
  const hardware::GpuSpec& g = sc.system.gpu;
  const hardware::EfficiencyRanges& gr = g.ranges;
  const workload::RuntimeRanges& rr = sc.runtime.ranges;
  const bool training = sc.job.training.has_value();
  const bool transformer = sc.job.model.family != workload::Family::kResNet;
  const bool several = sc.system.gpus > 1;
  std::vector<Input> in;
  auto gpu_input = [&](Unknown u, double range, auto&& move) {
    if (range <= 0) {
      return;
    }
    Contribution c{u, g.id, hardware::to_string(g.arch), range, has(gr.assumed, to_string(u)), 0, std::nullopt};
    in.push_back({c, [range, move](scenario::Scenario& s, double sign) { move(s.system.gpu, 1.0 + sign * range); }});
  };
  auto runtime_input = [&](Unknown u, double range, auto&& move) {
    if (range <= 0) {
      return;
    }
    Contribution c{u, sc.runtime.id, "", range, has(rr.assumed, to_string(u)), 0, std::nullopt};
    in.push_back({c, [range, move](scenario::Scenario& s, double sign) { move(s.runtime, sign * range); }});
  };

  // The GEMM range of the datatype the job computes in (fp4 falls back to fp8's, fp8 to the 16-bit one).
  const DType dt = point.eval.dtype;
  const double fp8_range = gr.gemm_fp8.value_or(gr.gemm);
  const double gemm_range = dt == DType::kFp4   ? gr.gemm_fp4.value_or(fp8_range)
                            : dt == DType::kFp8 ? fp8_range
                                                : gr.gemm;
  gpu_input(Unknown::kGemm, gemm_range, [](hardware::GpuSpec& s, double f) { scale_gemm(s.efficiency, f); });
  if (transformer) {
    gpu_input(Unknown::kAttention, gr.attention, [](hardware::GpuSpec& s, double f) {
      s.efficiency.attention *= f;
      if (s.efficiency.attention_flash3) {
        *s.efficiency.attention_flash3 *= f;
      }
    });
  }
  gpu_input(Unknown::kDram, gr.dram, [](hardware::GpuSpec& s, double f) { s.efficiency.dram *= f; });
  if (!training && transformer) {
    // The runtime's own in-flight bytes, where it states them, replace the architecture's.
    gpu_input(Unknown::kGemvInflight, gr.gemv_inflight, [](hardware::GpuSpec& s, double f) {
      s.efficiency.gemv_inflight_per_sm = s.efficiency.gemv_inflight_per_sm * f;
    });
    if (gr.gemv_inflight > 0 && sc.runtime.gemv_inflight.value() > 0) {
      auto& mv = in.back().move;
      const double range = gr.gemv_inflight;
      mv = [range](scenario::Scenario& s, double sign) {
        s.system.gpu.efficiency.gemv_inflight_per_sm =
            s.system.gpu.efficiency.gemv_inflight_per_sm * (1.0 + sign * range);
        s.runtime.gemv_inflight = s.runtime.gemv_inflight * (1.0 + sign * range);
      };
    }
  }
  if (several) {
    gpu_input(Unknown::kPeerLink, gr.peer_link, [](hardware::GpuSpec& s, double f) {
      s.efficiency.peer_link *= f;
      s.efficiency.nvls *= f;
    });
  }
  gpu_input(Unknown::kKernelOverhead, gr.kernel_overhead,
            [](hardware::GpuSpec& s, double f) { s.efficiency.kernel_overhead = s.efficiency.kernel_overhead * f; });
  gpu_input(Unknown::kLaunch, gr.launch, [](hardware::GpuSpec& s, double f) {
    s.efficiency.launch_eager = s.efficiency.launch_eager * f;
    s.efficiency.launch_graph = s.efficiency.launch_graph * f;
  });
  if (!g.measured()) {
    gpu_input(Unknown::kBetweenGpus, gr.between_gpus, [](hardware::GpuSpec& s, double f) {
      scale_gemm(s.efficiency, f);
      s.efficiency.attention *= f;
      if (s.efficiency.attention_flash3) {
        *s.efficiency.attention_flash3 *= f;
      }
      s.efficiency.dram *= f;
    });
  }

  runtime_input(Unknown::kRemainder, rr.remainder,
                [](workload::Runtime& r, double d) { r.remainder = std::max(0.0, r.remainder + d); });
  if (several && training) {
    runtime_input(Unknown::kOverlap, rr.overlap, [](workload::Runtime& r, double d) {
      for (double* share : {&r.overlap.data_parallel, &r.overlap.parameter_gather, &r.overlap.tensor_parallel,
                            &r.overlap.pipeline, &r.overlap.expert_parallel}) {
        *share = std::clamp(*share + d, 0.0, 1.0);
      }
    });
  }
  if (sc.runtime.dispatch.value() > 0) {
    runtime_input(Unknown::kDispatch, rr.dispatch,
                  [](workload::Runtime& r, double d) { r.dispatch = r.dispatch * (1.0 + d); });
  }
  if (!training) {
    runtime_input(Unknown::kStepOverhead, rr.step_overhead.value(), [](workload::Runtime& r, double d) {
      r.serving.step_overhead = Seconds(std::max(0.0, r.serving.step_overhead.value() + d));
    });
  }
  if (sc.unset.runtime) {
    runtime_input(Unknown::kRuntime, rr.unnamed,
                  [](workload::Runtime& r, double d) { r.remainder = std::max(0.0, r.remainder + d); });
  }
  if (training && sc.unset.micro_batch) {
    const std::int64_t largest = largest_micro_batch(sc);
    if (largest > sc.layout.micro_batch) {
      Contribution c{Unknown::kMicroBatch, "", "", static_cast<double>(largest), false, 0, std::nullopt};
      in.push_back({c, [largest](scenario::Scenario& s, double) { s.layout.micro_batch = largest; }, true});
    }
  }
  return in;
}

// The serving load the sensitivities are taken on. A serving figure's relative change under an
// input settles within far fewer requests than the figure itself: the runs of one band share the
// arrival times and lengths (the same seed), so the sampling noise of a short run cancels in the
// ratio. Fewer requests, but enough for the engine to reach its steady batches: kBandRounds times
// the requests the full run keeps in service, by Little's law [little-1961] its completion rate ×
// the mean time from first scheduled to last token, and at least kBandRequests. A Poisson load is
// reduced only below half its capacity: an M/M/1 queue forgets its start within its relaxation
// time, 1 / (μ (1 − √ρ)²) [morse-1955], about six arrivals at ρ = ½ but hundreds near saturation,
// where the length of the run decides the queue, so a short run would not move as the full one.
// (Assumptions, checked on the shipped serving rows: the band's ends move by at most 5 % of the
// prediction, nearly all by none, against the same bands on the full loads.) nullopt when the load
// is not reduced.
constexpr std::int64_t kBandRequests = 200;
constexpr double kBandRounds = 2;
constexpr double kBandMaxUtilization = 0.5;

std::optional<scenario::Scenario> reduced_load(const scenario::Scenario& sc, const step::Evaluation& point) {
  if (!sc.job.inference || sc.job.model.images() || !point.inference) {
    return std::nullopt;
  }
  const step::InferenceResult& r = *point.inference;
  const workload::Load& load = sc.job.inference->load;
  if (load.arrival == workload::Arrival::kPoisson &&
      !(load.rate <= kBandMaxUtilization * r.saturation_requests_per_s)) {
    return std::nullopt;
  }
  const double in_service = r.requests_per_s * std::max(0.0, (r.e2e.mean - r.queue.mean).value());
  const double fewer = std::max(static_cast<double>(kBandRequests), std::ceil(kBandRounds * in_service));
  if (!(static_cast<double>(load.requests) > fewer)) {
    return std::nullopt;  // one batch per replica (0), or a load already this small
  }
  scenario::Scenario s = sc;
  s.job.inference->load.requests = static_cast<std::int64_t>(fewer);
  return s;
}

// The figure each input's share is measured on.
std::size_t headline(const scenario::Scenario& sc) {
  const std::string_view key = sc.job.training         ? "step.time_s"
                               : sc.job.model.images() ? "throughput.samples_per_s"
                                                       : "inference.output_tokens_per_s";
  for (std::size_t i = 0; i < kBandCount; ++i) {
    if (kBandKeys[i].key == key) {
      return i;
    }
  }
  return 0;
}

}  // namespace

Uncertainty uncertainty_of(const scenario::Scenario& sc, const Estimate& point, step::TableCache* tables) {
  const Values y = values_of(point.eval, point.gpus);
  std::vector<Input> inputs = inputs_of(sc, point);
  Uncertainty u;
  std::array<double, kBandCount> up{};
  std::array<double, kBandCount> down{};
  const std::size_t h = headline(sc);
  std::vector<double> weight(inputs.size(), 0.0);
  // The runs the deviations come from: the scenario itself, or its reduced load, whose relative
  // changes scale the full run's figures.
  const std::optional<scenario::Scenario> reduced = reduced_load(sc, point.eval);
  const scenario::Scenario& base = reduced ? *reduced : sc;
  // The capacity run of a Poisson load moves no band figure: the band's runs skip it.
  step::Options runs;
  runs.capacity = false;
  step::TableCache own;
  runs.tables = tables != nullptr ? tables : &own;
  const Values y0 = reduced ? values_of(step::evaluate(base, runs), point.gpus) : y;
  auto change = [&](std::size_t k, double v) {
    return reduced && *y0[k] != 0 ? *y[k] * (v / *y0[k] - 1.0) : v - *y0[k];
  };
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::array<double, kBandCount> hi{};
    std::array<double, kBandCount> lo{};
    for (const double sign : {-1.0, 1.0}) {
      if (inputs[i].one_sided_high && sign < 0) {
        continue;
      }
      scenario::Scenario s = base;
      inputs[i].move(s, sign);
      if (moved_numbers(s) == moved_numbers(base)) {
        continue;
      }
      Values v;
      try {
        v = values_of(step::evaluate(s, runs), point.gpus);
      } catch (const InputError&) {
        continue;  // an end of a range the model cannot run adds nothing
      }
      for (std::size_t k = 0; k < kBandCount; ++k) {
        if (y[k] && y0[k] && v[k]) {
          const double d = change(k, *v[k]);
          hi[k] = std::max(hi[k], d);
          lo[k] = std::max(lo[k], -d);
        }
      }
    }
    for (std::size_t k = 0; k < kBandCount; ++k) {
      up[k] += hi[k] * hi[k];
      down[k] += lo[k] * lo[k];
    }
    weight[i] = hi[h] * hi[h] + lo[h] * lo[h];
  }
  // The model's own error: one group per family of figure (a serving job's rates and latencies
  // take two), the runtime's own group when the scenario names a runtime that has one.
  std::vector<Contribution> errors;
  std::vector<double> error_weight;
  if (sc.model_error) {
    const workload::JobKind job = sc.job.training ? workload::JobKind::kTraining : workload::JobKind::kServing;
    const std::string runtime = sc.unset.runtime ? std::string() : sc.runtime.id;
    for (std::size_t k = 0; k < kBandCount; ++k) {
      const ErrorFamily f = error_family(job, kBandKeys[k].time);
      const workload::ModelErrorGroup* g = sc.model_error->find(job, f.metric, runtime);
      if (!y[k] || g == nullptr) {
        continue;
      }
      const Deviation d = model_error_deviation(*y[k], *g, f.flip);
      up[k] += d.up * d.up;
      down[k] += d.down * d.down;
      auto same = [g](const Contribution& c) {
        return c.error->job == g->job && c.error->metric == g->metric && c.error->runtime == g->runtime;
      };
      auto it = std::find_if(errors.begin(), errors.end(), same);
      if (it == errors.end()) {
        errors.push_back(Contribution{Unknown::kModelError, g->runtime, "", 0, false, 0, *g});
        error_weight.push_back(0);
        it = errors.end() - 1;
      }
      if (k == h) {
        error_weight[static_cast<std::size_t>(it - errors.begin())] = d.up * d.up + d.down * d.down;
      }
    }
  }
  for (std::size_t k = 0; k < kBandCount; ++k) {
    if (y[k]) {
      u.bands[k] = Band{std::max(0.0, *y[k] - std::sqrt(down[k])), *y[k] + std::sqrt(up[k])};
    }
  }
  double total = 0;
  for (const double w : weight) {
    total += w;
  }
  for (const double w : error_weight) {
    total += w;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Contribution c = inputs[i].about;
    c.share = total > 0 ? weight[i] / total : 0.0;
    u.unknowns.push_back(std::move(c));
  }
  for (std::size_t i = 0; i < errors.size(); ++i) {
    errors[i].share = total > 0 ? error_weight[i] / total : 0.0;
    u.unknowns.push_back(std::move(errors[i]));
  }
  std::stable_sort(u.unknowns.begin(), u.unknowns.end(),
                   [](const Contribution& a, const Contribution& b) { return a.share > b.share; });
  return u;
}

std::optional<Band> band_of(const Estimate& e, std::string_view key) {
  if (!e.uncertainty) {
    return std::nullopt;
  }
  if (const auto i = band_index(key)) {
    return e.uncertainty->bands[*i];
  }
  return std::nullopt;
}

}  // namespace gpusim::answer
