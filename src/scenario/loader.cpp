// Scenario loading: TOML + overrides -> a validated Scenario with every default resolved (the
// format and its defaults are documented in docs/scenarios.md; schema.cpp lists the keys).
#include <filesystem>
#include <mutex>
#include <sstream>

#include "scenario/internal.hpp"

namespace gpusim::scenario {

// The parsed file. toml++ drops source positions when it copies a node, so each resolve applies
// its overrides to this one tree, reads it, and puts the tree back as it was (under the lock).
struct ParsedScenario::Tree {
  toml::table root;
  std::mutex mutex;
};

namespace detail {

std::optional<int> count(parse::Reader& r, std::string_view key, parse::Need need, std::int64_t min, std::int64_t max) {
  static_assert(limits::kDevices <= INT32_MAX && limits::kBatch <= INT32_MAX && limits::kWorkers <= INT32_MAX,
                "counts held in `int`");
  const auto v = r.integer(key, need, min, max);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

}  // namespace detail

namespace {

using base::strfmt;
using detail::count;
using detail::RuntimeOverrides;
using hardware::FormFactor;
using hardware::GpuSpec;
using hardware::LinkKind;
using hardware::LinkSpec;
using hardware::System;
using parse::Need;
using parse::Range;
using parse::Reader;
using units::Dim;
using workload::FfnKind;
using workload::NormKind;

// What an override replaced, to put back: a table it created, or the node it replaced (moved,
// so its position survives), or nothing when the key was new.
struct Undo {
  toml::table* table = nullptr;
  std::string key;
  toml::table saved;  // holds the replaced node under "v"
  bool had_value = false;
};

void apply_override(toml::table& root, const Override& o, Diagnostics& diags, std::vector<Undo>& undo) {
  const std::string where = "--set " + o.key + "=" + o.value;
  std::vector<std::string> parts;
  std::stringstream ss(o.key);
  for (std::string p; std::getline(ss, p, '.');) {
    parts.push_back(p);
  }
  const bool empty_part =
      o.key.empty() || o.key.front() == '.' || o.key.back() == '.' || o.key.find("..") != std::string::npos;
  if (parts.empty() || empty_part) {
    diags.add(SourcePos{where}, o.key, "expected KEY=VALUE with a dotted key such as training.micro_batch");
    return;
  }
  toml::table* t = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    toml::node* n = t->get(parts[i]);
    if (n == nullptr) {
      t->insert(parts[i], toml::table{});
      undo.push_back(Undo{t, parts[i], {}, false});
      n = t->get(parts[i]);
    }
    if (!n->is_table()) {
      diags.add(SourcePos{where}, o.key, "\"" + parts[i] + "\" is not a table");
      return;
    }
    t = n->as_table();
  }
  toml::table parsed;
  Diagnostics not_toml;  // through parse_toml, so an override is bounded as a file is
  if (auto value = parse::parse_toml("value = " + o.value, where, not_toml)) {
    parsed = std::move(*value);
  } else {  // a bare word: take it as a string, parsed so that its messages name the --set
    std::string quoted = "value = \"";
    for (const char c : o.value) {
      if (c == '"' || c == '\\') {
        quoted += '\\';
      }
      quoted += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
    try {
      parsed = toml::parse(quoted + "\"", where);
    } catch (const toml::parse_error&) {  // not UTF-8: the string as it is, without a position
      parsed.insert_or_assign("value", o.value);
    }
  }
  // A whole table is never replaced: the undo list holds pointers to tables, which must outlive it.
  if (const toml::node* existing = t->get(parts.back()); existing != nullptr && existing->is_table()) {
    diags.add(SourcePos{where}, o.key, "\"" + o.key + "\" is a table: --set takes a key inside it");
    return;
  }
  Undo u{t, parts.back(), {}, false};
  if (toml::node* old = t->get(parts.back())) {
    old->visit([&u](auto&& x) { u.saved.insert_or_assign("v", std::move(x)); });
    u.had_value = true;
  }
  undo.push_back(std::move(u));
  parsed.get("value")->visit([&](auto&& x) { t->insert_or_assign(parts.back(), std::move(x)); });
}

// Puts the tree back as the file had it, last change first.
void revert(std::vector<Undo>& undo) {
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
    if (it->had_value) {
      it->saved.get("v")->visit([&](auto&& x) { it->table->insert_or_assign(it->key, std::move(x)); });
    } else {
      it->table->erase(it->key);
    }
  }
  undo.clear();
}

void read_system(Reader& r, const catalog::Catalog& cat, System& s) {
  if (auto id = r.string("gpu", Need::kRequired)) {
    if (!cat.has(catalog::SpecKind::kGpu, *id)) {
      r.error("gpu", "unknown GPU id \"" + *id + "\" (known: " + cat.known_ids(catalog::SpecKind::kGpu) + ")");
    } else {
      try {
        s.gpu = cat.gpu(*id);
      } catch (const InputError& e) {
        r.diagnostics().append(e.diagnostics());
      }
    }
  }
  if (auto v = count(r, "gpus", Need::kRequired, 1, limits::kDevices)) {
    s.gpus = *v;
  }
  const bool sxm = s.gpu.form_factor == FormFactor::kSxm;
  // A node is the GPUs one peer-link domain joins: the spec's domain (a GB200 NVL72 rack: 72), else
  // an 8-GPU baseboard for server modules and one card for PCIe boards.
  const int node_default = s.gpu.peer_domain > 0 ? s.gpu.peer_domain : (sxm ? 8 : 1);
  s.gpus_per_node = count(r, "gpus_per_node", Need::kOptional, 1, limits::kDevices).value_or(node_default);
  if (s.gpus < s.gpus_per_node) {
    s.gpus_per_node = s.gpus;
  } else if (s.gpus % s.gpus_per_node != 0) {
    r.error("gpus", "gpus (" + std::to_string(s.gpus) + ") must be a multiple of gpus_per_node (" +
                        std::to_string(s.gpus_per_node) + ")");
  }
  s.nics_per_node = count(r, "nics_per_node", Need::kOptional, 1, limits::kDevices).value_or(sxm ? s.gpus_per_node : 1);
  s.oversubscription = r.number("oversubscription", Need::kOptional, Range::kPositive).value_or(1.0);
  if (s.oversubscription < 1.0) {
    r.error("oversubscription", "a fabric's oversubscription is at least 1 (1 = non-blocking)");
  }

  auto load_link = [&](std::string_view key, const std::string& fallback, LinkSpec& out) {
    const std::string id = r.string(key, Need::kOptional).value_or(fallback);
    if (!cat.has(catalog::SpecKind::kLink, id)) {
      r.error(key, "unknown link id \"" + id + "\" (known: " + cat.known_ids(catalog::SpecKind::kLink) + ")");
      return;
    }
    try {
      out = cat.link(id);
    } catch (const InputError& e) {
      r.diagnostics().append(e.diagnostics());
    }
  };
  if (s.gpu.id.empty()) {  // the GPU was bad: link defaults would only add noise
    r.allow({"intra_node", "inter_node", "power_limit", "pcie_lanes", "collectives", "host"});
    r.finish();
    return;
  }
  const std::string pcie = "pcie" + std::to_string(s.gpu.pcie_gen);
  if (cat.has(catalog::SpecKind::kLink, pcie)) {
    s.pcie = cat.link(pcie);
  } else {
    r.error("gpu", "no link spec \"" + pcie + "\" for the GPU's host link");
  }
  // Link specs are x16; a board that wires the slot with fewer lanes (x8/x8 when two GPUs share
  // the CPU's lanes) scales the bandwidth with the lane count (as NCCL computes a PCIe link: width x speed
  // [nccl-source]).
  const int lanes = count(r, "pcie_lanes", Need::kOptional, 1, 16).value_or(s.gpu.pcie_lanes);
  if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16) {
    r.error("pcie_lanes", strfmt("a PCIe link has 1, 2, 4, 8 or 16 lanes, got %d", lanes));
  } else if (lanes != 16) {
    s.pcie.bandwidth = s.pcie.bandwidth * (lanes / 16.0);
    s.pcie.name = strfmt("%s (x%d)", s.pcie.name.substr(0, s.pcie.name.rfind(" x16")).c_str(), lanes);
  }
  if (s.gpu.has_nvlink()) {
    load_link("intra_node", s.gpu.peer_link, s.intra_node);
  } else if (r.has("intra_node")) {
    load_link("intra_node", pcie, s.intra_node);
  } else {
    s.intra_node = s.pcie;  // GPUs without NVLink talk over their own host links
  }
  // Each vendor's GPUs run its own collective library: RCCL on AMD Instinct, NCCL elsewhere.
  const std::string comm =
      r.string("collectives", Need::kOptional).value_or(hardware::is_amd(s.gpu.arch) ? "rccl" : "nccl");
  if (!cat.has(catalog::SpecKind::kComm, comm)) {
    r.error("collectives",
            "unknown collective library \"" + comm + "\" (known: " + cat.known_ids(catalog::SpecKind::kComm) + ")");
  } else {
    try {
      s.comm = cat.comm(comm);
    } catch (const InputError& e) {
      r.diagnostics().append(e.diagnostics());
    }
  }
  const std::string host = r.string("host", Need::kOptional).value_or(s.gpu.host);
  if (!cat.has(catalog::SpecKind::kHost, host)) {
    r.error(r.has("host") ? "host" : "gpu",
            "unknown host \"" + host + "\" (known: " + cat.known_ids(catalog::SpecKind::kHost) + ")");
  } else {
    try {
      s.host = cat.host(host);
    } catch (const InputError& e) {
      r.diagnostics().append(e.diagnostics());
    }
  }
  // A server's NIC generation follows its GPUs': 400 Gb/s beside Hopper and Blackwell, 200 Gb/s
  // beside A100; MI300X servers are taken as Hopper's and MI250X as A100's (assumption).
  const bool ndr_era = s.gpu.arch == hardware::Arch::kHopper || s.gpu.arch == hardware::Arch::kBlackwell ||
                       s.gpu.arch == hardware::Arch::kCdna3;
  const bool hdr_era = s.gpu.arch == hardware::Arch::kAmpere || s.gpu.arch == hardware::Arch::kCdna2;
  const std::string inter = sxm && ndr_era ? "ib-ndr" : (sxm && hdr_era ? "ib-hdr" : "eth-25g");
  load_link("inter_node", inter, s.inter_node);
  s.power_limit = s.gpu.tdp;
  if (auto v = r.quantity("power_limit", Dim::kPower, Need::kOptional)) {
    if (*v > s.gpu.tdp.value()) {
      r.error("power_limit", strfmt("power_limit above the TDP (%.0f W) is not modelled", s.gpu.tdp.value()));
    } else if (*v <= s.gpu.busy_floor.value()) {
      r.error("power_limit", strfmt("power_limit must be above the GPU's busy floor (%.0f W: its power while a job "
                                    "runs with the SMs idle)",
                                    s.gpu.busy_floor.value()));
    } else {
      s.power_limit = Watts(*v);
    }
  }
  r.finish();
}

// [model] hf_config names a file relative to the scenario file's directory (as a measurement
// row's `scenario` does), or to the working directory when it comes from --set.
std::string hf_config_path(const Reader& r, const std::string& value) {
  namespace fs = std::filesystem;
  const fs::path p(value);
  const std::string from = r.where("hf_config").file;
  if (p.is_absolute() || from.rfind("--set ", 0) == 0) {
    return value;
  }
  return (fs::path(from).parent_path() / p).lexically_normal().string();
}

void read_model(Reader& r, const catalog::Catalog& cat, workload::ModelShape& m) {
  const auto preset = r.string("preset", Need::kOptional);
  const auto params = r.number("params", Need::kOptional, Range::kPositive, limits::kParams);
  const auto hf_config = r.string("hf_config", Need::kOptional);
  if (preset && params) {
    r.error("params", "give either preset or params, not both");
  }
  if (r.has("hf_config") && (r.has("preset") || r.has("params"))) {
    r.error("hf_config", "give one of preset, params or hf_config, not several");
  }
  bool have_base = false;
  if (preset) {
    if (!cat.has(catalog::SpecKind::kModel, *preset)) {
      r.error("preset",
              "unknown model preset \"" + *preset + "\" (known: " + cat.known_ids(catalog::SpecKind::kModel) + ")");
    } else {
      m = cat.model(*preset);
      have_base = true;
    }
  } else if (params) {
    const auto vocab = r.integer("vocab", Need::kOptional, 1, limits::kWidth).value_or(32000);
    if (auto shape = workload::shape_from_params(*params, vocab)) {
      m = *shape;
    } else {
      r.error("params", "no standard shape (head_dim 128, hidden ~ 128 x layers) has " + strfmt("%g", *params) +
                            " parameters within 10 %; give layers, hidden, heads and ffn instead");
    }
    have_base = true;
  } else if (r.has("params")) {
    have_base = true;  // a bad params value was reported already; missing shape keys would only add noise
  } else if (hf_config) {
    have_base = true;
    const std::string file = hf_config_path(r, *hf_config);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
      r.error("hf_config", "no file \"" + *hf_config + "\" (looked for " + file + ")");
    } else {
      try {
        m = parse::read_hf_config(parse::read_file(file, "Hugging Face config.json"), file).shape;
      } catch (const InputError& e) {
        r.diagnostics().append(e.diagnostics());
      }
    }
  } else if (r.has("hf_config")) {
    have_base = true;  // a bad hf_config value was reported already
  }
  if (auto v = r.string("name", Need::kOptional)) {
    m.name = *v;
  }
  if (m.images()) {
    // An image model's shape comes whole from its preset (specs/models); shape keys do not apply.
    for (const char* key : {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "ffn", "vocab", "tied_embeddings",
                            "causal", "norm", "bias", "position", "max_seq", "dropout"}) {
      if (r.has(key)) {
        r.error(key, "preset \"" + preset.value_or("") + "\" is an image model (" +
                         base::name_in(workload::kFamilyNames, m.family) + "): its shape comes whole from the preset");
      }
    }
    r.finish();
    return;
  }
  if (!have_base) {
    m.kv_heads = 0;
    m.ffn_hidden = 0;
    for (const char* key : {"layers", "hidden", "heads", "vocab", "ffn"}) {
      if (!r.has(key)) {
        r.error(key, "missing required key (or give preset = \"...\", params = ... or hf_config = \"...\")");
      }
    }
  }
  const bool had_ffn_hidden = r.has("ffn_hidden");
  const bool had_norm = r.has("norm");
  parse::read_model_keys(r, m, Need::kOptional);
  if (!have_base) {
    if (m.kv_heads == 0) {
      m.kv_heads = m.heads;
    }
    if (!had_norm) {
      m.norm = m.ffn == FfnKind::kGelu ? NormKind::kLayerNorm : NormKind::kRmsNorm;
    }
    if (m.name.empty()) {
      m.name = "custom transformer";
    }
  }
  if (!had_ffn_hidden && (!have_base || r.has("hidden") || r.has("ffn"))) {
    // 4h for gelu (GPT-2); 8/3 h rounded up to a multiple of 256 for swiglu (Llama [touvron-2023]).
    m.ffn_hidden = m.ffn == FfnKind::kGelu ? 4 * m.hidden : ((8 * m.hidden / 3 + 255) / 256) * 256;
  }
  parse::check_model(r, m);
  r.finish();
}

