// Parameter counts, FLOPs and the standard shape of the params quick form (equations and sources
// in include/gpusim/workload.hpp).
#include <algorithm>
#include <cmath>

#include "gpusim/workload.hpp"

namespace gpusim::workload {

ParamCount count_params(const ModelShape& m) {
  if (m.family == Family::kResNet) {
    ParamCount p;
    p.embedding = resnet_params(m.resnet);
    return p;
  }
  const double h = static_cast<double>(m.hidden);
  const double kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.ffn_hidden);
  const double qkv_out = h + 2.0 * kv;
  const double ffn_mats = m.ffn == FfnKind::kSwiglu ? 3.0 : 2.0;
  const double norm = m.norm == NormKind::kLayerNorm ? 2.0 * h : h;

  ParamCount p;
  p.per_layer = h * qkv_out + h * h + ffn_mats * h * f + 2.0 * norm;
  if (m.bias) {
    // QKV and output projection biases; FFN up (gate+up for swiglu) and down biases.
    p.per_layer += qkv_out + h + (ffn_mats - 1.0) * f + h;
  }
  p.embedding = static_cast<double>(m.vocab) * h;
  p.output_head = m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab) * h;
  p.position = m.position == PositionKind::kLearned ? static_cast<double>(m.max_seq) * h : 0.0;
  p.final_norm = norm;
  if (m.family == Family::kVit) {
    p.embedding = 3.0 * static_cast<double>(m.vit.patch * m.vit.patch) * h + 2.0 * h;  // projection, bias, class token
    p.output_head = static_cast<double>(m.vocab) * (h + 1.0);                          // classifier with biases
  }
  return p;
}

double matmul_params(const ModelShape& m) {
  if (m.family == Family::kResNet) {
    return resnet_macs(m.resnet);  // weights times the positions each one multiplies: MACs per image
  }
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn_hidden);
  const double ffn_mats = m.ffn == FfnKind::kSwiglu ? 3.0 : 2.0;
  const double per_layer = h * (h + 2.0 * static_cast<double>(m.kv_dim())) + h * h + ffn_mats * h * f;
  if (m.family == Family::kVit) {
    return per_layer * static_cast<double>(m.layers) + 3.0 * static_cast<double>(m.vit.patch * m.vit.patch) * h;
  }
  return per_layer * static_cast<double>(m.layers) + static_cast<double>(m.vocab) * h;
}

std::optional<ModelShape> shape_from_params(double params, std::int64_t vocab) {
  // Past 10^15 parameters (500x today's largest models) the solved hidden size no longer fits the
  // integer it is rounded to (a fuzzed 1e90 overflowed llround): no standard shape.
  if (!(params > 0) || params > 1e15 || vocab <= 0) {
    return std::nullopt;
  }
  // Llama-2 7B and 13B have hidden = 128 * layers (aspect ratio 128) and head_dim 128; each
  // layer holds ~12 h^2 parameters (4 h^2 attention + 3 * 8/3 h^2 swiglu). Pick the layer count
  // whose solved hidden size (rounded to a multiple of 128) lands closest to that aspect ratio.
  constexpr double kAspect = 128.0;
  constexpr std::int64_t kHeadDim = 128;
  std::optional<ModelShape> best;
  double best_score = 1e300;
  for (std::int64_t layers = 2; layers <= 256; ++layers) {
    const double a = 12.0 * static_cast<double>(layers);
    const double b = 2.0 * static_cast<double>(vocab);
    const double h_exact = (-b + std::sqrt(b * b + 4.0 * a * params)) / (2.0 * a);
    const std::int64_t hidden = std::max<std::int64_t>(kHeadDim, std::llround(h_exact / kHeadDim) * kHeadDim);
    ModelShape m;
    m.name = "standard shape";
    m.layers = layers;
    m.hidden = hidden;
    m.heads = hidden / kHeadDim;
    m.kv_heads = m.heads;
    m.ffn = FfnKind::kSwiglu;
    m.ffn_hidden = ((8 * hidden / 3 + 255) / 256) * 256;
    m.vocab = vocab;
    m.norm = NormKind::kRmsNorm;
    m.position = PositionKind::kRope;
    m.max_seq = 4096;
    const double err = std::fabs(total_params(m) / params - 1.0);
    const double score =
        err * 10.0 + std::fabs(std::log(static_cast<double>(hidden) / (kAspect * static_cast<double>(layers))));
    if (err < 0.1 && score < best_score) {
      best_score = score;
      best = m;
    }
  }
  return best;
}

Flop attention_matmul_flops(double seqs, double queries, double keys, double hidden, double mask) {
  return Flop(2.0 * 2.0 * seqs * queries * keys * hidden * mask);
}

Flop training_flops_per_token(const ModelShape& m, double seq_len) {
  // Attention per token and layer over the full s x s matrix (no causal saving, as PaLM counts
  // it): forward 4·s·h, forward and backward 3 x that.
  const Flop attention = attention_matmul_flops(1.0, 1.0, seq_len, static_cast<double>(m.hidden), 1.0) * 3.0;
  return Flop(6.0 * matmul_params(m)) + attention * static_cast<double>(m.layers);
}

}  // namespace gpusim::workload
