// Scenario loading (DESIGN §4): TOML + overrides -> validated Scenario with defaults resolved.
#include "gpusim/workload/scenario.hpp"

#include <fstream>
#include <sstream>

#include "common/strfmt.hpp"
#include "gpusim/cost/defaults.hpp"
#include "spec/readers.hpp"
#include "spec/toml_reader.hpp"

namespace gpusim {
namespace {

using detail::Need;
using detail::Range;
using detail::Reader;

void apply_override(toml::table& root, const Override& o, Diagnostics& diags) {
  const std::string where = "--set " + o.key + "=" + o.value;
  std::vector<std::string> parts;
  std::stringstream ss(o.key);
  for (std::string p; std::getline(ss, p, '.');) {
    parts.push_back(p);
  }
  if (parts.empty() || o.key.empty()) {
    diags.add(SourcePos{where}, o.key, "expected KEY=VALUE with a dotted key such as training.micro_batch");
    return;
  }
  toml::table* t = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    toml::node* n = t->get(parts[i]);
    if (n == nullptr) {
      t->insert(parts[i], toml::table{});
      n = t->get(parts[i]);
    }
    if (!n->is_table()) {
      diags.add(SourcePos{where}, o.key, "\"" + parts[i] + "\" is not a table");
      return;
    }
    t = n->as_table();
  }
  toml::table parsed;
  try {
    parsed = toml::parse("value = " + o.value, where);
  } catch (const toml::parse_error&) {  // a bare word: take it as a string
    parsed = toml::parse("value = \"\"", where);
    parsed.insert_or_assign("value", o.value);
  }
  parsed.get("value")->visit([&](auto&& x) { t->insert_or_assign(parts.back(), std::move(x)); });
}

DType precision_from(const std::string& s) {
  if (s == "fp32") {
    return DType::kFp32;
  }
  if (s == "tf32") {
    return DType::kTf32;
  }
  if (s == "fp16") {
    return DType::kFp16;
  }
  if (s == "fp8") {
    return DType::kFp8;
  }
  return DType::kBf16;
}

void read_system(Reader& r, const Catalog& cat, Scenario& sc) {
  SystemConfig& s = sc.system;
  if (auto id = r.string("gpu", Need::kRequired)) {
    if (!cat.has(SpecKind::kGpu, *id)) {
      r.error("gpu", "unknown GPU id \"" + *id + "\" (known: " + cat.known_ids(SpecKind::kGpu) + ")");
    } else {
      try {
        s.gpu = cat.gpu(*id);
        s.gpu_id = *id;
      } catch (const InputError& e) {
        r.diagnostics().append(e.diagnostics());
      }
    }
  }
  if (auto v = r.integer("gpus", Need::kRequired)) {
    s.gpus = static_cast<int>(*v);
  }
  const bool sxm = s.gpu.form_factor == FormFactor::kSxm;
  s.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", Need::kOptional).value_or(sxm ? 8 : 1));
  if (s.gpus < s.gpus_per_node) {
    s.gpus_per_node = s.gpus;
  } else if (s.gpus % s.gpus_per_node != 0) {
    r.error("gpus", "gpus (" + std::to_string(s.gpus) + ") must be a multiple of gpus_per_node (" +
                        std::to_string(s.gpus_per_node) + ")");
  }
  s.nics_per_node = static_cast<int>(r.integer("nics_per_node", Need::kOptional).value_or(sxm ? s.gpus_per_node : 1));
  s.oversubscription = r.number("oversubscription", Need::kOptional, Range::kPositive).value_or(1.0);
  if (s.oversubscription < 1.0) {
    r.error("oversubscription", "a fabric's oversubscription is at least 1 (1 = non-blocking)");
  }

  auto load_link = [&](std::string_view key, const std::string& fallback, LinkSpec& out) {
    const std::string id = r.string(key, Need::kOptional).value_or(fallback);
    if (!cat.has(SpecKind::kLink, id)) {
      r.error(key, "unknown link id \"" + id + "\"");
      return;
    }
    try {
      out = cat.link(id);
    } catch (const InputError& e) {
      r.diagnostics().append(e.diagnostics());
    }
  };
  if (s.gpu_id.empty()) {  // the GPU was bad: link defaults would only add noise
    r.allow({"intra_node", "inter_node", "power_limit"});
    r.finish();
    return;
  }
  const std::string pcie = "pcie" + std::to_string(s.gpu.pcie_gen);
  load_link("intra_node", s.gpu.has_nvlink() ? s.gpu.peer_link : pcie, s.intra_node);
  if (cat.has(SpecKind::kLink, pcie)) {
    s.pcie = cat.link(pcie);
  } else {
    r.error("gpu", "no link spec \"" + pcie + "\" for the GPU's host link");
  }
  const bool hopper_or_later = s.gpu.arch == Arch::kHopper || s.gpu.arch == Arch::kBlackwell;
  const std::string inter =
      sxm && hopper_or_later ? "ib-ndr" : (s.gpu.arch == Arch::kAmpere && sxm ? "ib-hdr" : "eth-25g");
  load_link("inter_node", inter, s.inter_node);
  s.power_limit = s.gpu.tdp;
  if (auto v = r.quantity("power_limit", Dim::kPower, Need::kOptional)) {
    if (*v > s.gpu.tdp.value()) {
      r.error("power_limit", "power_limit above the TDP (" + std::to_string(static_cast<int>(s.gpu.tdp.value())) +
                                 " W) is not modelled");
    } else if (*v <= s.gpu.idle_power.value()) {
      r.error("power_limit", "power_limit must be above the GPU's idle power (" +
                                 std::to_string(static_cast<int>(s.gpu.idle_power.value())) + " W)");
    } else {
      s.power_limit = Watts(*v);
    }
  }
  r.finish();
}

void read_model(Reader& r, const Catalog& cat, ModelShape& m) {
  const auto preset = r.string("preset", Need::kOptional);
  const auto params = r.number("params", Need::kOptional);
  if (preset && params) {
    r.error("params", "give either preset or params, not both");
  }
  bool have_base = false;
  if (preset) {
    if (!cat.has(SpecKind::kModel, *preset)) {
      r.error("preset", "unknown model preset \"" + *preset + "\" (known: " + cat.known_ids(SpecKind::kModel) + ")");
    } else {
      m = cat.model(*preset);
      have_base = true;
    }
  } else if (params) {
    const auto vocab = r.integer("vocab", Need::kOptional).value_or(32000);
    if (auto shape = shape_from_params(*params, vocab)) {
      m = *shape;
    } else {
      r.error("params", "no standard shape (head_dim 128, hidden ~ 128 x layers) has " + detail::strfmt("%g", *params) +
                            " parameters within 10 %; give layers, hidden, heads and ffn instead");
    }
    have_base = true;
  } else if (r.has("params")) {
    have_base = true;  // a bad params value was reported already; missing shape keys would only add noise
  }
  if (auto v = r.string("name", Need::kOptional)) {
    m.name = *v;
  }
  if (!have_base) {
    m.kv_heads = 0;
    m.ffn_hidden = 0;
    for (const char* key : {"layers", "hidden", "heads", "vocab", "ffn"}) {
      if (!r.has(key)) {
        r.error(key, "missing required key (or give preset = \"...\" or params = ...)");
      }
    }
  }
  const bool had_ffn_hidden = r.has("ffn_hidden");
  const bool had_norm = r.has("norm");
  read_model_keys(r, m, Need::kOptional);
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
    // DESIGN §4: 4h for gelu; 8/3 h rounded up to a multiple of 256 for swiglu (Llama convention).
    m.ffn_hidden = m.ffn == FfnKind::kGelu ? 4 * m.hidden : ((8 * m.hidden / 3 + 255) / 256) * 256;
  }
  detail::check_model(r, m);
  r.finish();
}

