// Measurement file loader (format: DESIGN §8).
#include "gpusim/validate/measurement.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "gpusim/report/report.hpp"
#include "spec/toml_reader.hpp"

namespace gpusim {
namespace {

using detail::Need;
using detail::Range;
using detail::Reader;

struct BenchInfo {
  const char* name;
  Benchmark b;
  const char* category;
};

constexpr BenchInfo kBenchmarks[] = {
    {"stream_copy", Benchmark::kStreamCopy, "bandwidth"},
    {"stream_triad", Benchmark::kStreamTriad, "bandwidth"},
    {"stream_read", Benchmark::kStreamRead, "bandwidth"},
    {"l2_bandwidth", Benchmark::kL2Bandwidth, "bandwidth"},
    {"latency_l1", Benchmark::kLatencyL1, "latency"},
    {"latency_l2", Benchmark::kLatencyL2, "latency"},
    {"latency_dram", Benchmark::kLatencyDram, "latency"},
    {"gemm", Benchmark::kGemm, "gemm"},
    {"attention", Benchmark::kAttention, "attention"},
    {"launch_overhead", Benchmark::kLaunchOverhead, "launch"},
    {"h2d", Benchmark::kH2d, "host link"},
    {"d2h", Benchmark::kD2h, "host link"},
    {"p2p", Benchmark::kP2p, "communication"},
    {"allreduce", Benchmark::kAllreduce, "communication"},
    {"reduce_scatter", Benchmark::kReduceScatter, "communication"},
    {"all_gather", Benchmark::kAllGather, "communication"},
    {"power", Benchmark::kPower, "power"},
    {"scenario", Benchmark::kScenario, "end-to-end"},
};

const BenchInfo& info(Benchmark b) {
  for (const auto& i : kBenchmarks) {
    if (i.b == b) {
      return i;
    }
  }
  return kBenchmarks[0];
}

// The dimension a benchmark's value must have (scenario values are plain numbers).
std::optional<Dim> value_dim(Benchmark b) {
  switch (b) {
    case Benchmark::kStreamCopy:
    case Benchmark::kStreamTriad:
    case Benchmark::kStreamRead:
    case Benchmark::kL2Bandwidth:
    case Benchmark::kH2d:
    case Benchmark::kD2h:
    case Benchmark::kP2p:
    case Benchmark::kAllreduce:
    case Benchmark::kReduceScatter:
    case Benchmark::kAllGather:
      return Dim::kBandwidth;
    case Benchmark::kGemm:
    case Benchmark::kAttention:
      return Dim::kFlopRate;
    case Benchmark::kLaunchOverhead:
    case Benchmark::kLatencyL1:
    case Benchmark::kLatencyL2:
    case Benchmark::kLatencyDram:
      return Dim::kTime;  // latencies may also be in cycles
    case Benchmark::kPower:
      return Dim::kPower;
    case Benchmark::kScenario:
      return std::nullopt;
  }
  return std::nullopt;
}

bool is_latency(Benchmark b) {
  return b == Benchmark::kLatencyL1 || b == Benchmark::kLatencyL2 || b == Benchmark::kLatencyDram;
}

std::optional<DType> dtype_from(const std::string& s) {
  static const std::map<std::string, DType> m = {{"fp32", DType::kFp32}, {"tf32", DType::kTf32},
                                                 {"fp16", DType::kFp16}, {"bf16", DType::kBf16},
                                                 {"fp8", DType::kFp8},   {"int8", DType::kInt8}};
  auto it = m.find(s);
  return it == m.end() ? std::nullopt : std::optional<DType>(it->second);
}

void read_value(Reader& r, Measurement& m) {
  if (!r.has("value")) {
    r.error("value", "missing required key");
    return;
  }
  if (m.benchmark == Benchmark::kScenario && m.scored) {
    if (auto v = r.number("value", Need::kRequired, Range::kPositive)) {
      m.value = *v;
    }
    return;
  }
  if (m.benchmark == Benchmark::kScenario) {  // unscored: any figure, kept for the record
    r.allow({"value"});
    return;
  }
  const Dim dim = *value_dim(m.benchmark);
  if (is_latency(m.benchmark)) {
    const auto s = r.string("value", Need::kRequired);
    if (!s) {
      return;
    }
    try {
      const ParsedQuantity q = parse_quantity(*s);
      if (q.dim == Dim::kCycles || q.dim == Dim::kTime) {
        m.value = q.si;
        m.value_in_cycles = q.dim == Dim::kCycles;
        if (q.si <= 0) {
          r.error("value", "must be greater than zero, got \"" + *s + "\"");
        }
        return;
      }
      r.error("value", "expected a latency like \"478 ns\" or \"34 cycles\", got \"" + *s + "\"");
    } catch (const UnitError& e) {
      r.error("value", e.what());
    }
    return;
  }
  if (auto v = r.quantity("value", dim, Need::kRequired)) {
    m.value = *v;
  }
}

void read_row(Reader& r, const Catalog& cat, const std::string& file, const std::string& default_source,
              const std::optional<std::string>& default_role, Measurement& m) {
  m.file = file;
  m.id = r.string("id", Need::kRequired).value_or("");
  if (auto role = r.choice("role", {"fit", "check"}, default_role ? Need::kOptional : Need::kRequired)) {
    m.role = *role == "fit" ? Role::kFit : Role::kCheck;
  } else if (default_role && !r.has("role")) {
    m.role = *default_role == "fit" ? Role::kFit : Role::kCheck;
  }
  m.scored = r.boolean("scored", Need::kOptional).value_or(true);
  m.note = r.string("note", Need::kOptional).value_or("");
  m.conditions = r.string("conditions", Need::kOptional).value_or("");
  m.source = r.string("source", Need::kOptional).value_or(default_source);
  if (auto g = r.string("gpu", Need::kRequired)) {
    if (!cat.has(SpecKind::kGpu, *g)) {
      r.error("gpu", "unknown GPU id \"" + *g + "\" (known: " + cat.known_ids(SpecKind::kGpu) + ")");
    }
    m.gpu = *g;
  }
  m.gpus = static_cast<int>(r.integer("gpus", Need::kOptional).value_or(1));
  if (auto b = r.string("benchmark", Need::kRequired)) {
    const auto it =
        std::find_if(std::begin(kBenchmarks), std::end(kBenchmarks), [&](const BenchInfo& i) { return *b == i.name; });
    if (it == std::end(kBenchmarks)) {
      std::string list;
      for (const auto& i : kBenchmarks) {
        list += (list.empty() ? "" : ", ") + std::string(i.name);
      }
      r.error("benchmark", "unknown benchmark \"" + *b + "\" (known: " + list + ")");
      r.allow({"value",     "bytes",     "dtype",    "m",        "n",      "k",      "batch",
               "seq_len",   "heads",     "head_dim", "causal",   "graph",  "pinned", "bidirectional",
               "algorithm", "intensity", "kernel",   "scenario", "metric", "ns",     "peer_access"});
      return;
    }
    m.benchmark = it->b;
  } else {
    return;
  }
  read_value(r, m);
  if (auto v = r.quantity("bytes", Dim::kBytes, Need::kOptional)) {
    m.bytes = Bytes(*v);
  }
  r.number("ns", Need::kOptional);  // gpusim-bench adds the nanosecond figure of a cycle latency
  const bool scored = m.scored;
  const Need need = scored ? Need::kRequired : Need::kOptional;
  switch (m.benchmark) {
    case Benchmark::kGemm: {
      if (auto d = r.choice("dtype", {"fp32", "tf32", "fp16", "bf16", "fp8", "int8"}, need)) {
        m.dtype = dtype_from(*d);
      }
      m.m = static_cast<double>(r.integer("m", need).value_or(0));
      m.n = static_cast<double>(r.integer("n", need).value_or(0));
      m.k = static_cast<double>(r.integer("k", need).value_or(0));
      break;
    }
    case Benchmark::kAttention:
      m.batch = static_cast<double>(r.integer("batch", need).value_or(0));
      m.seq_len = static_cast<double>(r.integer("seq_len", need).value_or(0));
      m.heads = static_cast<double>(r.integer("heads", need).value_or(0));
      m.head_dim = static_cast<double>(r.integer("head_dim", need).value_or(0));
      m.causal = r.boolean("causal", need).value_or(false);
      if (auto d = r.choice("dtype", {"fp16", "bf16", "fp8"}, Need::kOptional)) {
        m.dtype = dtype_from(*d);
      }
      break;
    case Benchmark::kLaunchOverhead:
      m.graph = r.boolean("graph", Need::kOptional).value_or(false);
      break;
    case Benchmark::kH2d:
    case Benchmark::kD2h:
      m.pinned = r.boolean("pinned", Need::kOptional).value_or(true);
      break;
    case Benchmark::kP2p:
      m.bidirectional = r.boolean("bidirectional", Need::kOptional).value_or(false);
      r.boolean("peer_access", Need::kOptional);
      break;
    case Benchmark::kAllreduce:
    case Benchmark::kReduceScatter:
    case Benchmark::kAllGather:
      // Without `bytes` the row is a large-message plateau (nccl-tests' busbw at its largest sizes).
      m.algorithm = r.choice("algorithm", {"ring", "tree", "nvls", "auto"}, Need::kOptional).value_or("auto");
      break;
    case Benchmark::kPower:
      m.intensity = r.number("intensity", Need::kOptional, Range::kPositive);
      m.kernel = r.string("kernel", Need::kOptional).value_or("");
      break;
    case Benchmark::kScenario: {
      if (auto s = r.string("scenario", need)) {
        const auto path = std::filesystem::path(file).parent_path() / *s;
        m.scenario = path.lexically_normal().string();
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) {
          r.error("scenario", "scenario file \"" + *s + "\" does not exist (looked for " + m.scenario + ")");
        }
      }
      if (auto k = r.string("metric", need)) {
        m.metric = *k;
        if (!is_report_metric(*k)) {
          r.error("metric", "\"" + *k + "\" is not a numeric key of the report (DESIGN §5)");
        }
      }
      break;
    }
    default:
      break;
  }
  r.finish();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError({Diagnostic{SourcePos{path}, "", "cannot read measurement file"}});
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void load_file(const Catalog& cat, const std::string& path, Diagnostics& diags, std::vector<Measurement>& out) {
  auto parsed = detail::parse_toml(read_file(path), path, diags);
  if (!parsed) {
    return;
  }
  Reader root(*parsed, "", diags);
  std::string default_source;
  std::optional<std::string> default_role;
  if (auto meta = root.table("meta", Need::kOptional)) {
    default_source = meta->string("source", Need::kOptional).value_or("");
    meta->string("date", Need::kOptional);
    default_role = meta->choice("role", {"fit", "check"}, Need::kOptional);
    for (const char* k : {"gpu_name", "driver", "cuda_runtime", "sm_clock", "memory_clock", "power_limit", "notes"}) {
      meta->string(k, Need::kOptional);
    }
    meta->finish();
  }
  root.allow({"measurement"});
  root.finish();
  const toml::array* rows = parsed->get_as<toml::array>("measurement");
  if (rows == nullptr) {
    diags.add(detail::pos_of(*parsed), "measurement", "no [[measurement]] rows");
    return;
  }
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const toml::table* t = rows->get(i)->as_table();
    if (t == nullptr) {
      diags.add(detail::pos_of(*rows->get(i)), "measurement", "expected a table ([[measurement]])");
      continue;
    }
    Reader r(*t, "measurement[" + std::to_string(i) + "]", diags);
    Measurement m;
    m.pos = detail::pos_of(*t);
    read_row(r, cat, path, default_source, default_role, m);
    out.push_back(std::move(m));
  }
}

}  // namespace

const char* to_string(Benchmark b) { return info(b).name; }
const char* category_of(Benchmark b) { return info(b).category; }

std::vector<Measurement> load_measurements(const Catalog& catalog, const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        if (e.is_regular_file() && e.path().extension() == ".toml") {
          in_dir.push_back(e.path().string());
        }
      }
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.push_back(p);
    }
  }
  Diagnostics diags;
  std::vector<Measurement> out;
  for (const auto& f : files) {
    try {
      load_file(catalog, f, diags, out);
    } catch (const InputError& e) {
      diags.append(e.diagnostics());
    }
  }
  std::map<std::string, const Measurement*> seen;
  for (const auto& m : out) {
    if (m.id.empty()) {
      continue;
    }
    auto [it, inserted] = seen.emplace(m.file + "#" + m.id, &m);
    if (!inserted) {
      diags.add(m.pos, "id", "duplicate id \"" + m.id + "\" in this file");
    }
  }
  diags.throw_if_any();
  return out;
}

}  // namespace gpusim
