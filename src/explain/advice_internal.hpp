// Private to src/explain/: what the advice files share. Each piece of advice is the scenario with
// one change run through the same evaluator (advice.cpp; offload_advice.cpp for what the host side
// bounds: offload traffic, host memory, and the pipeline bubble).
#pragma once

#include <vector>

#include "gpusim/explain.hpp"

namespace gpusim::explain {

// Where the advice goes, and how its variants run: through the one evaluator, their serving runs
// taking iteration tables from `tables` (step::TableCache; the estimate's, where it has one).
struct Advising {
  std::vector<Advice> list;
  step::TableCache* tables = nullptr;
  [[nodiscard]] Effect run(const scenario::Scenario& v) const;
};

// A variant: the scenario with `change` applied to its structs, to be evaluated.
struct Variant {
  std::vector<scenario::Override> change;
  scenario::Scenario sc;
};

Advice of(AdviceKind kind);
// Advice of `kind` that a variant's change gives: the effect before and after it.
Advice advised(AdviceKind kind, const Variant& v, const Effect& before, const Effect& after);
Effect effect_of(const step::Evaluation& e);
// The share of time per token a variant saves (negative: it costs).
double gain(const Effect& before, const Effect& after);

void offload_advice(const scenario::Scenario& sc, const step::Evaluation& e, Advising& out);
void host_memory_advice(const scenario::Scenario& sc, const step::Evaluation& e, Advising& out);
void bubble_advice(const scenario::Scenario& sc, const step::Evaluation& e, Advising& out);

}  // namespace gpusim::explain