// The software stack a job runs on when the scenario names none (docs/scenarios.md): Megatron-LM
// with Transformer Engine for tensor- or pipeline-parallel layouts, PyTorch FSDP for ZeRO-3,
// PyTorch DDP otherwise; Hugging Face transformers for inference (plain PyTorch eager for an image
// model).
std::string default_runtime(const Scenario& sc) {
  if (!sc.job.training) {
    return sc.job.model.images() ? "pytorch-eager" : "hf-transformers";
  }
  if (sc.layout.tensor > 1 || sc.layout.pipeline > 1) {
    return "megatron-te";
  }
  return sc.layout.zero >= 3 ? "pytorch-fsdp" : "pytorch-ddp";
}

void read_runtime(Reader* r, Diagnostics& diags, const catalog::Catalog& cat, Scenario& sc, const RuntimeOverrides& o) {
  const std::string fallback = default_runtime(sc);
  const std::string id = r == nullptr ? fallback : r->string("name", Need::kOptional).value_or(fallback);
  sc.unset.runtime = r == nullptr || !r->has("name");
  auto error = [&](std::string_view key, const std::string& message) {
    if (r != nullptr) {
      r->error(key, message);
    } else {
      diags.add(SourcePos{sc.origin}, "runtime." + std::string(key), message);
    }
  };
  if (!cat.has(catalog::SpecKind::kRuntime, id)) {
    error("name", "unknown runtime \"" + id + "\" (known: " + cat.known_ids(catalog::SpecKind::kRuntime) + ")");
    return;
  }
  try {
    sc.runtime = cat.runtime(id);
  } catch (const InputError& e) {
    diags.append(e.diagnostics());
    return;
  }
  const workload::RuntimeKind want =
      sc.job.training ? workload::RuntimeKind::kTraining : workload::RuntimeKind::kInference;
  if (sc.runtime.kind != want) {
    error("name", "runtime \"" + id + "\" runs " + base::name_in(workload::kRuntimeKindNames, sc.runtime.kind) +
                      " jobs, but the scenario has [" + base::name_in(workload::kRuntimeKindNames, want) + "]");
  }
  // The scenario's own settings win over the runtime's defaults: [runtime] keys, then the
  // switches of [training] and [inference].
  if (r != nullptr) {
    parse::read_runtime_settings(*r, sc.runtime, Need::kOptional);
  }
  if (o.flash_attention) {
    if (!*o.flash_attention) {
      sc.runtime.attention = workload::AttentionKernel::kUnfused;
    } else if (sc.runtime.attention == workload::AttentionKernel::kUnfused) {
      sc.runtime.attention = workload::AttentionKernel::kFlash2;
    }
  }
  if (o.cuda_graphs) {
    sc.runtime.cuda_graphs = *o.cuda_graphs;
  }
  if (r != nullptr) {
    r->finish();
  }
}

