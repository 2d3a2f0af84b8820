// Readers of model-shape tables (formats in specs/README.md): the transformer keys shared by spec
// files and a scenario's [model], the ResNet and ViT keys, and the checks across them. Apart from
// the other spec readers because a model shape is workload, not hardware or software.
#include "parse/parse.hpp"

namespace gpusim::parse {

void read_model_keys(Reader& r, workload::ModelShape& m, Need need) {
  auto count = [&](std::string_view key, std::int64_t& out, std::int64_t max) {
    if (auto v = r.integer(key, need, 1, max)) {
      out = *v;
    }
  };
  auto flag = [&](std::string_view key, bool& out) {
    if (auto v = r.boolean(key, need)) {
      out = *v;
    }
  };
  count("layers", m.layers, limits::kLayers);
  count("hidden", m.hidden, limits::kWidth);
  count("heads", m.heads, limits::kWidth);
  // kv_heads and ffn_hidden have defaults in scenarios (docs/scenarios.md); spec files must state them.
  if (auto v = r.integer("kv_heads", need, 1, limits::kWidth)) {
    m.kv_heads = *v;
  }
  if (auto v = r.integer("ffn_hidden", need, 1, limits::kWidth)) {
    m.ffn_hidden = *v;
  }
  if (auto v = r.choice("ffn", workload::kFfnNames, need)) {
    m.ffn = *v;
  }
  count("vocab", m.vocab, limits::kWidth);
  flag("tied_embeddings", m.tied_embeddings);
  flag("causal", m.causal);
  if (auto v = r.choice("norm", workload::kNormNames, need)) {
    m.norm = *v;
  }
  flag("bias", m.bias);
  if (auto v = r.choice("position", workload::kPositionNames, need)) {
    m.position = *v;
  }
  count("max_seq", m.max_seq, limits::kSequence);
  // Optional everywhere: LLM pretraining runs without dropout; BERT-style fine-tuning uses 0.1.
  if (auto v = r.number("dropout", Need::kOptional, Range::kNonNegative)) {
    m.dropout = *v;
    if (*v >= 1) {
      r.error("dropout", "a dropout probability is below 1");
    }
  }
  // [moe] and [mla]: optional in both spec files and scenarios (a scenario's table edits the
  // preset's key by key; a model without one is dense / multi-head).
  if (auto t = r.table("moe", Need::kOptional)) {
    const bool had = m.moe.has_value();
    workload::MoeShape& e = m.moe ? *m.moe : m.moe.emplace();
    const Need first = had ? Need::kOptional : Need::kRequired;
    auto moe_count = [&](std::string_view key, std::int64_t& out, Need n, std::int64_t min, std::int64_t max) {
      if (auto v = t->integer(key, n, min, max)) {
        out = *v;
      }
    };
    moe_count("experts", e.experts, first, 1, limits::kWidth);
    moe_count("top_k", e.top_k, first, 1, limits::kWidth);
    moe_count("expert_ffn_hidden", e.expert_ffn_hidden, first, 1, limits::kWidth);
    moe_count("shared_ffn_hidden", e.shared_ffn_hidden, Need::kOptional, 0, limits::kWidth);
    moe_count("dense_layers", e.dense_layers, Need::kOptional, 0, limits::kLayers);
    moe_count("every", e.every, Need::kOptional, 1, limits::kLayers);
    if (auto v = t->number("capacity_factor", Need::kOptional, Range::kNonNegative, limits::kRatio)) {
      e.capacity_factor = *v;
    }
    t->finish();
  }
  if (auto t = r.table("mla", Need::kOptional)) {
    const bool had = m.mla.has_value();
    workload::MlaShape& a = m.mla ? *m.mla : m.mla.emplace();
    const Need first = had ? Need::kOptional : Need::kRequired;
    auto mla_count = [&](std::string_view key, std::int64_t& out, Need n, std::int64_t min) {
      if (auto v = t->integer(key, n, min, limits::kWidth)) {
        out = *v;
      }
    };
    mla_count("q_lora_rank", a.q_lora_rank, Need::kOptional, 0);
    mla_count("kv_lora_rank", a.kv_lora_rank, first, 1);
    mla_count("qk_nope_head_dim", a.qk_nope_head_dim, first, 1);
    mla_count("qk_rope_head_dim", a.qk_rope_head_dim, first, 1);
    mla_count("v_head_dim", a.v_head_dim, first, 1);
    t->finish();
  }
}

void read_resnet_keys(Reader& r, workload::ModelShape& m) {
  m.family = workload::Family::kResNet;
  m.layers = 1;  // lowered as one layer holding every convolution
  workload::ResNet& n = m.resnet;
  auto count = [&](std::string_view key, std::int64_t& out, std::int64_t max) {
    if (auto v = r.integer(key, Need::kRequired, 1, max)) {
      out = *v;
    }
  };
  count("image", n.image, limits::kPixels);
  count("stem_width", n.stem_width, limits::kWidth);
  n.blocks = r.integer_list("blocks", Need::kRequired, 1, limits::kLayers);
  count("width", n.width, limits::kWidth);
  count("expansion", n.expansion, limits::kWidth);
  if (auto v = r.boolean("stride_in_3x3", Need::kRequired)) {
    n.stride_in_3x3 = *v;
  }
  count("classes", n.classes, limits::kWidth);
  // Each stage from the second halves the map: the image must survive the stem, the pool and them.
  const std::int64_t halvings = 2 + static_cast<std::int64_t>(n.blocks.size() > 0 ? n.blocks.size() - 1 : 0);
  if (halvings < 62 && n.image < (std::int64_t{1} << halvings)) {
    r.error("image", "image (" + std::to_string(n.image) + " pixels) is smaller than the network's total stride (" +
                         std::to_string(std::int64_t{1} << halvings) + ")");
  }
  if (n.blocks.size() > 16) {
    r.error("blocks", "at most 16 stages (each doubles the width), got " + std::to_string(n.blocks.size()));
  }
}

void read_vit_keys(Reader& r, workload::ModelShape& m) {
  m.family = workload::Family::kVit;
  if (auto v = r.integer("image", Need::kRequired, 1, limits::kPixels)) {
    m.vit.image = *v;
  }
  if (auto v = r.integer("patch", Need::kRequired, 1, limits::kPixels)) {
    m.vit.patch = *v;
  }
  if (m.vit.image % m.vit.patch != 0) {
    r.error("patch",
            "patch (" + std::to_string(m.vit.patch) + ") must divide image (" + std::to_string(m.vit.image) + ")");
  }
}

void check_vit(Reader& r, const workload::ModelShape& m) {
  const std::int64_t tokens = m.vit.patches() + 1;
  if (m.max_seq != tokens) {
    r.error("max_seq", "max_seq (" + std::to_string(m.max_seq) + ") must be the patches plus the class token, " +
                           std::to_string(tokens));
  }
  if (m.causal) {
    r.error("causal", "a ViT's encoder attends both ways: causal = false");
  }
  if (m.position != workload::PositionKind::kLearned) {
    r.error("position", "a ViT adds learned positions: position = \"learned\"");
  }
}

void check_model(Reader& r, const workload::ModelShape& m) {
  if (m.moe && m.moe->top_k > m.moe->experts) {
    r.error("moe", "top_k (" + std::to_string(m.moe->top_k) + ") exceeds the routed experts (" +
                       std::to_string(m.moe->experts) + ")");
  }
  if (m.moe && m.moe->dense_layers >= m.layers) {
    r.error("moe", "dense_layers (" + std::to_string(m.moe->dense_layers) +
                       ") leaves no mixture-of-experts layer of the " + std::to_string(m.layers));
  }
  if (m.heads > 0 && m.hidden % m.heads != 0) {
    r.error("heads", "heads (" + std::to_string(m.heads) + ") must divide hidden (" + std::to_string(m.hidden) + ")");
  }
  if (m.kv_heads > 0 && m.heads % m.kv_heads != 0) {
    r.error("kv_heads",
            "kv_heads (" + std::to_string(m.kv_heads) + ") must divide heads (" + std::to_string(m.heads) + ")");
  }
}

}  // namespace gpusim::parse
