// Parameter counts, FLOPs and the standard shape of the params quick form (equations and sources
// in include/gpusim/workload.hpp).
#include <algorithm>
#include <cmath>

#include "gpusim/workload.hpp"

namespace gpusim::workload {

namespace {

// "1B standard-shape model", "350M standard-shape model": the count asked for, as model names
// give it (B for 10^9).
std::string standard_shape_name(double params) {
  const char* suffix[] = {"", "k", "M", "B", "T"};
  int i = 0;
  while (params >= 1000.0 && i < 4) {
    params /= 1000.0;
    ++i;
  }
  return base::strfmt("%.3g%s standard-shape model", params, suffix[i]);
}

double ffn_matrices(const ModelShape& m) { return m.ffn == FfnKind::kSwiglu ? 3.0 : 2.0; }

// One FFN of width f: its matrices (and biases).
double ffn_params(const ModelShape& m, double f) {
  const double h = static_cast<double>(m.hidden);
  const double mats = ffn_matrices(m);
  return mats * h * f + (m.bias ? (mats - 1.0) * f + h : 0.0);
}

}  // namespace

std::int64_t ModelShape::moe_layers() const {
  if (!moe || moe->experts <= 0 || layers <= moe->dense_layers) {
    return 0;
  }
  // Layers dense_layers, dense_layers + every, ... (DeepSeek: layer_idx % moe_layer_freq == 0
  // after first_k_dense_replace, with freq 1 [deepseek-v3-config]).
  const std::int64_t every = std::max<std::int64_t>(1, moe->every);
  return (layers - moe->dense_layers + every - 1) / every;
}

std::int64_t ModelShape::attention_width() const {
  if (mla) {
    return heads * (mla->qk_nope_head_dim + mla->qk_rope_head_dim + mla->v_head_dim) / 2;
  }
  return hidden;
}

std::int64_t ModelShape::attention_kv_width() const { return mla ? attention_width() : kv_dim(); }

std::int64_t ModelShape::kv_cache_width() const {
  return mla ? mla->kv_lora_rank + mla->qk_rope_head_dim : 2 * kv_dim();
}

double attention_params(const ModelShape& m) {
  const double h = static_cast<double>(m.hidden);
  if (m.mla) {
    // DeepSeek-V3's modelling code [deepseek-v3-config]: q_a (h x q_lora) + its norm + q_b
    // (q_lora x heads·qk), or q_proj (h x heads·qk); kv_a (h x (kv_lora + rope)) + its norm; kv_b
    // (kv_lora x heads·(nope + v)); o_proj (heads·v x h). No biases.
    const MlaShape& a = *m.mla;
    const double heads = static_cast<double>(m.heads);
    const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
    const double q_lora = static_cast<double>(a.q_lora_rank);
    const double kv_lora = static_cast<double>(a.kv_lora_rank);
    const double q = a.q_lora_rank > 0 ? h * q_lora + q_lora + q_lora * heads * qk : h * heads * qk;
    const double kv = h * (kv_lora + static_cast<double>(a.qk_rope_head_dim)) + kv_lora +
                      kv_lora * heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim);
    return q + kv + heads * static_cast<double>(a.v_head_dim) * h;
  }
  const double qkv_out = h + 2.0 * static_cast<double>(m.kv_dim());
  return h * qkv_out + h * h + (m.bias ? qkv_out + h : 0.0);
}

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
  const double ffn_mats = ffn_matrices(m);
  const double norm = m.norm == NormKind::kLayerNorm ? 2.0 * h : h;

  ParamCount p;
  if (!m.moe && !m.mla) {
    p.per_layer = h * qkv_out + h * h + ffn_mats * h * f + 2.0 * norm;
    if (m.bias) {
      // QKV and output projection biases; FFN up (gate+up for swiglu) and down biases.
      p.per_layer += qkv_out + h + (ffn_mats - 1.0) * f + h;
    }
  } else {
    // Layers differ: per_layer is their mean, so that per_layer x layers is the blocks' total.
    const double layers = static_cast<double>(m.layers);
    const double moe = static_cast<double>(m.moe_layers());
    double ffn = ffn_params(m, f) * (layers - moe);
    if (m.moe) {
      // Per MoE layer: the router (h x experts, no bias), the routed and the shared experts.
      const MoeShape& e = *m.moe;
      const double per_moe = h * static_cast<double>(e.experts) +
                             static_cast<double>(e.experts) * ffn_params(m, static_cast<double>(e.expert_ffn_hidden)) +
                             (e.shared_ffn_hidden > 0 ? ffn_params(m, static_cast<double>(e.shared_ffn_hidden)) : 0.0);
      ffn += per_moe * moe;
    }
    p.per_layer = attention_params(m) + 2.0 * norm + (layers > 0 ? ffn / layers : 0.0);
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

double expert_params(const ModelShape& m) {
  if (!m.moe) {
    return 0.0;
  }
  return static_cast<double>(m.moe_layers()) * static_cast<double>(m.moe->experts) *
         ffn_params(m, static_cast<double>(m.moe->expert_ffn_hidden));
}

double active_params(const ModelShape& m) {
  if (!m.moe || m.moe->experts <= 0) {
    return total_params(m);
  }
  const double idle = static_cast<double>(m.moe->experts - m.moe->top_k) / static_cast<double>(m.moe->experts);
  return total_params(m) - expert_params(m) * idle;
}

double rank_params(const ModelShape& m, const Layout& layout) {
  ModelCounts c;
  c.experts = expert_params(m);
  c.total = total_params(m);
  return rank_params(c, layout);
}

double rank_params(const ModelCounts& c, const Layout& layout) {
  const double split = static_cast<double>(layout.tensor) * layout.pipeline;
  return (c.total - c.experts) / split + c.experts / (split * layout.expert);
}

double matmul_params(const ModelShape& m) {
  if (m.family == Family::kResNet) {
    return resnet_macs(m.resnet);  // weights times the positions each one multiplies: MACs per image
  }
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn_hidden);
  const double ffn_mats = ffn_matrices(m);
  if (!m.moe && !m.mla) {
    const double per_layer = h * (h + 2.0 * static_cast<double>(m.kv_dim())) + h * h + ffn_mats * h * f;
    if (m.family == Family::kVit) {
      return per_layer * static_cast<double>(m.layers) + 3.0 * static_cast<double>(m.vit.patch * m.vit.patch) * h;
    }
    return per_layer * static_cast<double>(m.layers) + static_cast<double>(m.vocab) * h;
  }
  const double layers = static_cast<double>(m.layers);
  const double moe = static_cast<double>(m.moe_layers());
  double blocks = ffn_mats * h * f * (layers - moe);
  if (m.moe) {
    const MoeShape& e = *m.moe;
    const double active_width = static_cast<double>(e.top_k * e.expert_ffn_hidden + e.shared_ffn_hidden);
    blocks += (h * static_cast<double>(e.experts) + ffn_mats * h * active_width) * moe;
  }
  // The attention projections' matrices (MLA's two latent norms are no matmul: a rounding error).
  blocks += attention_params(m) * layers;
  return blocks + static_cast<double>(m.vocab) * h;
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
    m.name = standard_shape_name(params);
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
  const Flop attention = attention_matmul_flops(1.0, 1.0, seq_len, static_cast<double>(m.attention_width()), 1.0) * 3.0;
  return Flop(6.0 * matmul_params(m)) + attention * static_cast<double>(m.layers);
}

}  // namespace gpusim::workload