// The constraints of a parallel layout, each with its failing numbers.
void check_layout(Reader& r, const workload::ModelShape& m, const workload::Layout& p) {
  auto n = [](auto v) { return std::to_string(v); };
  if (m.images()) {
    for (const auto& [key, value] : {std::pair{"tensor", p.tensor}, std::pair{"pipeline", p.pipeline}}) {
      if (value > 1) {
        r.error(key, std::string(key) + " = " + n(value) +
                         ": an image model runs data-parallel only (tensor = pipeline = 1)");
      }
    }
    return;
  }
  if (p.tensor > 1 && m.heads % p.tensor != 0) {
    r.error("tensor", "tensor (" + n(p.tensor) + ") must divide the attention heads (" + n(m.heads) + ")");
  }
  // KV heads split over the tensor ranks, or replicated when there are fewer of them than ranks
  // (vLLM and TensorRT-LLM): either way one count must divide the other.
  if (p.tensor > 1 && m.heads % p.tensor == 0 && m.kv_heads > 0 && m.kv_heads % p.tensor != 0 &&
      p.tensor % m.kv_heads != 0) {
    r.error("tensor", "tensor (" + n(p.tensor) + ") must divide the KV heads (" + n(m.kv_heads) +
                          ") or be a multiple of them (KV heads are then replicated)");
  }
  if (p.tensor > 1 && m.ffn_hidden % p.tensor != 0) {
    r.error("tensor", "tensor (" + n(p.tensor) + ") must divide ffn_hidden (" + n(m.ffn_hidden) + ")");
  }
  const std::int64_t stages = static_cast<std::int64_t>(p.pipeline) * p.virtual_stages;
  if (stages > m.layers) {
    r.error("pipeline", "pipeline x virtual_stages = " + n(stages) + " exceeds the layers (" + n(m.layers) + ")");
  } else if (!p.uneven_stages && m.layers % stages != 0) {
    r.error("pipeline", "pipeline x virtual_stages = " + n(p.pipeline) + " x " + n(p.virtual_stages) + " = " +
                            n(stages) + " must divide the layers (" + n(m.layers) + "), or set uneven_stages = true");
  }
  if (p.sequence && p.tensor == 1) {
    r.error("sequence", "sequence parallelism splits along the tensor-parallel ranks: it needs tensor > 1");
  }
  if (p.virtual_stages > 1 && p.pipeline == 1) {
    r.error("virtual_stages", "virtual stages interleave pipeline stages: they need pipeline > 1");
  }
  if (p.expert > 1) {
    if (!m.moe) {
      r.error("expert", "expert parallelism (" + n(p.expert) + ") needs a mixture-of-experts model ([model.moe])");
    } else if (m.moe->experts % p.expert != 0) {
      r.error("expert", "expert (" + n(p.expert) + ") must divide the routed experts (" + n(m.moe->experts) + ")");
    } else if (p.data % p.expert != 0) {
      r.error("expert", "expert (" + n(p.expert) + ") must divide data (" + n(p.data) +
                            "): expert-parallel ranks are data-parallel ranks holding different experts");
    }
  }
}

