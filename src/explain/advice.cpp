// Advice: each suggestion is the scenario with one change run through the same evaluator (see
// include/gpusim/explain.hpp); the report stage words it.
#include <cmath>
#include <optional>
#include <utility>

#include "explain/advice_internal.hpp"
#include "gpusim/explain.hpp"

namespace gpusim::explain {

Advice of(AdviceKind kind) {
  Advice a;
  a.kind = kind;
  return a;
}

Advice advised(AdviceKind kind, const Variant& v, const Effect& before, const Effect& after) {
  Advice a = of(kind);
  a.change = v.change;
  a.before = before;
  a.after = after;
  return a;
}

Effect effect_of(const step::Evaluation& e) {
  return Effect{e.step.time, e.step.time / e.tokens_per_step, e.tokens_per_s, e.mfu, e.memory, step::runs(e)};
}

Effect Advising::run(const scenario::Scenario& v) const {
  step::Options o;
  o.tables = tables;
  return effect_of(step::evaluate(v, o));
}

double gain(const Effect& before, const Effect& after) { return 1.0 - after.time_per_token / before.time_per_token; }

namespace {

using scenario::Override;
using scenario::Scenario;
using step::Evaluation;
using workload::Recompute;

// A scenario value as a user writes it: "full".
std::string quoted(Recompute r) { return base::strfmt("\"%s\"", workload::to_string(r)); }

// A serving job that cannot run (its weights or one request's KV cache do not fit): the changes
// that make it run, each run through the evaluator, smallest first: a smaller weight format, the
// replica's tensor parallelism over the GPUs it has, then more GPUs for one replica (tensor
// parallelism up to kMaxAdvisedGpus, in the format given, then in the smallest); at most three.
void serving_capacity_advice(const Scenario& sc, const Evaluation& e, Advising& out) {
  const Effect before = effect_of(e);
  const workload::Inference& inf = *sc.job.inference;
  auto runs = [&](const Scenario& v) -> std::optional<Effect> {
    try {
      const Effect after = out.run(v);
      return after.runs ? std::optional<Effect>(after) : std::nullopt;
    } catch (const InputError&) {
      return std::nullopt;  // a variant the job cannot take (heads not divisible, a dtype the GPU lacks)
    }
  };
  auto advise = [&](std::vector<Override> change, const Effect& after) {
    Advice a = of(AdviceKind::kServesWith);
    a.change = std::move(change);
    a.before = before;
    a.after = after;
    out.list.push_back(a);
  };
  // Formats smaller than the one given, 8 then 4 bits (fp8 where the GPU computes in it).
  std::vector<std::string> formats;
  const bool fp8 = sc.system.gpu.supports(DType::kFp8);
  if (inf.weight_bytes > 1.0) {
    formats.emplace_back(fp8 ? "fp8" : "int8");
  }
  if (inf.weight_bytes > 0.5) {
    formats.emplace_back("int4");
  }
  auto with_format = [&](const std::string& f) {
    try {
      return std::optional<Scenario>(scenario::with_weight_format(sc, f));
    } catch (const InputError&) {
      return std::optional<Scenario>();
    }
  };
  auto format_change = [](const std::string& f) { return Override{"inference.weight_precision", "\"" + f + "\""}; };
  bool format_runs = false;
  for (const std::string& f : formats) {
    if (const auto v = with_format(f)) {
      if (const auto after = runs(*v)) {
        advise({format_change(f)}, *after);
        format_runs = true;
        break;  // the larger format that runs is the smaller change
      }
    }
  }
  const workload::Layout& l = sc.layout;
  auto layout_change = [](const workload::Layout& w, int gpus) {
    return std::vector<Override>{{"system.gpus", std::to_string(gpus)},
                                 {"parallelism.tensor", std::to_string(w.tensor)},
                                 {"parallelism.data", std::to_string(w.data)}};
  };
  // One replica over every GPU it has: fewer replicas, each with less to hold.
  if (l.data > 1 && out.list.size() < 3) {
    workload::Layout w = l;
    w.tensor = l.tensor * l.data;
    w.data = 1;
    if (const auto after = runs(scenario::with_layout(sc, w, sc.system.gpus))) {
      advise(layout_change(w, sc.system.gpus), *after);
    }
  }
  // More GPUs for one replica: the fewest that run it, in the format given, then (when no format
  // runs it on the GPUs it has) in the smallest.
  const std::optional<Scenario> smallest = formats.empty() || format_runs ? std::nullopt : with_format(formats.back());
  for (const Scenario* base : {&sc, smallest ? &*smallest : nullptr}) {
    if (base == nullptr || out.list.size() >= 3) {
      continue;
    }
    for (int t = l.tensor * l.data * 2; t * l.pipeline <= kMaxAdvisedGpus; t *= 2) {
      workload::Layout w = l;
      w.tensor = t;
      w.data = 1;
      if (const auto after = runs(scenario::with_layout(*base, w, t * l.pipeline))) {
        std::vector<Override> change = layout_change(w, t * l.pipeline);
        if (base != &sc) {
          change.insert(change.begin(), format_change(formats.back()));
        }
        advise(std::move(change), *after);
        break;
      }
    }
  }
  if (out.list.empty()) {
    Advice a = of(AdviceKind::kServesOnNothing);
    a.before = before;
    out.list.push_back(a);
  }
}

void capacity_advice(const Scenario& sc, const Evaluation& e, Advising& out) {
  const Effect before = effect_of(e);
  if (!sc.job.training) {
    serving_capacity_advice(sc, e, out);
    return;
  }
  std::vector<Variant> variants;
  if (sc.layout.recompute != Recompute::kFull) {
    Scenario v = sc;
    v.layout.recompute = Recompute::kFull;
    variants.push_back({{{"training.recompute", quoted(Recompute::kFull)}}, v});
  }
  if (sc.layout.data > 1 && sc.layout.zero < 3) {
    Scenario v = sc;
    v.layout.zero = 3;
    variants.push_back({{{"parallelism.zero", "3"}}, v});
  }
  if (sc.layout.micro_batch > 1) {
    Scenario v = sc;
    v.layout.micro_batch = 1;
    variants.push_back({{{"training.micro_batch", "1"}}, v});
  }
  // The memory savers of fine-tuning, least intrusive first: pure 16-bit training (no fp32 master
  // copy), 8-bit optimizer states, paged states, the optimizer on the host (ZeRO-Offload), LoRA
  // adapters, QLoRA's 4-bit base weights.
  const workload::Training& t = *sc.job.training;
  if (t.master_weights && !units::is_wide(t.precision) && !t.adapters()) {
    Scenario v = sc;
    v.job.training->master_weights = false;
    variants.push_back({{{"training.master_weights", "false"}}, v});
  }
  if (t.optimizer == workload::Optimizer::kAdamW && !t.adapters()) {
    Scenario v = sc;
    v.job.training->optimizer = workload::Optimizer::kAdamW8bit;
    variants.push_back({{{"training.optimizer", "\"adamw-8bit\""}}, v});
  }
  if (!t.paged_optimizer && t.offload_optimizer == workload::Offload::kNone) {
    Scenario v = sc;
    v.job.training->paged_optimizer = true;
    variants.push_back({{{"training.paged_optimizer", "true"}}, v});
  }
  if (t.offload_optimizer == workload::Offload::kNone) {
    Scenario v = sc;
    v.job.training->offload_optimizer = workload::Offload::kCpu;
    v.job.training->paged_optimizer = false;
    variants.push_back({{{"training.offload_optimizer", "\"cpu\""}}, v});
  }
  // LoRA and QLoRA are modelled on dense transformers (the loader refuses them on a mixture of
  // experts or latent attention).
  if (!t.adapters() && !sc.job.model.moe && !sc.job.model.mla) {
    for (const workload::Method method : {workload::Method::kLora, workload::Method::kQlora}) {
      if (method == workload::Method::kQlora && t.precision != DType::kBf16 && t.precision != DType::kFp16) {
        continue;
      }
      Scenario v = sc;
      v.job.training->method = method;
      v.layout.recompute = Recompute::kFull;
      variants.push_back({{{"training.method", base::strfmt("\"%s\"", base::name_in(workload::kMethodNames, method))},
                           {"training.recompute", quoted(Recompute::kFull)}},
                          v});
    }
  }
  {
    Variant all;
    all.sc = sc;
    if (sc.layout.data > 1) {
      all.sc.layout.zero = 3;
      all.change.push_back({"parallelism.zero", "3"});
    }
    all.sc.layout.recompute = Recompute::kFull;
    all.sc.layout.micro_batch = 1;
    all.change.push_back({"training.recompute", quoted(Recompute::kFull)});
    all.change.push_back({"training.micro_batch", "1"});
    variants.push_back(all);
  }
  bool any = false;
  for (const auto& var : variants) {
    const Effect after = out.run(var.sc);
    if (after.runs) {
      out.list.push_back(advised(AdviceKind::kFitsWith, var, before, after));
      any = true;
      if (out.list.size() >= 3) {
        return;
      }
    }
  }
  if (!any) {
    // Model states shard over data-parallel ranks with ZeRO-3; solve for the ranks that fit.
    const Effect tightest = out.run(variants.back().sc);
    const physics::MemoryBreakdown& m = tightest.memory;
    const Bytes states = (m.weights + m.gradients + m.optimizer) * static_cast<double>(sc.layout.data);
    const Bytes room = m.capacity - m.activations - m.other;
    Advice a = of(room.value() > 0 ? AdviceKind::kNeedsMoreGpus : AdviceKind::kActivationsTooLarge);
    a.change = variants.back().change;
    a.before = before;
    a.after = tightest;
    a.states = states;
    if (room.value() > 0) {
      a.gpus_needed = static_cast<int>(std::ceil(states / room));
    }
    out.list.push_back(a);
  }
}

void try_micro_batch(const Scenario& sc, const Evaluation& e, Advising& out) {
  if (!sc.job.training) {
    return;
  }
  const auto mb = sc.layout.micro_batch;
  if (sc.job.training->global_batch % (2 * mb * sc.layout.data) != 0) {
    return;
  }
  Scenario v = sc;
  v.layout.micro_batch = 2 * mb;
  const Effect before = effect_of(e);
  const Effect after = out.run(v);
  if (after.memory.fits() && gain(before, after) >= 0.01) {  // only advice that changes something
    Advice a = of(AdviceKind::kMicroBatch);
    a.change = {{"training.micro_batch", std::to_string(2 * mb)}};
    a.before = before;
    a.after = after;
    a.from = static_cast<double>(mb);
    a.to = static_cast<double>(2 * mb);
    out.list.push_back(a);
  }
}

// A variant that changes one key, reported with its effect on time per token.
// Kept only when the variant runs and shortens the time per token by at least 1 %: a change that
// moves nothing (a faster GPU part when the input pipeline or another stage sets the step) is no
// advice.
void try_variant(AdviceKind kind, const Override& change, const Scenario& v, const Evaluation& e, Advising& out) {
  Advice a = of(kind);
  a.change = {change};
  a.before = effect_of(e);
  a.after = out.run(v);
  if (a.after->runs && gain(*a.before, *a.after) >= 0.01) {
    out.list.push_back(a);
  }
}

// The batch an inference evaluation ran at (batch = "max" resolved).
std::int64_t batch_of(const Evaluation& e) { return static_cast<std::int64_t>(e.inference->batch); }

// A static engine's batch is the scenario's choice; a continuous engine's batch follows the load
// and its KV pool, so a larger cap is no lever there.
void inference_batch(AdviceKind kind, const Scenario& sc, const Evaluation& e, Advising& out) {
  if (sc.runtime.serving.scheduler != workload::Scheduler::kStatic) {
    return;
  }
  Scenario v = sc;
  v.job.inference->batch_max = false;
  v.job.inference->batch = batch_of(e) * 4;
  const Effect after = out.run(v);
  if (after.memory.fits() && after.tokens_per_s > e.tokens_per_s) {
    Advice a = of(kind);
    a.change = {{"inference.batch", std::to_string(v.job.inference->batch)}};
    a.before = effect_of(e);
    a.after = after;
    a.from = static_cast<double>(batch_of(e));
    a.to = static_cast<double>(v.job.inference->batch);
    out.list.push_back(a);
  }
}

// The runtime with its elementwise work fused as torch.compile or Transformer Engine do: norm with
// residual, RoPE and the loss in one kernel each, no chains of primitive ops; nullopt when the
// runtime fuses them already.
std::optional<Scenario> fused(const Scenario& sc) {
  const workload::Runtime& rt = sc.runtime;
  if (!rt.composite_ops && rt.fusion.norm_residual && rt.fusion.rope && rt.fusion.cross_entropy) {
    return std::nullopt;
  }
  Scenario v = sc;
  v.runtime.composite_ops = false;
  v.runtime.fusion.norm_residual = true;
  v.runtime.fusion.rope = true;
  v.runtime.fusion.cross_entropy = true;
  return v;
}

void compute_advice(const Scenario& sc, const Evaluation& e, Advising& out) {
  try_micro_batch(sc, e, out);
  // The fp8, fusion and prefill advice is about transformer kernels (a ResNet's lowering has none)
  // and about token generation (an image model's inference has none).
  if (sc.job.model.family == workload::Family::kResNet || (sc.job.model.images() && sc.job.inference)) {
    return;
  }
  if (sc.job.training) {
    if (sc.job.training->precision != DType::kFp8 && sc.system.gpu.supports(DType::kFp8)) {
      Scenario v = sc;
      v.job.training->precision = DType::kFp8;
      try_variant(AdviceKind::kFp8, {"training.precision", "\"fp8\""}, v, e, out);
    }
    if (!sc.runtime.flash_attention()) {
      Scenario v = sc;
      v.runtime.attention = workload::AttentionKernel::kFlash2;
      try_variant(AdviceKind::kFlashAttention, {"training.flash_attention", "true"}, v, e, out);
    }
    // Even a compute-bound step may spend a fair share in unfused elementwise chains.
    if (const auto v = fused(sc)) {
      Advice a = of(AdviceKind::kFuseElementwise);
      a.share = e.step.memory_bound / e.step.time;
      a.change = {{"runtime.composite_ops", "false"},
                  {"runtime.fusion.norm_residual", "true"},
                  {"runtime.fusion.rope", "true"},
                  {"runtime.fusion.cross_entropy", "true"}};
      a.before = effect_of(e);
      a.after = out.run(*v);
      if (gain(*a.before, *a.after) >= 0.05) {
        out.list.push_back(a);
      }
    }
  } else {
    out.list.push_back(of(AdviceKind::kPrefillComputeBound));
  }
}

void memory_advice(const Scenario& sc, const Evaluation& e, Advising& out) {
  // Decode batching and 8-bit weights do not apply to an image model's passes, nor transformer
  // fusions to a ResNet's.
  if (sc.job.model.images() && (sc.job.inference || sc.job.model.family == workload::Family::kResNet)) {
    try_micro_batch(sc, e, out);
    return;
  }
  if (sc.job.inference) {
    inference_batch(AdviceKind::kDecodeBatch, sc, e, out);
    if (sc.job.inference->weight_bytes > 1.0) {
      Scenario v = sc;
      v.job.inference->weight_bytes = units::bytes_per_element(DType::kInt8);
      try_variant(AdviceKind::kInt8Weights, {"inference.weight_precision", "\"int8\""}, v, e, out);
    }
    return;
  }
  Advice a = of(AdviceKind::kFuseElementwise);
  a.share = e.step.memory_bound / e.step.time;
  if (const auto v = fused(sc)) {
    a.change = {{"runtime.composite_ops", "false"},
                {"runtime.fusion.norm_residual", "true"},
                {"runtime.fusion.rope", "true"},
                {"runtime.fusion.cross_entropy", "true"}};
    a.before = effect_of(e);
    a.after = out.run(*v);
  }
  out.list.push_back(a);
  try_micro_batch(sc, e, out);
}

// A serving replica waits on its tensor-parallel all-reduces (two per layer per iteration). Two
// changes shorten them, each kept only when the evaluator finds more output tokens/s and the
// weights still fit: the tensor group inside one node, so they cross the node's link rather than
// the network; and half the ranks per replica with twice the replicas on the same GPUs, so fewer
// ranks all-reduce (none at one rank).
void serving_communication_advice(const Scenario& sc, const Evaluation& e, Advising& out) {
  const workload::Layout& l = sc.layout;
  auto keep_if_faster = [&](AdviceKind kind, std::vector<Override> change, const Scenario& v, double from, double to) {
    const Effect after = out.run(v);
    if (after.memory.fits() && after.tokens_per_s > e.tokens_per_s) {
      Advice a = of(kind);
      a.change = std::move(change);
      a.from = from;
      a.to = to;
      a.before = effect_of(e);
      a.after = after;
      out.list.push_back(a);
    }
  };
  if (l.tensor > sc.system.gpus_per_node) {
    Scenario v = sc;
    v.system.gpus_per_node = l.tensor;
    keep_if_faster(AdviceKind::kTensorInNode, {{"system.gpus_per_node", std::to_string(l.tensor)}}, v,
                   sc.system.gpus_per_node, l.tensor);
  }
  if (l.tensor > 1) {
    workload::Layout half = l;
    half.tensor = l.tensor / 2;
    half.data = l.data * 2;
    keep_if_faster(
        AdviceKind::kFewerTensorRanks,
        {{"parallelism.tensor", std::to_string(half.tensor)}, {"parallelism.data", std::to_string(half.data)}},
        scenario::with_layout(sc, half, sc.system.gpus), l.tensor, half.tensor);
  }
}

void communication_advice(const Scenario& sc, const Evaluation& e, Advising& out) {
  if (!sc.job.training) {
    serving_communication_advice(sc, e, out);
    return;
  }
  Advice exposed = of(AdviceKind::kExposedComm);
  exposed.exposed = e.step.communication;
  exposed.total = e.step.communication_total;
  out.list.push_back(exposed);
  const auto gb = sc.job.training->global_batch;
  Scenario v = sc;
  v.job.training->global_batch = 2 * gb;
  try_variant(AdviceKind::kGlobalBatch, {"training.global_batch", std::to_string(2 * gb)}, v, e, out);
  out.list.back().from = static_cast<double>(gb);
  out.list.back().to = static_cast<double>(2 * gb);
  if (physics::make_fabric(sc.system).host_staged) {
    out.list.push_back(of(AdviceKind::kHostStaged));
  }
}

void latency_advice(const Scenario& sc, const Evaluation& e, Advising& out) {
  const step::StepBreakdown& s = e.step;
  if (s.launch_stall.value() > 0) {
    Advice a = of(AdviceKind::kLaunchBound);
    a.kernels = s.kernels;
    a.per_kernel = s.host_launch / s.kernels;
    a.exposed = s.host_launch;
    a.total = s.compute;
    out.list.push_back(a);
    if (!sc.runtime.cuda_graphs) {
      Scenario v = sc;
      v.runtime.cuda_graphs = true;
      try_variant(AdviceKind::kCudaGraphs, {sc.job.training ? "training.cuda_graphs" : "inference.cuda_graphs", "true"},
                  v, e, out);
    }
  } else {
    Advice a = of(AdviceKind::kKernelGaps);
    a.kernels = s.kernels;
    a.per_kernel = sc.system.gpu.efficiency.kernel_overhead;
    a.total = s.compute;
    out.list.push_back(a);
  }
  try_micro_batch(sc, e, out);
  if (sc.job.inference) {
    inference_batch(AdviceKind::kBatchAmortizesLaunch, sc, e, out);
  }
}

void input_advice(const Scenario& sc, const Evaluation& e, Advising& out) {
  const Seconds gpu_step = e.step.time - e.step.input_stall;
  Advice a = of(AdviceKind::kInputPcie);
  a.exposed = e.step.input_stall;
  if (e.step.input_stave == step::Stave::kCpu) {
    a.kind = AdviceKind::kInputWorkers;
    a.from = sc.job.input->workers;
    a.to = std::ceil(sc.job.input->workers * (e.step.time / gpu_step));
    a.change = {{"input.workers", std::to_string(static_cast<long long>(a.to))}};
  } else if (e.step.input_stave == step::Stave::kStorage) {
    a.kind = AdviceKind::kInputStorage;
    a.share = e.step.time / gpu_step;
  }
  out.list.push_back(a);
}

}  // namespace

std::vector<Advice> advise(const Scenario& sc, const Evaluation& e, const Diagnosis& d, step::TableCache* tables) {
  Advising out;
  out.tables = tables;
  switch (d.bottleneck) {
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
    case Bottleneck::kOffload:
      offload_advice(sc, e, out);
      break;
    case Bottleneck::kHostMemory:
      host_memory_advice(sc, e, out);
      break;
    case Bottleneck::kBubble:
      bubble_advice(sc, e, out);
      break;
  }
  if (out.list.empty()) {
    Advice a = of(AdviceKind::kNoCheaperVariant);
    a.before = effect_of(e);
    out.list.push_back(a);
  }
  if (sc.job.training && sc.system.gpus > 1 && d.bottleneck != Bottleneck::kInput) {
    out.list.push_back(of(AdviceKind::kPlan));
  }
  return std::move(out.list);
}

}  // namespace gpusim::explain
