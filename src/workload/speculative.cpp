// Speculative decoding's expected yield per step (include/gpusim/workload.hpp, Speculative):
// each of the k proposals is accepted with probability α given that the ones before it were, the
// step stops at the first rejection and the target adds one token of its own (the correction, or
// the bonus token after k acceptances), so the accepted length is geometric, truncated at k:
//   E[tokens] = Σ_{i=0..k} α^i = (1 − α^(k+1)) / (1 − α)   [leviathan-2023, eq. 1]
#include <cmath>

#include "gpusim/workload.hpp"

namespace gpusim::workload {

double tokens_per_step(const Speculative& s) {
  if (!s.on()) {
    return 1.0;
  }
  const auto k = static_cast<double>(s.tokens);
  if (s.acceptance >= 1.0) {
    return k + 1.0;
  }
  return (1.0 - std::pow(s.acceptance, k + 1.0)) / (1.0 - s.acceptance);
}

double proposer_passes(const Speculative& s) {
  if (!s.on() || !s.proposer) {
    return 0.0;
  }
  return static_cast<double>(s.tokens);
}

double proposer_params(const Speculative& s) {
  if (!s.on() || !s.proposer) {
    return 0.0;
  }
  const ModelShape& p = *s.proposer;
  const auto h = static_cast<double>(p.hidden);
  switch (s.method) {
    case SpecMethod::kDraft:
      return total_params(p);
    case SpecMethod::kEagle:
      // Its decoder layers, and the layer that fuses the target's features with the token
      // embeddings (2h -> h); embedding and output head are the target's own [eagle-2024].
      return count_params(p).per_layer * static_cast<double>(p.layers) + 2.0 * h * h;
    case SpecMethod::kMedusa:
      // k heads, each a residual block (h x h and its bias) and its own output projection (h x V)
      // [medusa-2024].
      return static_cast<double>(s.tokens) * (h * h + h + h * static_cast<double>(p.vocab));
    default:
      return 0.0;
  }
}

}  // namespace gpusim::workload