// Context parallelism splits each training sequence into 2·c chunks (two per rank, one from each
// end, as Megatron balances causal work [megatron-context-parallel]) of a dense transformer.
void check_context(Reader& r, const Scenario& sc, const workload::Layout& p) {
  if (p.context == 1) {
    return;
  }
  const auto n = [](auto v) { return std::to_string(v); };
  if (!sc.job.training) {
    r.error("context",
            "context parallelism splits training sequences; a serving scenario splits with tensor and "
            "pipeline");
  } else if (sc.job.training->seq_len % (2 * p.context) != 0) {
    r.error("context", "2 x context = " + n(2 * p.context) + " must divide seq_len (" + n(sc.job.training->seq_len) +
                           "): each rank takes two chunks of every sequence");
  }
  if (sc.job.model.moe || sc.job.model.images()) {
    r.error("context", "context parallelism is modelled for dense transformers");
  }
}

void read_parallel(Reader* r, Scenario& sc) {
  workload::Layout& p = sc.layout;
  const int gpus = sc.system.gpus;
  if (r == nullptr) {
    p.data = gpus;
    return;
  }
  p.tensor = count(*r, "tensor", Need::kOptional, 1, limits::kDevices).value_or(1);
  p.pipeline = count(*r, "pipeline", Need::kOptional, 1, limits::kDevices).value_or(1);
  p.zero = count(*r, "zero", Need::kOptional, 0, 3).value_or(0);
  p.sequence = r->boolean("sequence", Need::kOptional).value_or(false);
  p.virtual_stages = count(*r, "virtual_stages", Need::kOptional, 1, limits::kLayers).value_or(1);
  p.uneven_stages = r->boolean("uneven_stages", Need::kOptional).value_or(false);
  p.expert = count(*r, "expert", Need::kOptional, 1, limits::kDevices).value_or(1);
  p.expert_imbalance = r->number("expert_imbalance", Need::kOptional, Range::kPositive).value_or(1.0);
  if (p.expert_imbalance < 1.0) {
    r->error("expert_imbalance",
             "the busiest rank's tokens over the mean are at least 1 (got " + std::to_string(p.expert_imbalance) + ")");
  }
  p.context = count(*r, "context", Need::kOptional, 1, limits::kDevices).value_or(1);
  const std::int64_t model_parallel = static_cast<std::int64_t>(p.tensor) * p.pipeline * p.context;
  p.data = count(*r, "data", Need::kOptional, 1, limits::kDevices)
               .value_or(static_cast<int>(gpus / std::max<std::int64_t>(1, model_parallel)));
  check_layout(*r, sc.job.model, p);
  check_context(*r, sc, p);
  const std::int64_t product = model_parallel * p.data;
  if (product != gpus) {
    const std::string context = p.context > 1 ? " x context" : "";
    const std::string context_n = p.context > 1 ? " x " + std::to_string(p.context) : "";
    r->error("data", "tensor x pipeline" + context + " x data = " + std::to_string(p.tensor) + " x " +
                         std::to_string(p.pipeline) + context_n + " x " + std::to_string(p.data) + " = " +
                         std::to_string(product) + ", but system.gpus = " + std::to_string(gpus));
  }
  r->finish();
}

