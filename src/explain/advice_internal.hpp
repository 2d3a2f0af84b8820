// Private to src/explain/: what the advice files share. Each piece of advice is the scenario with
// one change run through the same evaluator (advice.cpp; offload_advice.cpp for what the host side
// bounds: offload traffic, host memory, and the pipeline bubble).
#pragma once

#include <vector>

#include "gpusim/explain.hpp"

namespace gpusim::explain {

// A variant: the scenario with `change` applied to its structs, to be evaluated.
struct Variant {
  std::vector<scenario::Override> change;
  scenario::Scenario sc;
};

Advice of(AdviceKind kind);
// Advice of `kind` that a variant's change gives: the effect before and after it.
Advice advised(AdviceKind kind, const Variant& v, const Effect& before, const Effect& after);
Effect effect_of(const step::Evaluation& e);
Effect run(const scenario::Scenario& v);
// The share of time per token a variant saves (negative: it costs).
double gain(const Effect& before, const Effect& after);

void offload_advice(const scenario::Scenario& sc, const step::Evaluation& e, std::vector<Advice>& out);
void host_memory_advice(const scenario::Scenario& sc, const step::Evaluation& e, std::vector<Advice>& out);
void bubble_advice(const scenario::Scenario& sc, const step::Evaluation& e, std::vector<Advice>& out);

}  // namespace gpusim::explain
