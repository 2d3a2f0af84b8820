// Parameter roles of LoRA and QLoRA fine-tuning. LoRA [hu-lora-2021] freezes a pretrained matrix
// W (in x out) and trains B·A beside it, A: in x r and B: r x out, so each targeted matrix adds
// r·(in + out) trainable parameters. Targets per block: q (h x h), k and v (h x kv_dim), o (h x h);
// the FFN's up and gate (h x ffn_hidden each; gelu models have up only) and down (ffn_hidden x h).
// QLoRA [dettmers-qlora-2023] targets every linear layer of the blocks and stores the frozen block
// matrices in NF4; embeddings, the output head and the norms stay in 16 bits.
#include "gpusim/workload.hpp"

namespace gpusim::workload {

double adapter_params_per_layer(const ModelShape& m, const Training& t) {
  if (!t.adapters()) {
    return 0;
  }
  const double r = static_cast<double>(t.lora_rank);
  const double h = static_cast<double>(m.hidden);
  const double kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.ffn_hidden);
  const double q_v = r * (h + h) + r * (h + kv);
  if (t.lora_targets == LoraTargets::kQv) {
    return q_v;
  }
  const double attention = q_v + r * (h + kv) + r * (h + h);
  if (t.lora_targets == LoraTargets::kAttention) {
    return attention;
  }
  const double up_matrices = m.ffn == FfnKind::kSwiglu ? 2.0 : 1.0;
  return attention + up_matrices * r * (h + f) + r * (f + h);
}

ParamRoles param_roles(const ModelShape& m, const Training& t) {
  ParamRoles p;
  const double total = total_params(m);
  if (!t.adapters()) {
    p.trainable = total;
    return p;
  }
  const double layers = static_cast<double>(m.layers);
  const double h = static_cast<double>(m.hidden);
  const double ffn_matrices = m.ffn == FfnKind::kSwiglu ? 3.0 : 2.0;
  const double linear =
      h * (h + 2.0 * static_cast<double>(m.kv_dim())) + h * h + ffn_matrices * h * static_cast<double>(m.ffn_hidden);
  p.trainable = adapter_params_per_layer(m, t) * layers;
  p.frozen_linear = linear * layers;
  p.frozen_other = total - p.frozen_linear;
  const double targets = t.lora_targets == LoraTargets::kQv          ? 2.0
                         : t.lora_targets == LoraTargets::kAttention ? 4.0
                                                                     : 4.0 + ffn_matrices;
  p.adapter_tensors = 2.0 * targets * layers;
  return p;
}

ModelCounts model_counts(const ModelShape& m, const Training& t) {
  ModelCounts c;
  c.params = count_params(m);
  c.roles = param_roles(m, t);
  c.experts = expert_params(m);
  c.total = c.params.total(m.layers);
  return c;
}

Flop job_flops_per_token(const ModelShape& m, const Training& t) {
  const Flop full = training_flops_per_token(m, static_cast<double>(t.seq_len));
  if (!t.adapters()) {
    return full;
  }
  // Every frozen matmul parameter loses its weight gradient (2 of its 6 FLOPs); the adapters add
  // 6 each.
  return full - Flop(2.0 * matmul_params(m)) + Flop(6.0 * param_roles(m, t).trainable);
}

}  // namespace gpusim::workload
