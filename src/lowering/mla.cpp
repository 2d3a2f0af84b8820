// Attention's projections: multi-head (or grouped-query) attention's QKV and output GEMMs
// [shoeybi-2019], or multi-head latent attention's [deepseek-v2-2024]: Q through a q_lora_rank
// bottleneck (down, RMSNorm, up), K and V up from a kv_lora_rank latent that one down projection
// writes with the shared rotary key (then RMSNorm on the latent), O from heads·v_head_dim. The
// down projections and their norms are replicated across tensor-parallel ranks, the up projections
// split by heads (column-parallel), the output by rows, as in DeepSeek's inference code
// [deepseek-v3-config]. Training decompresses K and V per head; the absorbed decode form that
// attends over the latent is not modelled (decode attention reads the latent cache either way).
#include "lowering/builder.hpp"

namespace gpusim::lowering {

void attention_in(Builder& b, const PassShape& p, Phase ph, double gemm_share) {
  const ModelShape& m = *p.m;
  const double h = static_cast<double>(m.hidden);
  if (!m.mla) {
    const double kv = static_cast<double>(m.kv_dim());
    // Apart (fusion.projections false): Q, K and V each their own GEMM over the same input; LoRA
    // training keeps the concatenated view its adapters are attached to.
    if (!p.fusion.projections && !p.frozen()) {
      for (double n : {h, kv, kv}) {
        b.linear("qkv", p, ph, n, h, gemm_share, Split::kColumn);
      }
      return;
    }
    b.linear("qkv", p, ph, h + 2.0 * kv, h, gemm_share, Split::kColumn);
    return;
  }
  const workload::MlaShape& a = *m.mla;
  const double heads = static_cast<double>(m.heads);
  const double t = p.tokens();
  const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
  const double q_lora = static_cast<double>(a.q_lora_rank);
  const double kv_lora = static_cast<double>(a.kv_lora_rank);
  const bool bwd = ph == Phase::kBackward;
  // A norm pass reads its input and writes its output (backward: reads x and dy, writes dx).
  const double norm_passes = bwd ? 3.0 : 2.0;
  if (a.q_lora_rank > 0) {
    b.linear("mla.q_down", p, ph, q_lora, h, gemm_share);
    b.mem(bwd ? "mla.q_norm.bwd" : "mla.q_norm", ph, norm_passes * t * q_lora * p.e, 1);
    b.linear("mla.q_up", p, ph, heads * qk, q_lora, gemm_share, Split::kColumn);
  } else {
    b.linear("mla.q", p, ph, heads * qk, h, gemm_share, Split::kColumn);
  }
  b.linear("mla.kv_down", p, ph, kv_lora + static_cast<double>(a.qk_rope_head_dim), h, gemm_share);
  b.mem(bwd ? "mla.kv_norm.bwd" : "mla.kv_norm", ph, norm_passes * t * kv_lora * p.e, 1);
  b.linear("mla.kv_up", p, ph, heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim), kv_lora, gemm_share,
           Split::kColumn);
}

void attention_out(Builder& b, const PassShape& p, Phase ph, double gemm_share) {
  const ModelShape& m = *p.m;
  const double h = static_cast<double>(m.hidden);
  const double in = m.mla ? static_cast<double>(m.heads * m.mla->v_head_dim) : h;
  b.linear("attn.out", p, ph, h, in, gemm_share, Split::kRow);
}

}  // namespace gpusim::lowering