void read_training(Reader& r, Scenario& sc) {
  TrainingConfig t;
  if (auto v = r.number("tokens", Need::kRequired)) {
    t.tokens = *v;
  }
  t.seq_len = r.integer("seq_len", Need::kRequired).value_or(0);
  t.global_batch = r.integer("global_batch", Need::kRequired).value_or(0);
  t.micro_batch = r.integer("micro_batch", Need::kOptional).value_or(1);
  if (auto v = r.choice("precision", {"fp32", "tf32", "fp16", "bf16", "fp8"}, Need::kOptional)) {
    t.precision = precision_from(*v);
  }
  if (auto v = r.choice("optimizer", {"adamw", "sgd", "adafactor"}, Need::kOptional)) {
    t.optimizer = *v == "adamw" ? Optimizer::kAdamW : (*v == "sgd" ? Optimizer::kSgd : Optimizer::kAdafactor);
  }
  if (auto v = r.choice("recompute", {"none", "selective", "full"}, Need::kOptional)) {
    t.recompute = *v == "none" ? Recompute::kNone : (*v == "selective" ? Recompute::kSelective : Recompute::kFull);
  }
  t.flash_attention = r.boolean("flash_attention", Need::kOptional).value_or(true);
  // FlashAttention-2 kernels cover head dimensions up to 256 (Dao 2023); the model has no
  // efficiency for larger ones.
  constexpr std::int64_t kMaxFlashHeadDim = 256;
  if (t.flash_attention && sc.model.heads > 0 && sc.model.head_dim() > kMaxFlashHeadDim) {
    r.error("flash_attention", "head dimension " + std::to_string(sc.model.head_dim()) +
                                   " (hidden / heads) is above the 256 that flash attention covers; set "
                                   "flash_attention = false");
  }
  t.cuda_graphs = r.boolean("cuda_graphs", Need::kOptional).value_or(false);
  const GpuSpec& g = sc.system.gpu;
  if (!g.id.empty() && !g.supports(t.precision)) {
    r.error("precision", std::string("the ") + g.name + " has no " + to_string(t.precision) + " support");
  }
  if (sc.model.position == PositionKind::kLearned && sc.model.max_seq > 0 && t.seq_len > sc.model.max_seq) {
    r.error("seq_len", "seq_len " + std::to_string(t.seq_len) + " exceeds the model's learned positions (" +
                           std::to_string(sc.model.max_seq) + ")");
  }
  r.finish();
  sc.training = t;
}

