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
// Cost: two evaluations per input that can act on the job (about ten), in `estimate` and
// `validate` only (answer::Options::uncertainty); `plan`, `sweep` and `compare` skip it.
#include <algorithm>
#include <cmath>
#include <functional>

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
  for (const Field& f : report_fields(probe)) {
    const double* d = std::get_if<double>(&f.value);
    if (d == nullptr || !std::isfinite(*d)) {
      continue;
    }
    const std::string key = *f.section == '\0' ? std::string(f.key) : std::string(f.section) + "." + f.key;
    for (std::size_t i = 0; i < kBandCount; ++i) {
      if (key == kBandKeys[i].key) {
        out[i] = *d;
      }
    }
  }
  return out;
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
  const step::Evaluator ev(sc.system, sc.job, sc.runtime);
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
    Contribution c{u, g.id, hardware::to_string(g.arch), range, has(gr.assumed, to_string(u)), 0};
    in.push_back({c, [range, move](scenario::Scenario& s, double sign) { move(s.system.gpu, 1.0 + sign * range); }});
  };
  auto runtime_input = [&](Unknown u, double range, auto&& move) {
    if (range <= 0) {
      return;
    }
    Contribution c{u, sc.runtime.id, "", range, has(rr.assumed, to_string(u)), 0};
    in.push_back({c, [range, move](scenario::Scenario& s, double sign) { move(s.runtime, sign * range); }});
  };

  // The GEMM range of the datatype the job computes in.
  const bool fp8 = point.eval.dtype == DType::kFp8;
  gpu_input(Unknown::kGemm, fp8 ? gr.gemm_fp8.value_or(gr.gemm) : gr.gemm, [](hardware::GpuSpec& s, double f) {
    s.efficiency.gemm *= f;
    if (s.efficiency.gemm_fp8) {
      *s.efficiency.gemm_fp8 *= f;
    }
  });
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
      s.efficiency.gemm *= f;
      if (s.efficiency.gemm_fp8) {
        *s.efficiency.gemm_fp8 *= f;
      }
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
      Contribution c{Unknown::kMicroBatch, "", "", static_cast<double>(largest), false, 0};
      in.push_back({c, [largest](scenario::Scenario& s, double) { s.layout.micro_batch = largest; }, true});
    }
  }
  return in;
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

Uncertainty uncertainty_of(const scenario::Scenario& sc, const Estimate& point) {
  const Values y = values_of(point.eval, point.gpus);
  std::vector<Input> inputs = inputs_of(sc, point);
  Uncertainty u;
  std::array<double, kBandCount> up{};
  std::array<double, kBandCount> down{};
  const std::size_t h = headline(sc);
  std::vector<double> weight(inputs.size(), 0.0);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::array<double, kBandCount> hi{};
    std::array<double, kBandCount> lo{};
    for (const double sign : {-1.0, 1.0}) {
      if (inputs[i].one_sided_high && sign < 0) {
        continue;
      }
      scenario::Scenario s = sc;
      inputs[i].move(s, sign);
      if (moved_numbers(s) == moved_numbers(sc)) {
        continue;
      }
      Values v;
      try {
        v = values_of(step::evaluate(s), point.gpus);
      } catch (const InputError&) {
        continue;  // an end of a range the model cannot run adds nothing
      }
      for (std::size_t k = 0; k < kBandCount; ++k) {
        if (y[k] && v[k]) {
          hi[k] = std::max(hi[k], *v[k] - *y[k]);
          lo[k] = std::max(lo[k], *y[k] - *v[k]);
        }
      }
    }
    for (std::size_t k = 0; k < kBandCount; ++k) {
      up[k] += hi[k] * hi[k];
      down[k] += lo[k] * lo[k];
    }
    weight[i] = hi[h] * hi[h] + lo[h] * lo[h];
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
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Contribution c = inputs[i].about;
    c.share = total > 0 ? weight[i] / total : 0.0;
    u.unknowns.push_back(std::move(c));
  }
  std::stable_sort(u.unknowns.begin(), u.unknowns.end(),
                   [](const Contribution& a, const Contribution& b) { return a.share > b.share; });
  return u;
}

std::optional<Band> band_of(const Estimate& e, std::string_view key) {
  if (!e.uncertainty) {
    return std::nullopt;
  }
  // The p50 latencies are the report's headline latencies (fields.cpp): one band each.
  constexpr std::pair<std::string_view, std::string_view> kSame[] = {
      {"inference.ttft_s.p50", "inference.time_to_first_token_s"},
      {"inference.tpot_s.p50", "inference.time_per_output_token_s"},
      {"inference.e2e_s.p50", "inference.request_latency_s"},
  };
  for (const auto& [alias, name] : kSame) {
    if (key == alias) {
      key = name;
    }
  }
  for (std::size_t i = 0; i < kBandCount; ++i) {
    if (key == kBandKeys[i].key) {
      return e.uncertainty->bands[i];
    }
  }
  return std::nullopt;
}

}  // namespace gpusim::answer