void read_input(Reader& r, Scenario& sc) {
  workload::InputPipeline in;
  if (auto v = r.quantity("sample_bytes", Dim::kBytes, Need::kRequired)) {
    in.sample_bytes = Bytes(*v);
  }
  if (auto v = r.quantity("cpu_time_per_sample", Dim::kTime, Need::kRequired)) {
    in.cpu_time_per_sample = Seconds(*v);
  }
  in.workers = count(r, "workers", Need::kOptional, 1, limits::kWorkers).value_or(1);
  // A local NVMe SSD (assumption: PCIe 4 NVMe drives read ~3-7 GB/s; the low end is taken).
  constexpr double kDefaultStorageBytesPerSecond = 3e9;
  in.storage_bandwidth = BytesPerSecond(
      r.quantity("storage_bandwidth", Dim::kBandwidth, Need::kOptional).value_or(kDefaultStorageBytesPerSecond));
  in.pinned_memory = r.boolean("pinned_memory", Need::kOptional).value_or(true);
  r.finish();
  sc.job.input = in;
}

// `gpu_changed`: --gpu or --set replaced the file's GPU, so prices the file states for its own
// hardware (purchase, and a cloud rate for the same GPU) no longer apply: the new GPU's catalog
// prices are used instead.
void read_cost(Reader* r, const catalog::Catalog& cat, Scenario& sc, bool gpu_changed) {
  cost::CostConfig& c = sc.cost;
  const System& s = sc.system;
  auto q = [r](std::string_view key, Dim dim, double fallback, Range range = Range::kPositive) {
    return r == nullptr ? fallback : r->quantity(key, dim, Need::kOptional, range).value_or(fallback);
  };
  auto num = [r](std::string_view key, double fallback, Range range) {
    return r == nullptr ? fallback : r->number(key, Need::kOptional, range).value_or(fallback);
  };
  c.electricity = UsdPerJoule(q("electricity", Dim::kMoneyPerEnergy,
                                units::usd_per_kwh(cost::kElectricityUsdPerKwh).value(), Range::kNonNegative));
  c.utilization = num("utilization", cost::kUtilization, Range::kFraction);
  c.cloud_gpu = r == nullptr ? s.gpu.id : r->string("cloud_gpu", Need::kOptional).value_or(s.gpu.id);
  double cloud_default = s.gpu.cloud_rate.value();
  if (c.cloud_gpu != s.gpu.id && !s.gpu.id.empty()) {
    if (!cat.has(catalog::SpecKind::kGpu, c.cloud_gpu)) {
      r->error("cloud_gpu",
               "unknown GPU id \"" + c.cloud_gpu + "\" (known: " + cat.known_ids(catalog::SpecKind::kGpu) + ")");
    } else {
      // Equal work on the rented GPU: the same GPU count and node shape, at its TDP.
      System cloud = make_system(cat, c.cloud_gpu, s.gpus, s.gpus_per_node);
      cloud_default = cloud.gpu.cloud_rate.value();
      const auto& t = sc.job.training;
      if (t && !cloud.gpu.supports(t->precision)) {
        r->error("cloud_gpu", "the cloud GPU " + cloud.gpu.name + " has no " + units::to_string(t->precision) +
                                  " support for this job");
      }
      sc.cloud_system = std::move(cloud);
    }
  }
  const bool same_gpu_cloud = c.cloud_gpu == s.gpu.id;
  c.cloud_rate = UsdPerSecond(q("cloud_rate", Dim::kMoneyPerTime, cloud_default));
  if (gpu_changed && same_gpu_cloud) {
    c.cloud_rate = UsdPerSecond(cloud_default);
  }
  const bool server = s.gpu.form_factor == FormFactor::kSxm;
  const double gpu_total = s.gpu.purchase.value() * s.gpus;
  const double host_total =
      server ? gpu_total * cost::kServerHostFraction : cost::kDesktopHostUsd * static_cast<double>(s.nodes());
  c.purchase = Usd(q("purchase", Dim::kMoney, gpu_total + host_total));
  if (gpu_changed) {
    c.purchase = Usd(gpu_total + host_total);
  }
  const bool hopper_or_later = s.gpu.arch == hardware::Arch::kHopper || s.gpu.arch == hardware::Arch::kBlackwell;
  const double host_default = server ? (hopper_or_later ? cost::kHopperServerHostWatts : cost::kServerHostWatts)
                              : s.gpus_per_node > 2 ? cost::kWorkstationHostWatts
                                                    : cost::kDesktopHostWatts;
  c.host_power = Watts(q("host_power", Dim::kPower, host_default, Range::kNonNegative));
  c.pue = num("pue", cost::kPue, Range::kPositive);
  if (c.pue < 1.0 && r != nullptr) {
    r->error("pue", "power usage effectiveness is at least 1");
  }
  c.lifetime = Seconds(q("lifetime", Dim::kTime, cost::kLifetimeYears * units::kSecondsPerYear));
  c.carbon_intensity = units::KgPerJoule(q("carbon_intensity", Dim::kMassPerEnergy,
                                           units::kg_per_kwh(cost::kCarbonKgPerKwh).value(), Range::kNonNegative));
  if (r != nullptr) {
    r->finish();
  }
}