void read_inference(Reader& r, Scenario& sc) {
  InferenceConfig inf;
  if (r.has("batch") && r.string_value_is("batch", "max")) {
    r.allow({"batch"});
    inf.batch_max = true;  // resolved against the memory model by estimate
  } else {
    inf.batch = r.integer("batch", Need::kOptional).value_or(1);
  }
  inf.prompt_tokens = r.integer("prompt_tokens", Need::kOptional).value_or(512);
  inf.output_tokens = r.integer("output_tokens", Need::kOptional).value_or(128);
  inf.cuda_graphs = r.boolean("cuda_graphs", Need::kOptional).value_or(false);
  auto bytes_of = [](const std::string& p) { return p == "int4" ? 0.5 : (p == "int8" || p == "fp8" ? 1.0 : 2.0); };
  if (auto v = r.choice("weight_precision", {"fp16", "bf16", "fp8", "int8", "int4"}, Need::kOptional)) {
    inf.weight_bytes = bytes_of(*v);
    inf.weight_precision = *v == "bf16" ? DType::kBf16 : (*v == "fp8" ? DType::kFp8 : DType::kFp16);
    if (*v == "fp8" && !sc.system.gpu.id.empty() && !sc.system.gpu.supports(DType::kFp8)) {
      r.error("weight_precision", "the " + sc.system.gpu.name + " has no fp8 support");
    }
  }
  if (auto v = r.choice("kv_precision", {"fp16", "bf16", "fp8", "int8"}, Need::kOptional)) {
    inf.kv_bytes = bytes_of(*v);
  }
  r.finish();
  sc.inference = inf;
}

// The constraints of a parallel layout, each with its failing numbers.
void check_layout(Reader& r, const ModelShape& m, const ParallelConfig& p) {
  auto n = [](auto v) { return std::to_string(v); };
  if (p.tensor > 1 && m.heads % p.tensor != 0) {
    r.error("tensor", "tensor (" + n(p.tensor) + ") must divide the attention heads (" + n(m.heads) + ")");
  }
  if (p.tensor > 1 && m.ffn_hidden % p.tensor != 0) {
    r.error("tensor", "tensor (" + n(p.tensor) + ") must divide ffn_hidden (" + n(m.ffn_hidden) + ")");
  }
  if (p.pipeline * p.virtual_stages > m.layers) {
    r.error("pipeline", "pipeline x virtual_stages = " + n(p.pipeline * p.virtual_stages) + " exceeds the layers (" +
                            n(m.layers) + ")");
  } else if (!p.uneven_stages && m.layers % (static_cast<std::int64_t>(p.pipeline) * p.virtual_stages) != 0) {
    r.error("pipeline", "pipeline x virtual_stages = " + n(p.pipeline) + " x " + n(p.virtual_stages) + " = " +
                            n(p.pipeline * p.virtual_stages) + " must divide the layers (" + n(m.layers) +
                            "), or set uneven_stages = true");
  }
  if (p.sequence && p.tensor == 1) {
    r.error("sequence", "sequence parallelism splits along the tensor-parallel ranks: it needs tensor > 1");
  }
  if (p.virtual_stages > 1 && p.pipeline == 1) {
    r.error("virtual_stages", "virtual stages interleave pipeline stages: they need pipeline > 1");
  }
}

