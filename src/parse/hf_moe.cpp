// The expert and latent-attention fields of mixture-of-experts Hugging Face configs (the mapping is
// documented in docs/scenarios.md under [model] hf_config): Mixtral (MixtralConfig:
// num_local_experts, num_experts_per_tok, every layer MoE with intermediate_size experts
// [hf-mixtral-configs]), Qwen2-MoE (Qwen2MoeConfig: num_experts, moe_intermediate_size,
// shared_expert_intermediate_size, decoder_sparse_step [hf-qwen-moe-config]) and DeepSeek-V2/V3
// (n_routed_experts, n_shared_experts, first_k_dense_replace, moe_layer_freq and the MLA ranks
// [deepseek-v3-config]).
#include "parse/parse.hpp"

namespace gpusim::parse {

void read_hf_moe(const HfFields& in, const std::string& type, HfConfig& out) {
  workload::MoeShape& e = out.shape.moe.emplace();
  auto& f = out.fields;
  auto count = [&](std::string_view key, bool required, std::int64_t min, std::int64_t max, std::int64_t& into) {
    if (auto v = in.count(key, required, min, max)) {
      into = *v;
      return true;
    }
    return false;
  };
  count("num_experts_per_tok", true, 1, limits::kWidth, e.top_k);
  f.push_back({"moe.top_k", "num_experts_per_tok"});
  if (type == "mixtral") {
    count("num_local_experts", true, 1, limits::kWidth, e.experts);
    e.expert_ffn_hidden = out.shape.ffn_hidden;
    f.push_back({"moe.experts", "num_local_experts"});
    f.push_back({"moe.expert_ffn_hidden", "intermediate_size (every layer is MoE)"});
    out.notes.push_back("Mixtral routes every layer's tokens to experts without a capacity limit (dropless)");
  } else if (type == "qwen2_moe") {
    count("num_experts", true, 1, limits::kWidth, e.experts);
    count("moe_intermediate_size", true, 1, limits::kWidth, e.expert_ffn_hidden);
    count("shared_expert_intermediate_size", false, 0, limits::kWidth, e.shared_ffn_hidden);
    count("decoder_sparse_step", false, 1, limits::kLayers, e.every);
    if (in.nonempty_list("mlp_only_layers")) {
      in.error("mlp_only_layers",
               "dense layers at listed positions are not modelled (only the first layers or "
               "every n-th): leave mlp_only_layers empty");
    }
    f.push_back({"moe.experts", "num_experts"});
    f.push_back({"moe.expert_ffn_hidden", "moe_intermediate_size"});
    f.push_back({"moe.shared_ffn_hidden", "shared_expert_intermediate_size"});
    f.push_back({"moe.every", "decoder_sparse_step (absent: 1)"});
    out.notes.push_back(
        "Qwen2-MoE's shared-expert gate (hidden x 1) is not counted; with decoder_sparse_step above 1 the MoE "
        "layers are the step-th ones (gpusim's every counts from the first): the same number of them");
    // The q/k/v-bias note (hf_config.cpp) was worded on the dense FFN: restate it on all the experts.
    const workload::ModelShape& m = out.shape;
    for (std::string& note : out.notes) {
      if (note.rfind("Qwen2's q, k and v", 0) == 0 && m.heads > 0 && m.hidden % m.heads == 0) {
        note = base::strfmt(
            "Qwen2's q, k and v projections carry biases and its other linear layers none; bias = false leaves "
            "out those %.4f %% of the parameters",
            100 * static_cast<double>(m.layers) * static_cast<double>(m.hidden + 2 * m.kv_dim()) /
                workload::total_params(m));
      }
    }
  } else {  // deepseek_v2, deepseek_v3
    count("n_routed_experts", true, 1, limits::kWidth, e.experts);
    count("moe_intermediate_size", true, 1, limits::kWidth, e.expert_ffn_hidden);
    std::int64_t shared = 0;
    if (count("n_shared_experts", false, 0, limits::kWidth, shared)) {
      e.shared_ffn_hidden = shared * e.expert_ffn_hidden;
    }
    count("first_k_dense_replace", false, 0, limits::kLayers, e.dense_layers);
    count("moe_layer_freq", false, 1, limits::kLayers, e.every);
    f.push_back({"moe.experts", "n_routed_experts"});
    f.push_back({"moe.expert_ffn_hidden", "moe_intermediate_size"});
    f.push_back({"moe.shared_ffn_hidden", "n_shared_experts x moe_intermediate_size"});
    f.push_back({"moe.dense_layers", "first_k_dense_replace (absent: 0)"});
    f.push_back({"moe.every", "moe_layer_freq (absent: 1)"});
    workload::MlaShape& a = out.shape.mla.emplace();
    count("q_lora_rank", false, 1, limits::kWidth, a.q_lora_rank);  // null: Q projected directly
    count("kv_lora_rank", true, 1, limits::kWidth, a.kv_lora_rank);
    count("qk_nope_head_dim", true, 1, limits::kWidth, a.qk_nope_head_dim);
    count("qk_rope_head_dim", true, 1, limits::kWidth, a.qk_rope_head_dim);
    count("v_head_dim", true, 1, limits::kWidth, a.v_head_dim);
    for (const char* k : {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
      f.push_back({std::string("mla.") + k, k});
    }
    std::int64_t mtp = 0;
    if (count("num_nextn_predict_layers", false, 0, limits::kLayers, mtp) && mtp > 0) {
      out.notes.push_back("num_nextn_predict_layers = " + std::to_string(mtp) +
                          ": the multi-token-prediction modules are not part of the shape");
    }
  }
  if (e.top_k > e.experts && e.experts > 0) {
    in.error("num_experts_per_tok", "num_experts_per_tok (" + std::to_string(e.top_k) + ") exceeds the experts (" +
                                        std::to_string(e.experts) + ")");
  }
}

}  // namespace gpusim::parse