// The table an unknown key belongs to, when it is a key of another table of the schema.
std::string elsewhere(std::string_view table, std::string_view key) {
  for (const TableKeys& t : schema()) {
    if (t.table == table) {
      continue;
    }
    for (const auto k : t.keys) {
      if (k == key) {
        return t.table.empty() ? std::string("the top level") : "[" + std::string(t.table) + "]";
      }
    }
  }
  return {};
}

// Reads `root` with the overrides applied; `root` is as it was when this returns or throws.
Scenario resolve_tree(const catalog::Catalog& catalog, const std::string& path, toml::table& root,
                      const std::vector<Override>& overrides, const std::string& gpu_override) {
  std::vector<Undo> undo;
  struct Reverter {
    std::vector<Undo>& undo;
    ~Reverter() { revert(undo); }
  } reverter{undo};
  Diagnostics diags;
  const std::string file_gpu = root["system"]["gpu"].value_or(std::string());
  for (const auto& o : overrides) {
    apply_override(root, o, diags, undo);
  }
  if (!gpu_override.empty()) {
    apply_override(root, Override{"system.gpu", "\"" + gpu_override + "\""}, diags, undo);
  }
  diags.throw_if_any();

  Scenario sc;
  sc.origin = path;
  Reader r(root, "", diags);
  r.set_elsewhere(elsewhere);
  sc.name = r.string("name", Need::kRequired).value_or("");
  if (auto s = r.table("system", Need::kRequired)) {
    read_system(*s, catalog, sc.system);
  }
  if (auto m = r.table("model", Need::kRequired)) {
    read_model(*m, catalog, sc.job.model);
  }
  const bool has_training = r.has("training");
  const bool has_inference = r.has("inference");
  if (has_training == has_inference) {
    r.error(has_training ? "inference" : "training", "a scenario needs exactly one of [training] or [inference]");
  }
  RuntimeOverrides runtime_overrides;
  if (auto t = r.table("training", Need::kOptional)) {
    detail::read_training(*t, sc, runtime_overrides);
  }
  if (auto t = r.table("inference", Need::kOptional)) {
    read_inference(*t, sc, runtime_overrides);
  }
  {
    auto p = r.table("parallelism", Need::kOptional);
    read_parallel(p ? &*p : nullptr, sc);
  }
  if (has_training != has_inference) {
    auto rt = r.table("runtime", Need::kOptional);
    read_runtime(rt ? &*rt : nullptr, diags, catalog, sc, runtime_overrides);
    detail::apply_recipe(sc, runtime_overrides.training);
  } else {
    r.allow({"runtime"});
  }
  if (sc.job.inference && diags.empty()) {
    auto sv = r.table("serving", Need::kOptional);
    detail::read_serving(sv ? &*sv : nullptr, sc);
  } else if (has_training && r.has("serving")) {
    r.error("serving", "[serving] describes the load on an inference deployment; this scenario trains");
  } else {
    r.allow({"serving"});
  }
  if (sc.job.inference) {
    if (auto t = r.table("slo", Need::kOptional)) {
      detail::read_slo(*t, sc);
    }
  } else if (r.has("slo")) {
    r.error("slo", "[slo] sets latency limits on a serving scenario; this scenario trains");
    r.allow({"slo"});
  }
  // FlashAttention-2 kernels cover head dimensions up to 256 [dao-2023]; the model has no
  // efficiency for larger ones.
  constexpr std::int64_t kMaxFlashHeadDim = 256;
  const workload::ModelShape& m = sc.job.model;
  if (sc.job.training && sc.runtime.flash_attention() && m.heads > 0 && m.head_dim() > kMaxFlashHeadDim) {
    diags.add(runtime_overrides.where_flash, "training.flash_attention",
              "head dimension " + std::to_string(m.head_dim()) +
                  " (hidden / heads) is above the 256 that flash attention covers; set flash_attention = false");
  }
  if (sc.layout.context > 1 && !sc.runtime.flash_attention()) {
    // Ring attention is a flash-attention kernel over the chunks as they arrive.
    r.table("parallelism", Need::kRequired)
        ->error("context",
                "context parallelism runs ring attention over flash-attention kernels; this runtime's attention is "
                "unfused");
  }

  if (sc.job.training && diags.empty()) {
    const workload::Training& t = *sc.job.training;
    if (t.offload_params != workload::Offload::kNone && sc.layout.zero < 3) {
      r.table("training", Need::kRequired)
          ->error("offload_params",
                  "parameter offload (ZeRO-Infinity) partitions the parameters: it needs "
                  "[parallelism] zero = 3, got " +
                      std::to_string(sc.layout.zero));
    }
    const std::int64_t per_step = sc.layout.micro_batch * sc.layout.data;
    if (per_step > 0 && t.global_batch % per_step != 0) {
      r.table("training", Need::kRequired)
          ->error("global_batch",
                  "global_batch (" + std::to_string(t.global_batch) +
                      ") must be a multiple of micro_batch x data = " + std::to_string(sc.layout.micro_batch) + " x " +
                      std::to_string(sc.layout.data) + " = " + std::to_string(per_step));
    } else {
      auto tr = r.table("training", Need::kRequired);
      detail::check_training(*tr, sc, runtime_overrides.training);
    }
  }
  if (auto in = r.table("input", Need::kOptional)) {
    read_input(*in, sc);
  }
  {
    auto c = r.table("cost", Need::kOptional);
    read_cost(c ? &*c : nullptr, catalog, sc, !file_gpu.empty() && file_gpu != sc.system.gpu.id);
  }
  r.finish();
  // The model's held-out error, which the band adds to the assumption ranges (a bad file is bad input).
  try {
    sc.model_error = catalog.model_error();
  } catch (const InputError& e) {
    diags.append(e.diagnostics());
  }
  diags.throw_if_any();
  return sc;
}

}  // namespace

