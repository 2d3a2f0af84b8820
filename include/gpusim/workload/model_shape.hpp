// Shape of a dense decoder (or encoder) transformer, and the parameter count it implies.
// Parameter accounting follows the released GPT-2 and Llama configurations: per layer
// QKV (h * (h + 2 * kv_heads * head_dim)) + output projection h^2 + FFN (2 or 3 matrices of
// h x ffn_hidden) + two norms; token embedding V*h (twice when untied); learned positions
// max_seq*h; a final norm. Checks: GPT-2 124M = 124,439,808; Llama-2-7B = 6,738,415,616.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpusim {

enum class FfnKind { kGelu, kSwiglu };
enum class NormKind { kLayerNorm, kRmsNorm };
enum class PositionKind { kLearned, kRope };

struct ModelShape {
  std::string name;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t ffn_hidden = 0;
  FfnKind ffn = FfnKind::kGelu;
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  bool causal = true;
  NormKind norm = NormKind::kLayerNorm;
  bool bias = false;
  PositionKind position = PositionKind::kRope;
  std::int64_t max_seq = 0;

  [[nodiscard]] std::int64_t head_dim() const { return heads > 0 ? hidden / heads : 0; }
  [[nodiscard]] std::int64_t kv_dim() const { return kv_heads * head_dim(); }
};

struct ParamCount {
  double per_layer = 0;    // one transformer block
  double embedding = 0;    // token embedding (+ untied output head counted separately)
  double output_head = 0;  // 0 when tied
  double position = 0;     // learned positions
  double final_norm = 0;
  [[nodiscard]] double total(std::int64_t layers) const {
    return per_layer * static_cast<double>(layers) + embedding + output_head + position + final_norm;
  }
};

ParamCount count_params(const ModelShape& m);
inline double total_params(const ModelShape& m) { return count_params(m).total(m.layers); }
// Parameters that take part in matrix multiplies per token: every block, plus the logits
// projection (the tied or untied V x h matrix) — not the embedding lookup or positions.
double matmul_params(const ModelShape& m);

// A standard shape for the quick `params = N` form: Llama-style (swiglu, rmsnorm, rope, untied,
// head_dim 128) with layers and hidden chosen from the Kaplan/Llama aspect ratio
// (hidden ≈ 128 * layers^... see model_shape.cpp), so that total_params ≈ N.
// nullopt when no such shape lands within 10 % of N (below ~10M parameters with a 32k vocabulary).
std::optional<ModelShape> shape_from_params(double params, std::int64_t vocab);

}  // namespace gpusim
