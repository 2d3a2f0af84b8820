// Advice when the host side bounds the step: offload traffic to host memory or NVMe, offloaded
// states that do not fit the host's memory, and the pipeline bubble. Every variant is the scenario
// with one change run through the same evaluator (advice_internal.hpp).
#include <algorithm>
#include <string>

#include "explain/advice_internal.hpp"

namespace gpusim::explain {
namespace {

using workload::Offload;

std::string quoted(Offload o) { return base::strfmt("\"%s\"", base::name_in(workload::kOffloadNames, o)); }

// One step nearer the GPU: NVMe to host memory, host memory to none.
Offload nearer(Offload o) { return o == Offload::kNvme ? Offload::kCpu : Offload::kNone; }

}  // namespace

void offload_advice(const scenario::Scenario& sc, const step::Evaluation& e, Advising& out) {
  if (!sc.job.training) {
    return;
  }
  const workload::Training& t = *sc.job.training;
  std::vector<Variant> variants;
  if (t.offload_params != Offload::kNone) {
    Variant v{{{"training.offload_params", quoted(nearer(t.offload_params))}}, sc};
    v.sc.job.training->offload_params = nearer(t.offload_params);
    variants.push_back(v);
  }
  if (t.offload_optimizer != Offload::kNone) {
    Variant v{{{"training.offload_optimizer", quoted(nearer(t.offload_optimizer))}}, sc};
    v.sc.job.training->offload_optimizer = nearer(t.offload_optimizer);
    variants.push_back(v);
  }
  if (t.offload_activations) {
    Variant v{{{"training.offload_activations", "false"}}, sc};
    v.sc.job.training->offload_activations = false;
    variants.push_back(v);
  }
  const Effect before = effect_of(e);
  for (const Variant& v : variants) {
    const Effect after = out.run(v.sc);
    if (after.memory.fits() && gain(before, after) >= 0.01) {
      out.list.push_back(advised(AdviceKind::kOffloadLess, v, before, after));
    }
  }
  if (out.list.empty()) {
    Advice a = of(AdviceKind::kOffloadBound);
    a.exposed = e.step.offload;
    a.share = e.step.offload / e.step.time;
    a.before = before;
    out.list.push_back(a);
  }
}

void host_memory_advice(const scenario::Scenario& sc, const step::Evaluation& e, Advising& out) {
  const Effect before = effect_of(e);
  if (sc.job.training) {
    const workload::Training& t = *sc.job.training;
    const bool nvme = sc.system.host.nvme_bandwidth.value() > 0;
    std::vector<Variant> variants;
    Variant all{{}, sc};
    if (nvme && t.offload_params == Offload::kCpu) {
      Variant v{{{"training.offload_params", quoted(Offload::kNvme)}}, sc};
      v.sc.job.training->offload_params = Offload::kNvme;
      variants.push_back(v);
      all.change.push_back(v.change.front());
      all.sc.job.training->offload_params = Offload::kNvme;
    }
    if (nvme && t.offload_optimizer == Offload::kCpu) {
      Variant v{{{"training.offload_optimizer", quoted(Offload::kNvme)}}, sc};
      v.sc.job.training->offload_optimizer = Offload::kNvme;
      variants.push_back(v);
      all.change.push_back(v.change.front());
      all.sc.job.training->offload_optimizer = Offload::kNvme;
    }
    if (t.offload_activations) {
      Variant v{{{"training.offload_activations", "false"}}, sc};
      v.sc.job.training->offload_activations = false;
      variants.push_back(v);
    }
    if (all.change.size() > 1) {
      variants.push_back(all);
    }
    for (const Variant& v : variants) {
      const Effect after = out.run(v.sc);
      if (after.memory.fits()) {
        out.list.push_back(advised(AdviceKind::kHostFitsWith, v, before, after));
      }
    }
  }
  if (out.list.empty()) {
    Advice a = of(AdviceKind::kMoreHostMemory);
    a.before = before;
    out.list.push_back(a);
  }
}

void bubble_advice(const scenario::Scenario& sc, const step::Evaluation& e, Advising& out) {
  Advice a = of(AdviceKind::kPipelineBubble);
  a.share = e.step.bubble / e.step.time;
  out.list.push_back(a);
  if (!sc.job.training) {
    return;
  }
  // More micro-batches per step fill the pipeline: the same bubble over more work.
  const auto gb = sc.job.training->global_batch;
  scenario::Scenario v = sc;
  v.job.training->global_batch = 2 * gb;
  Advice more = of(AdviceKind::kFillPipeline);
  more.change = {{"training.global_batch", std::to_string(2 * gb)}};
  more.before = effect_of(e);
  more.after = out.run(v);
  more.from = static_cast<double>(gb);
  more.to = static_cast<double>(2 * gb);
  if (more.after->memory.fits() && gain(*more.before, *more.after) >= 0.01) {
    out.list.push_back(more);
  }
}

}  // namespace gpusim::explain