ParsedScenario::ParsedScenario(std::string path, std::string text) : path_(std::move(path)) {
  Diagnostics diags;
  auto parsed = parse::parse_toml(text, path_, diags);
  diags.throw_if_any();
  auto tree = std::make_shared<Tree>();
  tree->root = std::move(*parsed);
  tree_ = std::move(tree);
}

Scenario resolve(const catalog::Catalog& catalog, const ParsedScenario& parsed, const std::vector<Override>& overrides,
                 const std::string& gpu_override) {
  ParsedScenario::Tree& tree = *parsed.tree_;
  const std::lock_guard lock(tree.mutex);
  return resolve_tree(catalog, parsed.path(), tree.root, overrides, gpu_override);
}

Scenario load_scenario(const catalog::Catalog& catalog, const std::string& path, const std::string& text,
                       const std::vector<Override>& overrides, const std::string& gpu_override) {
  return resolve(catalog, ParsedScenario(path, text), overrides, gpu_override);
}

ParsedScenario parse_scenario_file(const std::string& path) {
  return ParsedScenario(path, parse::read_file(path, "scenario file"));
}

Scenario load_scenario_file(const catalog::Catalog& catalog, const std::string& path,
                            const std::vector<Override>& overrides, const std::string& gpu_override) {
  return resolve(catalog, parse_scenario_file(path), overrides, gpu_override);
}