void read_parallel(Reader* r, Scenario& sc) {
  ParallelConfig& p = sc.parallel;
  const int gpus = sc.system.gpus;
  if (r == nullptr) {
    p.data = gpus;
    return;
  }
  p.tensor = static_cast<int>(r->integer("tensor", Need::kOptional).value_or(1));
  p.pipeline = static_cast<int>(r->integer("pipeline", Need::kOptional).value_or(1));
  p.zero = static_cast<int>(r->integer("zero", Need::kOptional, 0).value_or(0));
  p.sequence = r->boolean("sequence", Need::kOptional).value_or(false);
  p.virtual_stages = static_cast<int>(r->integer("virtual_stages", Need::kOptional).value_or(1));
  p.uneven_stages = r->boolean("uneven_stages", Need::kOptional).value_or(false);
  const int model_parallel = p.tensor * p.pipeline;
  p.data = static_cast<int>(r->integer("data", Need::kOptional).value_or(gpus / std::max(1, model_parallel)));
  if (p.zero > 3) {
    r->error("zero", "expected a ZeRO stage 0..3, got " + std::to_string(p.zero));
  }
  check_layout(*r, sc.model, p);
  if (p.tensor * p.pipeline * p.data != gpus) {
    r->error("data", "tensor x pipeline x data = " + std::to_string(p.tensor) + " x " + std::to_string(p.pipeline) +
                         " x " + std::to_string(p.data) + " = " + std::to_string(p.tensor * p.pipeline * p.data) +
                         ", but system.gpus = " + std::to_string(gpus));
  }
  r->finish();
}

void read_input(Reader& r, Scenario& sc) {
  InputConfig in;
  if (auto v = r.quantity("sample_bytes", Dim::kBytes, Need::kRequired)) {
    in.sample_bytes = Bytes(*v);
  }
  if (auto v = r.quantity("cpu_time_per_sample", Dim::kTime, Need::kRequired)) {
    in.cpu_time_per_sample = Seconds(*v);
  }
  in.workers = static_cast<int>(r.integer("workers", Need::kOptional).value_or(1));
  in.storage_bandwidth =
      BytesPerSecond(r.quantity("storage_bandwidth", Dim::kBandwidth, Need::kOptional).value_or(3e9));
  in.pinned_memory = r.boolean("pinned_memory", Need::kOptional).value_or(true);
  r.finish();
  sc.input = in;
}

// `gpu_changed`: --gpu or --set replaced the file's GPU, so prices the file states for its own
// hardware (purchase, and a cloud rate for the same GPU) no longer apply: the new GPU's catalog
// prices are used instead.
void read_cost(Reader* r, const Catalog& cat, Scenario& sc, bool gpu_changed) {
  CostConfig& c = sc.cost;
  const SystemConfig& s = sc.system;
  auto q = [r](std::string_view key, Dim dim, double fallback, Range range = Range::kPositive) {
    return r == nullptr ? fallback : r->quantity(key, dim, Need::kOptional, range).value_or(fallback);
  };
  auto num = [r](std::string_view key, double fallback, Range range) {
    return r == nullptr ? fallback : r->number(key, Need::kOptional, range).value_or(fallback);
  };
  c.electricity = units::usd_per_kwh(defaults::kElectricityUsdPerKwh);
  c.electricity = UsdPerJoule(q("electricity", Dim::kMoneyPerEnergy, c.electricity.value(), Range::kNonNegative));
  c.utilization = num("utilization", defaults::kUtilization, Range::kFraction);
  c.cloud_gpu = r == nullptr ? s.gpu_id : r->string("cloud_gpu", Need::kOptional).value_or(s.gpu_id);
  double cloud_default = s.gpu.cloud_rate.value();
  if (c.cloud_gpu != s.gpu_id) {
    if (!cat.has(SpecKind::kGpu, c.cloud_gpu)) {
      r->error("cloud_gpu", "unknown GPU id \"" + c.cloud_gpu + "\"");
    } else {
      cloud_default = cat.gpu(c.cloud_gpu).cloud_rate.value();
    }
  }
  const bool same_gpu_cloud = c.cloud_gpu == s.gpu_id;
  c.cloud_rate = UsdPerSecond(q("cloud_rate", Dim::kMoneyPerTime, cloud_default));
  if (gpu_changed && same_gpu_cloud) {
    c.cloud_rate = UsdPerSecond(cloud_default);
  }
  const bool server = s.gpu.form_factor == FormFactor::kSxm;
  const double gpu_total = s.gpu.purchase.value() * s.gpus;
  const double host_total =
      server ? gpu_total * defaults::kServerHostFraction : defaults::kDesktopHostUsd * static_cast<double>(s.nodes());
  c.purchase = Usd(q("purchase", Dim::kMoney, gpu_total + host_total));
  if (gpu_changed) {
    c.purchase = Usd(gpu_total + host_total);
  }
  c.host_power = Watts(q("host_power", Dim::kPower, server ? defaults::kServerHostWatts : defaults::kDesktopHostWatts,
                         Range::kNonNegative));
  c.pue = num("pue", defaults::kPue, Range::kPositive);
  if (c.pue < 1.0 && r != nullptr) {
    r->error("pue", "power usage effectiveness is at least 1");
  }
  c.lifetime = Seconds(q("lifetime", Dim::kTime, defaults::kLifetimeYears * units::kSecondsPerYear));
  c.carbon_intensity = KgPerJoule(q("carbon_intensity", Dim::kMassPerEnergy,
                                    units::kg_per_kwh(defaults::kCarbonKgPerKwh).value(), Range::kNonNegative));
  if (r != nullptr) {
    r->finish();
  }
}

}  // namespace

