// Bottleneck explanation and advice: each suggestion is a modified scenario run through the
// same model, so every number in the advice comes from the model, not from a rule of thumb.
#include "model/advice.hpp"

#include <cmath>
#include "common/strfmt.hpp"

namespace gpusim {
namespace {

using detail::strfmt;

double gb(Bytes b) { return units::to_gibibytes(b); }  // memory is quoted in GiB, as devices report it
double pct(double x) { return 100.0 * x; }

std::string step_change(const Estimate& base, const Estimate& v) {
  // Per token, since a variant may change the tokens per step.
  const double before = base.step.time.value() / base.tokens_per_step;
  const double after = v.step.time.value() / v.tokens_per_step;
  return strfmt("%+.0f %% time per token", pct(after / before - 1.0));
}

void capacity_advice(const Scenario& sc, const Estimate& e, std::vector<std::string>& out) {
  if (!sc.training) {
    Scenario v = sc;
    v.inference->weight_bytes = 0.5;
    const Estimate ve = estimate_core(v);
    out.push_back(
        strfmt("weights need %.1f GiB; 4-bit weights (weight_precision = \"int4\") bring the total to %.1f of %.1f GiB",
               gb(e.memory.weights), gb(ve.memory.total()), gb(ve.memory.capacity)));
    return;
  }
  struct Variant {
    std::string label;
    Scenario sc;
  };
  std::vector<Variant> variants;
  if (sc.training->recompute != Recompute::kFull) {
    Scenario v = sc;
    v.training->recompute = Recompute::kFull;
    variants.push_back({"recompute = \"full\"", v});
  }
  if (sc.parallel.data > 1 && sc.parallel.zero < 3) {
    Scenario v = sc;
    v.parallel.zero = 3;
    variants.push_back({"zero = 3", v});
  }
  if (sc.training->micro_batch > 1) {
    Scenario v = sc;
    v.training->micro_batch = 1;
    variants.push_back({"micro_batch = 1", v});
  }
  {
    Scenario v = sc;
    v.training->recompute = Recompute::kFull;
    v.training->micro_batch = 1;
    if (sc.parallel.data > 1) {
      v.parallel.zero = 3;
    }
    variants.push_back({sc.parallel.data > 1 ? "zero = 3, recompute = \"full\", micro_batch = 1"
                                             : "recompute = \"full\", micro_batch = 1",
                        v});
  }
  bool any = false;
  for (const auto& var : variants) {
    const Estimate ve = estimate_core(var.sc);
    if (ve.memory.fits()) {
      out.push_back(strfmt(
          "%s: %.1f of %.1f GiB per GPU (activations %.1f -> %.1f GiB, optimizer %.1f -> %.1f GiB), %s",
          var.label.c_str(), gb(ve.memory.total()), gb(ve.memory.capacity), gb(e.memory.activations),
          gb(ve.memory.activations), gb(e.memory.optimizer), gb(ve.memory.optimizer), step_change(e, ve).c_str()));
      any = true;
      if (out.size() >= 3) {
        return;
      }
    }
  }
  if (!any) {
    // Model states shard over data-parallel ranks with ZeRO-3; solve for the ranks that fit.
    const Estimate tightest = estimate_core(variants.back().sc);
    const MemoryBreakdown& m = tightest.memory;
    const double states = (m.weights + m.gradients + m.optimizer).value() * sc.parallel.data;
    const double room = (m.capacity - m.activations - m.other).value();
    if (room > 0) {
      const int need = static_cast<int>(std::ceil(states / room));
      out.push_back(
          strfmt("even with ZeRO-3, full recompute and micro_batch 1 one GPU needs %.1f of %.1f GiB; the model "
                 "states (%.0f GiB in all) need at least %d GPUs with ZeRO-3, or a GPU with more memory",
                 gb(m.total()), gb(m.capacity), states / units::kGibi, need));
    } else {
      out.push_back(
          strfmt("activations and runtime alone need %.1f of %.1f GiB per GPU: shorten seq_len or use a GPU "
                 "with more memory (tensor/pipeline parallelism arrive with the scale-out issue)",
                 gb(m.activations + m.other), gb(m.capacity)));
    }
  }
}

void try_micro_batch(const Scenario& sc, const Estimate& e, std::vector<std::string>& out) {
  if (!sc.training) {
    return;
  }
  const auto mb = sc.training->micro_batch;
  if (sc.training->global_batch % (2 * mb * sc.parallel.data) != 0) {
    return;
  }
  Scenario v = sc;
  v.training->micro_batch = 2 * mb;
  const Estimate ve = estimate_core(v);
  const double gain = 1.0 - (ve.step.time.value() / ve.tokens_per_step) / (e.step.time.value() / e.tokens_per_step);
  if (ve.memory.fits() && gain >= 0.01) {  // only advice that changes something
    out.push_back(strfmt("micro_batch %lld -> %lld: MFU %.0f -> %.0f %%, %s, fits in %.1f GiB",
                         static_cast<long long>(mb), static_cast<long long>(2 * mb), pct(e.mfu), pct(ve.mfu),
                         step_change(e, ve).c_str(), gb(ve.memory.total())));
  }
}

void compute_advice(const Scenario& sc, const Estimate& e, std::vector<std::string>& out) {
  try_micro_batch(sc, e, out);
  if (sc.training) {
    const GpuSpec& g = sc.system.gpu;
    if (sc.training->precision != DType::kFp8 && g.supports(DType::kFp8)) {
      Scenario v = sc;
      v.training->precision = DType::kFp8;
      const Estimate ve = estimate_core(v);
      out.push_back(strfmt("precision = \"fp8\" (Transformer Engine): %s, if the model trains stably in fp8",
                           step_change(e, ve).c_str()));
    }
    if (!sc.training->flash_attention) {
      Scenario v = sc;
      v.training->flash_attention = true;
      const Estimate ve = estimate_core(v);
      out.push_back(strfmt("flash_attention = true: %s", step_change(e, ve).c_str()));
    }
  } else if (sc.inference) {
    out.push_back("prefill is compute-bound: a faster GPU or fp8 weights shorten time to first token");
  }
}

void memory_advice(const Scenario& sc, const Estimate& e, std::vector<std::string>& out) {
  if (sc.inference) {
    Scenario v = sc;
    v.inference->batch = sc.inference->batch * 4;
    const Estimate ve = estimate_core(v);
    if (ve.memory.fits()) {
      out.push_back(
          strfmt("decode reads all weights per step: batch %lld -> %lld raises output to %.0f tokens/s "
                 "(from %.0f) at %.1f ms per token",
                 static_cast<long long>(sc.inference->batch), static_cast<long long>(v.inference->batch),
                 ve.tokens_per_s, e.tokens_per_s, units::to_ms(ve.inference->time_per_output_token)));
    }
    if (sc.inference->weight_bytes > 1.0) {
      Scenario q = sc;
      q.inference->weight_bytes = 1.0;
      const Estimate qe = estimate_core(q);
      out.push_back(strfmt("8-bit weights (weight_precision = \"int8\") read half the bytes: %.0f tokens/s (from %.0f)",
                           qe.tokens_per_s, e.tokens_per_s));
    }
    return;
  }
  out.push_back(
      strfmt("%.0f %% of the step is bandwidth-bound kernels (norms, activations, residuals, optimizer); fusing "
             "them (torch.compile, fused kernels) cuts their DRAM traffic",
             pct(e.step.memory_bound / e.step.time)));
  try_micro_batch(sc, e, out);
}

void communication_advice(const Scenario& sc, const Estimate& e, std::vector<std::string>& out) {
  if (!sc.training) {
    return;
  }
  const Fabric f = make_fabric(sc.system);
  out.push_back(strfmt("%.0f ms of %.0f ms gradient traffic per step is exposed over %s",
                       units::to_ms(e.step.communication), units::to_ms(e.step.communication_total),
                       f.intra_desc.c_str()));
  const auto gb_ = sc.training->global_batch;
  Scenario v = sc;
  v.training->global_batch = 2 * gb_;
  const Estimate ve = estimate_core(v);
  out.push_back(
      strfmt("global_batch %lld -> %lld (more gradient accumulation) spreads the same traffic over twice the "
             "tokens: %s",
             static_cast<long long>(gb_), static_cast<long long>(2 * gb_), step_change(e, ve).c_str()));
  if (f.host_staged) {
    out.push_back(
        "this GPU has no peer-to-peer over PCIe on the stock driver: every collective is staged through host "
        "memory; NVLink GPUs avoid it");
  }
}

void latency_advice(const Scenario& sc, const Estimate& e, std::vector<std::string>& out) {
  const Seconds gpu_work = e.step.compute;
  if (e.step.launch_stall.value() > 0) {
    out.push_back(
        strfmt("launch-bound: %.0f kernels x %.1f us = %.1f ms of host time per step against %.1f ms of GPU "
               "work",
               e.step.kernels, units::to_us(e.step.host_launch) / e.step.kernels, units::to_ms(e.step.host_launch),
               units::to_ms(gpu_work)));
    const bool graphs = sc.training ? sc.training->cuda_graphs : sc.inference->cuda_graphs;
    if (!graphs) {
      Scenario v = sc;
      (sc.training ? v.training->cuda_graphs : v.inference->cuda_graphs) = true;
      const Estimate ve = estimate_core(v);
      out.push_back(strfmt("cuda_graphs = true (capture the step in a CUDA graph): %s", step_change(e, ve).c_str()));
    }
  } else {
    out.push_back(
        strfmt("%.0f kernels per step x %.1f us of gap between kernels = %.1f ms against %.1f ms of kernel "
               "time",
               e.step.kernels, units::to_us(sc.system.gpu.efficiency.kernel_overhead),
               units::to_ms(sc.system.gpu.efficiency.kernel_overhead * e.step.kernels), units::to_ms(gpu_work)));
  }
  try_micro_batch(sc, e, out);
  if (sc.inference) {
    Scenario v = sc;
    v.inference->batch = sc.inference->batch * 4;
    const Estimate ve = estimate_core(v);
    if (ve.memory.fits()) {
      out.push_back(strfmt("batch %lld -> %lld amortizes the launches: %.0f tokens/s (from %.0f)",
                           static_cast<long long>(sc.inference->batch), static_cast<long long>(v.inference->batch),
                           ve.tokens_per_s, e.tokens_per_s));
    }
  }
}

void input_advice(const Scenario& sc, const Estimate& e, std::vector<std::string>& out) {
  const Seconds gpu_step = e.step.time - e.step.input_stall;
  if (e.step.input_stave == "cpu") {
    const double need = std::ceil(sc.input->workers * (e.step.time / gpu_step));
    out.push_back(
        strfmt("host preprocessing is the slowest stage: workers %d -> %.0f removes the %.0f ms stall per step",
               sc.input->workers, need, units::to_ms(e.step.input_stall)));
  } else if (e.step.input_stave == "storage") {
    out.push_back(
        strfmt("storage bandwidth is the slowest stage: %.1fx faster storage (or caching) removes the %.0f ms "
               "stall per step",
               e.step.time / gpu_step, units::to_ms(e.step.input_stall)));
  } else {
    out.push_back("host-to-device copies are the slowest stage: use pinned memory and overlap copies with compute");
  }
}

}  // namespace

std::string explain_bottleneck(const Scenario& sc, const Estimate& e) {
  const StepBreakdown& s = e.step;
  const double share = [&] {
    switch (e.bottleneck) {
      case Bottleneck::kCompute:
        return s.gemm / s.time;
      case Bottleneck::kMemory:
        return s.memory_bound / s.time;
      case Bottleneck::kCommunication:
        return s.communication / s.time;
      case Bottleneck::kInput:
        return s.input_stall / s.time;
      case Bottleneck::kLatency:
        return s.overhead / s.time;
      case Bottleneck::kCapacity:
        return 0.0;
    }
    return 0.0;
  }();
  switch (e.bottleneck) {
    case Bottleneck::kCompute: {
      Flop flops;
      for (const auto& op : e.ops) {
        if (op.compute_bound) {
          flops += op.flops;
        }
      }
      return strfmt("%.0f %% of step time in compute-bound GEMM and attention kernels at %.0f %% of the %s peak",
                    pct(share), pct((flops / s.gemm) / e.peak), to_string(e.dtype));
    }
    case Bottleneck::kMemory:
      return strfmt("%.0f %% of step time in bandwidth-bound kernels (%s)", pct(share),
                    e.training ? "norms, activations, residuals, optimizer" : "weights and KV cache read every token");
    case Bottleneck::kCommunication:
      return strfmt("%.0f %% of step time waiting on data-parallel collectives over %s", pct(share), e.fabric.c_str());
    case Bottleneck::kInput:
      return strfmt("%.0f %% of step time waiting on the input pipeline (%s is the slowest stage)", pct(share),
                    s.input_stave.c_str());
    case Bottleneck::kLatency:
      if (s.launch_stall.value() > 0) {
        return strfmt(
            "launch-bound: %.0f kernels x %.1f us = %.2f ms of host time per step against %.2f ms of GPU "
            "work",
            s.kernels, units::to_us(s.host_launch) / s.kernels, units::to_ms(s.host_launch), units::to_ms(s.compute));
      }
      return strfmt("%.0f %% of step time in kernel gaps and framework overhead (%.0f kernels per step)", pct(share),
                    s.kernels);
    case Bottleneck::kCapacity:
      return strfmt("needs %.1f GiB per GPU but the %s has %.1f GiB", gb(e.memory.total()), sc.system.gpu.name.c_str(),
                    gb(e.memory.capacity));
  }
  return {};
}

std::vector<std::string> make_advice(const Scenario& sc, const Estimate& e) {
  std::vector<std::string> out;
  switch (e.bottleneck) {
    case Bottleneck::kCapacity:
      capacity_advice(sc, e, out);
      break;
    case Bottleneck::kCompute:
      compute_advice(sc, e, out);
      break;
    case Bottleneck::kMemory:
      memory_advice(sc, e, out);
      break;
    case Bottleneck::kCommunication:
      communication_advice(sc, e, out);
      break;
    case Bottleneck::kLatency:
      latency_advice(sc, e, out);
      break;
    case Bottleneck::kInput:
      input_advice(sc, e, out);
      break;
  }
  if (out.empty()) {
    out.push_back(strfmt("no cheaper variant found: the step already runs at %.0f %% MFU", pct(e.mfu)));
  }
  if (sc.training && sc.system.gpus > 1 && e.bottleneck != Bottleneck::kInput) {
    out.push_back("`gpusim plan` searches every tensor/pipeline/data/ZeRO/micro-batch layout of this job");
  }
  return out;
}

}  // namespace gpusim