ImportedModel import_hf_config(const std::string& path) {
  parse::HfConfig c = parse::read_hf_config(parse::read_file(path, "Hugging Face config.json"), path);
  return ImportedModel{std::move(c.shape), std::move(c.model_type), std::move(c.fields), std::move(c.notes)};
}

std::vector<Override> parse_overrides(const std::vector<std::string>& sets) {
  std::vector<Override> out;
  for (const auto& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError({Diagnostic{SourcePos{"--set " + s}, "",
                                   "expected KEY=VALUE (e.g. training.micro_batch=4), got \"" + s + "\""}});
    }
    out.push_back(Override{s.substr(0, eq), s.substr(eq + 1)});
  }
  return out;
}

System make_system(const catalog::Catalog& catalog, const std::string& gpu, int gpus, int gpus_per_node) {
  // The same defaults as a scenario's [system] table with only these keys given.
  toml::table t;
  t.insert("gpu", gpu);
  t.insert("gpus", gpus);
  if (gpus_per_node > 0) {
    t.insert("gpus_per_node", gpus_per_node);
  }
  Diagnostics diags;
  Reader r(t, "system", diags);
  System s;
  read_system(r, catalog, s);
  diags.throw_if_any();
  return s;
}

System with_gpus(const System& s, int gpus) {
  System out = s;
  out.gpus = gpus;
  out.gpus_per_node = std::min(s.gpus_per_node, gpus);
  return out;
}

Scenario with_layout(const Scenario& sc, const workload::Layout& layout, int gpus) {
  Scenario s = sc;
  s.system = with_gpus(sc.system, gpus);
  if (s.cloud_system) {
    s.cloud_system = with_gpus(*sc.cloud_system, gpus);
  }
  s.layout = layout;
  s.unset.micro_batch = false;  // the layout names it
  return s;
}

}  // namespace gpusim::scenario