Scenario load_scenario(const Catalog& catalog, const std::string& path, const std::string& text,
                       const std::vector<Override>& overrides, const std::string& gpu_override) {
  Diagnostics diags;
  auto parsed = detail::parse_toml(text, path, diags);
  diags.throw_if_any();
  toml::table root = std::move(*parsed);
  const std::string file_gpu = root["system"]["gpu"].value_or(std::string());
  for (const auto& o : overrides) {
    apply_override(root, o, diags);
  }
  if (!gpu_override.empty()) {
    apply_override(root, Override{"system.gpu", "\"" + gpu_override + "\""}, diags);
  }
  diags.throw_if_any();

  Scenario sc;
  sc.origin = path;
  Reader r(root, "", diags);
  sc.name = r.string("name", Need::kRequired).value_or("");
  if (auto s = r.table("system", Need::kRequired)) {
    read_system(*s, catalog, sc);
  }
  if (auto m = r.table("model", Need::kRequired)) {
    read_model(*m, catalog, sc.model);
  }
  const bool has_training = r.has("training");
  const bool has_inference = r.has("inference");
  if (has_training == has_inference) {
    r.error(has_training ? "inference" : "training", "a scenario needs exactly one of [training] or [inference]");
  }
  if (auto t = r.table("training", Need::kOptional)) {
    read_training(*t, sc);
  }
  if (auto t = r.table("inference", Need::kOptional)) {
    read_inference(*t, sc);
  }
  {
    auto p = r.table("parallelism", Need::kOptional);
    read_parallel(p ? &*p : nullptr, sc);
  }
  if (sc.training && diags.empty()) {
    const TrainingConfig& t = *sc.training;
    const std::int64_t per_step = t.micro_batch * sc.parallel.data;
    if (per_step > 0 && t.global_batch % per_step != 0) {
      r.error("training", "global_batch (" + std::to_string(t.global_batch) +
                              ") must be a multiple of micro_batch x data = " + std::to_string(t.micro_batch) + " x " +
                              std::to_string(sc.parallel.data) + " = " + std::to_string(per_step));
    }
  }
  if (auto in = r.table("input", Need::kOptional)) {
    read_input(*in, sc);
  }
  {
    auto c = r.table("cost", Need::kOptional);
    read_cost(c ? &*c : nullptr, catalog, sc, !file_gpu.empty() && file_gpu != sc.system.gpu_id);
  }
  r.finish();
  diags.throw_if_any();
  return sc;
}

SystemConfig make_system(const Catalog& catalog, const std::string& gpu, int gpus, int gpus_per_node) {
  // The same defaults as a scenario's [system] table with only these keys given.
  toml::table t;
  t.insert("gpu", gpu);
  t.insert("gpus", gpus);
  if (gpus_per_node > 0) {
    t.insert("gpus_per_node", gpus_per_node);
  }
  Diagnostics diags;
  Reader r(t, "system", diags);
  Scenario sc;
  read_system(r, catalog, sc);
  diags.throw_if_any();
  return sc.system;
}

Scenario load_scenario_file(const Catalog& catalog, const std::string& path, const std::vector<Override>& overrides,
                            const std::string& gpu_override) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError({Diagnostic{SourcePos{path}, "", "cannot read scenario file"}});
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return load_scenario(catalog, path, ss.str(), overrides, gpu_override);
}

}  // namespace gpusim
