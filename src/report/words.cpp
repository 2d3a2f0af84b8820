// The bottleneck and the advice in words: every number comes from the diagnosis and the variants
// the explain stage evaluated.
#include <cmath>

#include "gpusim/report.hpp"
#include "report/format.hpp"

namespace gpusim::report {
namespace {

using explain::AdviceKind;
using explain::Bottleneck;

// "recompute = \"full\", micro_batch = 1": the scenario keys a variant changes, as a user writes them.
std::string label(const std::vector<scenario::Override>& change) {
  std::string out;
  for (const auto& o : change) {
    const auto dot = o.key.rfind('.');
    out += (out.empty() ? "" : ", ") + (dot == std::string::npos ? o.key : o.key.substr(dot + 1)) + " = " + o.value;
  }
  return out;
}

// Per token, since a variant may change the tokens per step.
std::string step_change(const explain::Advice& a) {
  return strfmt("%+.0f %% time per token", pct(a.after->time_per_token / a.before->time_per_token - 1.0));
}

// The paths the job's collectives take: the node's own link, the network between nodes, or both.
std::string paths(const answer::Estimate& e) {
  if (e.nodes <= 1) {
    return intra_path_text(e.fabric);
  }
  const std::string network = strfmt("%s (%.0f GB/s per direction)", e.inter_link.c_str(), e.inter_link_gb_per_s);
  if (e.gpus <= e.nodes) {  // one GPU per node: every peer is across the network
    return network + " between nodes";
  }
  return intra_path_text(e.fabric) + " within a node and " + network + " between nodes";
}

// Serving variants change the replicas and their batches: their effect is on output tokens/s.
std::string tokens_change(const explain::Advice& a) {
  return strfmt("%+.0f %% output tokens/s", pct(a.after->tokens_per_s / a.before->tokens_per_s - 1.0));
}

}  // namespace

std::string bottleneck_reason(const answer::Estimate& e) {
  const step::StepBreakdown& s = e.eval.step;
  const explain::Diagnosis& d = e.diagnosis;
  switch (d.bottleneck) {
    case Bottleneck::kCompute:
      if (d.peak_fraction <= 0) {  // a serving iteration's kernels keep no FLOP count
        return strfmt("%.0f %% of step time in compute-bound GEMM and attention kernels", pct(d.share));
      }
      return strfmt("%.0f %% of step time in compute-bound GEMM and attention kernels at %.0f %% of the %s peak",
                    pct(d.share), pct(d.peak_fraction), units::to_string(e.eval.dtype));
    case Bottleneck::kMemory:
      return strfmt("%.0f %% of step time in bandwidth-bound kernels (%s)", pct(d.share),
                    e.images          ? "batch norms, ReLUs, residual adds, pooling"
                    : e.eval.training ? "norms, activations, residuals, optimizer"
                                      : "weights and KV cache read every token");
    case Bottleneck::kCommunication:
      return strfmt("%.0f %% of step time waiting on %s over %s", pct(d.share),
                    e.eval.training ? "collectives" : "tensor-parallel all-reduces and pipeline sends",
                    paths(e).c_str());
    case Bottleneck::kOffload:
      return strfmt(
          "%.0f %% of step time waiting on offload traffic to host memory or NVMe and the host's optimizer step "
          "(%s of the %s step)",
          pct(d.share), duration(s.offload).c_str(), duration(s.time).c_str());
    case Bottleneck::kBubble:
      return strfmt("%.0f %% of step time in the pipeline bubble (stages idle while the pipeline fills and drains)",
                    pct(d.share));
    case Bottleneck::kHostMemory: {
      const physics::MemoryBreakdown& m = e.eval.memory;
      return strfmt(
          "what the job offloads needs %.1f GiB of host memory per GPU but the host has %.1f GiB per GPU; the "
          "GPU's own %.1f of %.1f GiB would fit",
          gib(m.host), gib(m.host_capacity), gib(m.total()), gib(m.capacity));
    }
    case Bottleneck::kInput:
      return strfmt("%.0f %% of step time waiting on the input pipeline (%s is the slowest stage)", pct(d.share),
                    base::name_in(step::kStaveNames, s.input_stave));
    case Bottleneck::kLatency:
      if (s.launch_stall.value() > 0) {
        return strfmt(
            "launch-bound: %.0f kernels x %.1f us = %.2f ms of host time per step against %.2f ms of GPU work",
            s.kernels, units::to_us(s.host_launch) / s.kernels, units::to_ms(s.host_launch), units::to_ms(s.compute));
      }
      return strfmt("%.0f %% of step time in kernel gaps and framework overhead (%.0f kernels per step)", pct(d.share),
                    s.kernels);
    case Bottleneck::kCapacity: {
      const physics::MemoryBreakdown& m = e.eval.memory;
      if (m.budget.value() > 0) {
        const Bytes fixed = m.weights + m.activations + m.other;
        const Bytes pool = m.budget > fixed ? m.budget - fixed : Bytes(0);
        return strfmt(
            "the serving engine may use %.1f of the %s's %.1f GiB; weights, workspace and reserve take %.1f GiB, "
            "leaving %.2f GiB of KV cache, less than the %.2f GiB one request needs at its longest context",
            gib(m.budget), e.gpu_name.c_str(), gib(m.capacity), gib(fixed), gib(pool), gib(m.kv_cache));
      }
      return strfmt("needs %.1f GiB per GPU but the %s has %.1f GiB", gib(m.total()), e.gpu_name.c_str(),
                    gib(m.capacity));
    }
  }
  return {};
}

std::string advice_text(const answer::Estimate& e, const explain::Advice& a) {
  switch (a.kind) {
    case AdviceKind::kServesWith:
      return strfmt(
          "runs with %s: %.1f of %.1f GiB per GPU (weights %.1f -> %.1f GiB, KV cache %.1f GiB), %s output "
          "tokens/s in decode",
          label(a.change).c_str(), gib(a.after->memory.total()),
          gib(a.after->memory.budget.value() > 0 ? a.after->memory.budget : a.after->memory.capacity),
          gib(a.before->memory.weights), gib(a.after->memory.weights), gib(a.after->memory.kv_cache),
          human(a.after->tokens_per_s).c_str());
    case AdviceKind::kServesOnNothing:
      return strfmt(
          "no smaller weight format and no tensor-parallel replica of up to %d GPUs runs it: a GPU with "
          "more memory, or a shorter context",
          explain::kMaxAdvisedGpus);
    case AdviceKind::kFitsWith:
      return strfmt("%s: %.1f of %.1f GiB per GPU (activations %.1f -> %.1f GiB, optimizer %.1f -> %.1f GiB), %s",
                    label(a.change).c_str(), gib(a.after->memory.total()), gib(a.after->memory.capacity),
                    gib(a.before->memory.activations), gib(a.after->memory.activations),
                    gib(a.before->memory.optimizer), gib(a.after->memory.optimizer), step_change(a).c_str());
    case AdviceKind::kNeedsMoreGpus:
      return strfmt(
          "even with %s one GPU needs %.1f of %.1f GiB; the model states (%.0f GiB in all) need at least %d GPUs "
          "with ZeRO-3, or a GPU with more memory",
          label(a.change).c_str(), gib(a.after->memory.total()), gib(a.after->memory.capacity), gib(a.states),
          a.gpus_needed);
    case AdviceKind::kActivationsTooLarge:
      return strfmt(
          "activations and runtime alone need %.1f of %.1f GiB per GPU: shorten seq_len, split the model with "
          "tensor or pipeline parallelism (`gpusim plan`), or use a GPU with more memory",
          gib(a.after->memory.activations + a.after->memory.other), gib(a.after->memory.capacity));
    case AdviceKind::kMicroBatch:
      return strfmt("micro_batch %.0f -> %.0f: MFU %.0f -> %.0f %%, %s, fits in %.1f GiB", a.from, a.to,
                    pct(a.before->mfu), pct(a.after->mfu), step_change(a).c_str(), gib(a.after->memory.total()));
    case AdviceKind::kFp8:
      return strfmt("precision = \"fp8\" (Transformer Engine): %s, if the model trains stably in fp8",
                    step_change(a).c_str());
    case AdviceKind::kFlashAttention:
      return strfmt("flash_attention = true: %s", step_change(a).c_str());
    case AdviceKind::kPrefillComputeBound:
      return "prefill is compute-bound: a faster GPU or fp8 weights shorten time to first token";
    case AdviceKind::kDecodeBatch:
      return strfmt(
          "decode reads all weights per step: batch %.0f -> %.0f raises output to %.0f tokens/s (from %.0f) at "
          "%.1f ms per token",
          a.from, a.to, a.after->tokens_per_s, a.before->tokens_per_s, units::to_ms(a.after->step_time));
    case AdviceKind::kInt8Weights:
      return strfmt("8-bit weights (%s) read half the bytes: %.0f tokens/s (from %.0f)", label(a.change).c_str(),
                    a.after->tokens_per_s, a.before->tokens_per_s);
    case AdviceKind::kFuseElementwise:
      if (!a.change.empty()) {
        return strfmt(
            "%.0f %% of the step is bandwidth-bound kernels (norms, activations, residuals, optimizer); fusing "
            "norm with residual, RoPE and the loss (torch.compile, Transformer Engine: runtime.fusion.*, "
            "composite_ops = false): %s",
            pct(a.share), step_change(a).c_str());
      }
      return strfmt(
          "%.0f %% of the step is bandwidth-bound kernels (norms, activations, residuals, optimizer); fusing them "
          "(torch.compile, fused kernels) cuts their DRAM traffic",
          pct(a.share));
    case AdviceKind::kExposedComm:
      return strfmt("%.0f ms of %.0f ms gradient traffic per step is exposed over %s", units::to_ms(a.exposed),
                    units::to_ms(a.total), paths(e).c_str());
    case AdviceKind::kGlobalBatch:
      return strfmt(
          "global_batch %.0f -> %.0f (more gradient accumulation) spreads the same traffic over twice the tokens: %s",
          a.from, a.to, step_change(a).c_str());
    case AdviceKind::kTensorInNode:
      return strfmt(
          "gpus_per_node = %.0f (each tensor group of %.0f GPUs in one server, its all-reduces over the server's own "
          "link, not the network): %s",
          a.to, a.to, tokens_change(a).c_str());
    case AdviceKind::kFewerTensorRanks:
      return strfmt("tensor %.0f -> %.0f with twice the replicas on the same GPUs (fewer ranks per all-reduce): %s",
                    a.from, a.to, tokens_change(a).c_str());
    case AdviceKind::kHostStaged:
      return "this GPU has no peer-to-peer over PCIe on the stock driver: every collective is staged through host "
             "memory; NVLink GPUs avoid it";
    case AdviceKind::kLaunchBound:
      return strfmt("launch-bound: %.0f kernels x %.1f us = %.1f ms of host time per step against %.1f ms of GPU work",
                    a.kernels, units::to_us(a.per_kernel), units::to_ms(a.exposed), units::to_ms(a.total));
    case AdviceKind::kCudaGraphs:
      return strfmt("cuda_graphs = true (capture the step in a CUDA graph): %s", step_change(a).c_str());
    case AdviceKind::kKernelGaps:
      return strfmt("%.0f kernels per step x %.1f us of gap between kernels = %.1f ms against %.1f ms of kernel time",
                    a.kernels, units::to_us(a.per_kernel), units::to_ms(a.per_kernel * a.kernels),
                    units::to_ms(a.total));
    case AdviceKind::kBatchAmortizesLaunch:
      return strfmt("batch %.0f -> %.0f amortizes the launches: %.0f tokens/s (from %.0f)", a.from, a.to,
                    a.after->tokens_per_s, a.before->tokens_per_s);
    case AdviceKind::kInputWorkers:
      return strfmt("host preprocessing is the slowest stage: workers %.0f -> %.0f removes the %.0f ms stall per step",
                    a.from, a.to, units::to_ms(a.exposed));
    case AdviceKind::kInputStorage:
      return strfmt(
          "storage bandwidth is the slowest stage: %.1fx faster storage (or caching) removes the %.0f ms stall per "
          "step",
          a.share, units::to_ms(a.exposed));
    case AdviceKind::kInputPcie:
      return "host-to-device copies are the slowest stage: use pinned memory and overlap copies with compute";
    case AdviceKind::kNoCheaperVariant:
      return strfmt("no cheaper variant found: the step already runs at %.0f %% MFU", pct(a.before->mfu));
    case AdviceKind::kPlan:
      return "`gpusim plan` searches every tensor/pipeline/data/ZeRO/micro-batch layout of this job";
    case AdviceKind::kOffloadLess:
      return strfmt("%s: %s, fits in %.1f of %.1f GiB per GPU and %.1f GiB of host memory per GPU",
                    label(a.change).c_str(), step_change(a).c_str(), gib(a.after->memory.total()),
                    gib(a.after->memory.capacity), gib(a.after->memory.host));
    case AdviceKind::kOffloadBound:
      return strfmt(
          "the step waits %s (%.0f %%) on offload traffic, and nothing that offloads less fits: more GPUs to "
          "shard the states over (ZeRO-3), a GPU with more memory, or faster host memory and NVMe",
          duration(a.exposed).c_str(), pct(a.share));
    case AdviceKind::kHostFitsWith:
      return strfmt("%s: host memory %.1f -> %.1f GiB per GPU (the host has %.1f), %s", label(a.change).c_str(),
                    gib(a.before->memory.host), gib(a.after->memory.host), gib(a.after->memory.host_capacity),
                    step_change(a).c_str());
    case AdviceKind::kMoreHostMemory:
      return strfmt(
          "the offloaded states need %.1f GiB of host memory per GPU and the host has %.1f: a host with more "
          "memory, more nodes to spread them over, or offloading less",
          gib(a.before->memory.host), gib(a.before->memory.host_capacity));
    case AdviceKind::kFillPipeline:
      return strfmt("global_batch %.0f -> %.0f (twice the micro-batches per step) fills the pipeline longer: %s",
                    a.from, a.to, step_change(a).c_str());
    case AdviceKind::kPipelineBubble:
      return strfmt(
          "%.0f %% of the step is the pipeline bubble: more micro-batches per step, interleaved stages "
          "(parallelism.virtual_stages) or fewer pipeline stages shrink it",
          pct(a.share));
  }
  return {};
}

std::string unknown_text(const answer::Contribution& c) {
  using answer::Unknown;
  const std::string assumed = c.assumed ? ", assumption" : "";
  // An efficiency of the GPU (its own range, or its architecture's), as a fraction of its value.
  auto efficiency = [&](const char* key) {
    return strfmt("%sefficiency: %s of %s (%s) ±%.0f %%", c.assumed ? "assumed " : "", key, c.spec.c_str(),
                  c.arch.c_str(), pct(c.range));
  };
  switch (c.unknown) {
    case Unknown::kMicroBatch:
      return strfmt("micro-batch not set (default 1 used; up to %.0f fits)", c.range);
    case Unknown::kRuntime:
      return strfmt("runtime not named (default %s used; another stack's remainder ±%.2f)", c.spec.c_str(), c.range);
    case Unknown::kGemm:
      return efficiency("gemm");
    case Unknown::kAttention:
      return efficiency("attention");
    case Unknown::kDram:
      return efficiency("dram");
    case Unknown::kGemvInflight:
      return efficiency("gemv_inflight_per_sm");
    case Unknown::kPeerLink:
      return efficiency("peer_link");
    case Unknown::kKernelOverhead:
      return efficiency("kernel_overhead");
    case Unknown::kLaunch:
      return efficiency("launch");
    case Unknown::kBetweenGpus:
      return strfmt("GPU without its own measurements (%s on %s defaults, ±%.0f %%%s)", c.spec.c_str(), c.arch.c_str(),
                    pct(c.range), assumed.c_str());
    case Unknown::kRemainder:
      return strfmt("runtime remainder of %s (±%.2f, %s)", c.spec.c_str(), c.range,
                    c.assumed ? "assumed: no spread of its own fit rows" : "its fit rows' spread");
    case Unknown::kOverlap:
      return strfmt("communication hidden behind compute in %s (±%.2f of each share%s)", c.spec.c_str(), c.range,
                    assumed.c_str());
    case Unknown::kDispatch:
      return strfmt("host dispatch time per kernel in %s (±%.0f %%%s)", c.spec.c_str(), pct(c.range), assumed.c_str());
    case Unknown::kStepOverhead:
      return strfmt("host time per serving iteration in %s (±%s%s)", c.spec.c_str(), duration(Seconds(c.range)).c_str(),
                    assumed.c_str());
    case Unknown::kModelError:
      if (c.error) {
        // The measured figure within predicted × [e^−high, e^−low], as a change of the prediction.
        const workload::ModelErrorGroup& g = *c.error;
        return strfmt(
            "model error on publications it was not fitted to (%s %s, %s, %d rows: measured %+.0f %% to "
            "%+.0f %% of predicted)",
            base::name_in(workload::kJobKindNames, g.job), base::name_in(workload::kMetricFamilyNames, g.metric),
            g.runtime.empty() ? "every runtime" : g.runtime.c_str(), g.rows, pct(std::exp(-g.high) - 1.0),
            pct(std::exp(-g.low) - 1.0));
      }
      break;
  }
  return answer::to_string(c.unknown);
}

std::string intra_path_text(const physics::IntraPath& p) {
  using K = physics::IntraPath::Kind;
  const double gbs = units::to_gigabytes_per_second(p.bandwidth);
  switch (p.kind) {
    case K::kMesh:
      return strfmt("%s full mesh (%d links, %.0f GB/s per direction each)", p.link.c_str(), p.links, gbs);
    case K::kNvlink:
      return strfmt("%s (%.0f GB/s per direction)", p.link.c_str(), gbs);
    case K::kPcieP2p:
      return strfmt("%s peer-to-peer (%.1f GB/s per direction)", p.link.c_str(), gbs);
    case K::kPcieStaged:
      break;
  }
  return strfmt("%s, no P2P: staged through host memory (%.1f GB/s achievable)", p.link.c_str(), gbs);
}

// Why a job cannot run, in numbers: the GPU memory it needs beyond what it may use, what it
// offloads beyond the host's memory, the KV cache short of one request.
std::string shortfall_words(const answer::Estimate& e) {
  const physics::MemoryBreakdown& m = e.eval.memory;
  std::vector<std::string> parts;
  const Bytes room = m.budget.value() > 0 ? m.budget : m.capacity;
  if (m.total() > room) {
    parts.push_back(strfmt("needs %.1f GiB per GPU of the %.1f GiB it may use (%.1f GiB short)", gib(m.total()),
                           gib(room), gib(m.total() - room)));
  }
  if (!m.host_fits()) {
    parts.push_back(strfmt("offloads %.1f GiB per GPU to a host memory of %.1f GiB per GPU (%.1f GiB short)",
                           gib(m.host), gib(m.host_capacity), gib(m.host - m.host_capacity)));
  }
  if (e.eval.inference && e.eval.inference->kv_request_tokens > e.eval.inference->kv_capacity_tokens) {
    const step::InferenceResult& r = *e.eval.inference;
    parts.push_back(strfmt("its KV cache holds %s tokens per replica, short of the %s one request needs",
                           human(r.kv_capacity_tokens).c_str(), human(r.kv_request_tokens).c_str()));
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    out += (i == 0 ? "" : "; ") + parts[i];
  }
  return out;
}

namespace {
std::string job_words(const std::string& model, bool images, const std::optional<workload::Training>& training,
                      const std::optional<workload::Inference>& inference) {
  if (training) {
    const workload::Training& t = *training;
    const char* method = t.method == workload::Method::kFull   ? "training"
                         : t.method == workload::Method::kLora ? "LoRA fine-tune"
                                                               : "QLoRA fine-tune";
    return images ? strfmt("%s %s, %s images", model.c_str(), method, human(t.tokens).c_str())
                  : strfmt("%s %s, %s tokens of %lld", model.c_str(), method, human(t.tokens).c_str(),
                           static_cast<long long>(t.seq_len));
  }
  if (!inference) {
    return model;
  }
  const workload::Inference& i = *inference;
  std::string load;
  switch (i.load.arrival) {
    case workload::Arrival::kPoisson:
      load = strfmt("Poisson %.3g requests/s", i.load.rate);
      break;
    case workload::Arrival::kConcurrency:
      load = strfmt("%lld requests in flight", static_cast<long long>(i.load.concurrency));
      break;
    case workload::Arrival::kOffline:
      load = i.batch_max ? std::string("batches as large as memory holds")
                         : strfmt("batches of %lld", static_cast<long long>(i.batch));
      break;
  }
  return strfmt("%s serving, %s, prompt %lld and output %lld tokens", model.c_str(), load.c_str(),
                static_cast<long long>(i.prompt_tokens), static_cast<long long>(i.output_tokens));
}
}  // namespace

std::string job_words(const scenario::Scenario& sc) {
  return job_words(sc.job.model.name, sc.job.model.images(), sc.job.training, sc.job.inference);
}

std::string compare_title(const scenario::Scenario& sc) {
  return job_words(sc) +
         (sc.system.gpus == 1 ? std::string(", on one of each GPU") : strfmt(", on %d of each GPU", sc.system.gpus));
}

std::string scenario_title(const scenario::Scenario& sc) { return sc.hardware_replaced ? job_words(sc) : sc.name; }

std::string run_title(const answer::Estimate& e) {
  if (!e.hardware_replaced) {
    return e.scenario;
  }
  return job_words(e.model_name, e.images, e.training,
                   e.serving ? std::optional<workload::Inference>(e.serving->inference) : std::nullopt);
}

}  // namespace gpusim::report
