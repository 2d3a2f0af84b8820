// [serving.speculative] of a scenario (keys in docs/scenarios.md): the speculative-decoding method,
// the tokens it proposes per step and the chance each is accepted, with each method's defaults
// from the publication that introduced it, and the proposer network the method runs.
#include "scenario/internal.hpp"

namespace gpusim::scenario::detail {

using base::strfmt;
using parse::Need;
using parse::Range;
using parse::Reader;
using workload::SpecMethod;

namespace {

// A method's defaults: tokens proposed per step (k) and the per-token acceptance α, each from a
// source (docs/sources.md). α is a property of the proposer, the target and the text; a scenario
// that knows its own (vLLM and SGLang log the mean acceptance length τ, from which
// α solves τ = (1 − α^(k+1)) / (1 − α)) should give it.
struct MethodDefaults {
  SpecMethod method;
  std::int64_t tokens;
  double acceptance;
};
constexpr MethodDefaults kDefaults[] = {
    // A draft model of the target's family: α 0.53-0.88 over the pairs of [leviathan-2023, Tables
    // 2-3], 0.71 and 0.75 for LaMDA 137B with 2B and 8B drafts on dialog; k = 5 as vLLM's draft
    // example [vllm-spec-decode-docs].
    {SpecMethod::kDraft, 5, 0.7},
    // EAGLE's draft layer in a chain: per-position acceptance on MT-bench 0.79, 0.74, 0.72, 0.73
    // (Vicuna 7B) and 0.75, 0.69, 0.65, 0.64 (LLaMA2-Chat 70B), mean 0.71 [eagle-2024]; k = 3 as
    // TensorRT-LLM's examples [trtllm-spec-decode-docs].
    {SpecMethod::kEagle, 3, 0.71},
    // Medusa's 5 heads [medusa-2024], each right about 0.6 of the time [eagle-2024, §2]; 0.6 over 5
    // heads gives 2.38 tokens per step, Spec-Bench measured 2.32 [spec-bench-2024].
    {SpecMethod::kMedusa, 5, 0.6},
    // Prompt lookup on chat: 1.63 tokens per step on MT-bench [eagle3-2025, Table 1], α = 0.39
    // (2.50 on summarization, where the answer copies the prompt: set acceptance); k = 5 as vLLM's
    // n-gram example [vllm-spec-decode-docs].
    {SpecMethod::kNgram, 5, 0.39},
};

const MethodDefaults* defaults_of(SpecMethod m) {
  for (const MethodDefaults& d : kDefaults) {
    if (d.method == m) {
      return &d;
    }
  }
  return nullptr;
}

// The most tokens a step may propose: engines verify a few (vLLM's and TensorRT-LLM's examples 3-8;
// EAGLE-2's dynamic trees go to about 10 deep); past this a chain gains nothing at any real α.
constexpr std::int64_t kMaxProposed = 16;
// EAGLE's draft is one decoder layer [eagle-2024]; a few layers at most keep it a draft.
constexpr std::int64_t kMaxDraftLayers = 8;

}  // namespace

void read_speculative(Reader& r, const catalog::Catalog& cat, Scenario& sc) {
  workload::Inference& inf = *sc.job.inference;
  workload::Speculative& sp = inf.speculative;
  const workload::ModelShape& target = sc.job.model;
  const auto method = r.choice("method", workload::kSpecMethodNames, Need::kRequired);
  if (!method) {
    r.allow({"tokens", "acceptance", "draft_model", "draft_layers"});
    r.finish();
    return;
  }
  sp.method = *method;
  const MethodDefaults* d = defaults_of(*method);
  sp.tokens = r.integer("tokens", Need::kOptional, 1, kMaxProposed).value_or(d != nullptr ? d->tokens : 0);
  sp.acceptance = r.number("acceptance", Need::kOptional, Range::kFraction).value_or(d != nullptr ? d->acceptance : 0);
  const bool draft = *method == SpecMethod::kDraft;
  const bool eagle = *method == SpecMethod::kEagle;
  if (!draft && r.has("draft_model")) {
    r.error("draft_model", "a draft model applies to method = \"draft\" only");
    r.allow({"draft_model"});
  }
  if (!eagle && r.has("draft_layers")) {
    r.error("draft_layers", "draft layers apply to method = \"eagle\" only");
    r.allow({"draft_layers"});
  }
  if (*method == SpecMethod::kNone) {
    sp = workload::Speculative{};
    r.allow({"draft_model", "draft_layers"});
    r.finish();
    return;
  }
  if (target.images()) {
    r.error("method", "an image model generates no tokens to speculate on");
  }
  if (draft) {
    const auto name = r.string("draft_model", Need::kRequired);
    if (name && !cat.has(catalog::SpecKind::kModel, *name)) {
      r.error("draft_model",
              "unknown model preset \"" + *name + "\" (" + cat.known_ids_near(catalog::SpecKind::kModel, *name) + ")");
    } else if (name) {
      workload::ModelShape m = cat.model(*name);
      // Acceptance compares the two models' distributions token by token: one vocabulary
      // [leviathan-2023, §2.3].
      if (m.vocab != target.vocab) {
        r.error("draft_model", strfmt("the draft model's vocabulary (%lld tokens) differs from the target's (%lld): "
                                      "speculation compares their distributions over one vocabulary",
                                      static_cast<long long>(m.vocab), static_cast<long long>(target.vocab)));
      } else if (m.layers >= target.layers && m.hidden >= target.hidden) {
        r.error("draft_model", "the draft model \"" + *name + "\" is no smaller than the target: nothing to gain");
      }
      sp.draft_name = *name;
      sp.proposer = m;
    }
  } else if (eagle) {
    workload::ModelShape m = target;
    m.layers = r.integer("draft_layers", Need::kOptional, 1, kMaxDraftLayers).value_or(1);
    m.moe.reset();  // EAGLE's draft layer is a dense decoder layer [eagle-2024]
    sp.proposer = m;
  } else if (*method == SpecMethod::kMedusa) {
    workload::ModelShape m = target;
    m.layers = 0;  // the heads alone: each an output projection (its small residual block aside)
    m.moe.reset();
    sp.proposer = m;
  }
  r.finish();
}

}  // namespace gpusim::scenario::detail
