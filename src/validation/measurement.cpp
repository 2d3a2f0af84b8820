// Measurement file loader (format in docs/measurements.md).
#include <algorithm>
#include <filesystem>
#include <map>

#include "gpusim/validation.hpp"
#include "parse/parse.hpp"

namespace gpusim::validation {

const char* category_of(Benchmark b) {
  switch (b) {
    case Benchmark::kStreamCopy:
    case Benchmark::kStreamTriad:
    case Benchmark::kStreamRead:
    case Benchmark::kL2Bandwidth:
      return "bandwidth";
    case Benchmark::kLatencyL1:
    case Benchmark::kLatencyL2:
    case Benchmark::kLatencyDram:
      return "latency";
    case Benchmark::kGemm:
      return "gemm";
    case Benchmark::kAttention:
      return "attention";
    case Benchmark::kLaunchOverhead:
      return "launch";
    case Benchmark::kH2d:
    case Benchmark::kD2h:
      return "host link";
    case Benchmark::kP2p:
    case Benchmark::kAllreduce:
    case Benchmark::kReduceScatter:
    case Benchmark::kAllGather:
    case Benchmark::kAllToAll:
      return "communication";
    case Benchmark::kPower:
    case Benchmark::kPowerLimit:
      return "power";
    case Benchmark::kScenario:
      return "end-to-end";
  }
  return "other";
}

const char* category_of(const Measurement& m) {
  if (m.benchmark == Benchmark::kScenario && m.metric.rfind("inference.", 0) == 0) {
    return m.metric.find("_per_s") != std::string::npos ? "serving throughput" : "serving latency";
  }
  return category_of(m.benchmark);
}

namespace {

using parse::Need;
using parse::Range;
using parse::Reader;
using units::Dim;

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
    case Benchmark::kAllToAll:
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
    case Benchmark::kPowerLimit:
      return std::nullopt;
  }
  return std::nullopt;
}

bool is_latency(Benchmark b) {
  return b == Benchmark::kLatencyL1 || b == Benchmark::kLatencyL2 || b == Benchmark::kLatencyDram;
}

void read_value(Reader& r, Measurement& m) {
  if (!r.has("value")) {
    r.error("value", "missing required key");
    return;
  }
  if (uses_scenario(m.benchmark) && m.scored) {
    if (auto v = r.number("value", Need::kRequired, Range::kPositive, limits::kFigure)) {
      m.value = *v;
    }
    return;
  }
  if (uses_scenario(m.benchmark)) {  // unscored: any figure, kept for the record
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
      const units::ParsedQuantity q = units::parse_quantity(*s);
      if (q.dim == Dim::kCycles || q.dim == Dim::kTime) {
        m.value = q.si;
        m.value_in_cycles = q.dim == Dim::kCycles;
        if (q.si <= 0) {
          r.error("value", "must be greater than zero, got \"" + *s + "\"");
        }
        return;
      }
      r.error("value", "expected a latency like \"478 ns\" or \"34 cycles\", got \"" + *s + "\"");
    } catch (const units::UnitError& e) {
      r.error("value", e.what());
    }
    return;
  }
  if (auto v = r.quantity("value", dim, Need::kRequired)) {
    m.value = *v;
  }
}

// What a row inherits from its file's [meta].
struct MetaDefaults {
  std::string source;
  std::string publication;
  std::optional<Role> role;
};

void read_row(Reader& r, const catalog::Catalog& cat, const std::string& file, const MetaDefaults& meta,
              Measurement& m) {
  const std::optional<Role>& default_role = meta.role;
  m.file = file;
  m.id = r.string("id", Need::kRequired).value_or("");
  if (auto role = r.choice("role", kRoleNames, default_role ? Need::kOptional : Need::kRequired)) {
    m.role = *role;
  } else if (default_role && !r.has("role")) {
    m.role = *default_role;
  }
  m.scored = r.boolean("scored", Need::kOptional).value_or(true);
  m.note = r.string("note", Need::kOptional).value_or("");
  m.conditions = r.string("conditions", Need::kOptional).value_or("");
  m.source = r.string("source", Need::kOptional).value_or(meta.source);
  // The publication: the row's, else its file's, else its source (a file written by gpusim-bench
  // names only its source); never empty, so that every row belongs to one.
  m.publication = r.string("publication", Need::kOptional)
                      .value_or(!meta.publication.empty() ? meta.publication
                                : !m.source.empty()       ? m.source
                                                          : file);
  if (auto g = r.string("gpu", Need::kRequired)) {
    if (!cat.has(catalog::SpecKind::kGpu, *g)) {
      r.error("gpu", "unknown GPU id \"" + *g + "\" (" + cat.known_ids_near(catalog::SpecKind::kGpu, *g) + ")");
    }
    m.gpu = *g;
  }
  m.gpus = static_cast<int>(r.integer("gpus", Need::kOptional, 1, limits::kDevices).value_or(1));
  if (r.has("benchmark")) {
    if (const auto b = r.choice("benchmark", kBenchmarkNames, Need::kRequired)) {
      m.benchmark = *b;
    } else {
      r.allow({"value",          "bytes",     "dtype",    "m",        "n",      "k",      "batch",
               "seq_len",        "heads",     "head_dim", "causal",   "graph",  "pinned", "bidirectional",
               "algorithm",      "intensity", "kernel",   "scenario", "metric", "ns",     "peer_access",
               "runtime_version"});
      return;
    }
  } else {
    r.error("benchmark", "missing required key");
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
      m.dtype =
          r.choice("dtype", units::kDTypeNames, need,
                   {DType::kFp32, DType::kTf32, DType::kFp16, DType::kBf16, DType::kFp8, DType::kInt8, DType::kFp4});
      m.m = static_cast<double>(r.integer("m", need, 1, limits::kSequence).value_or(0));
      m.n = static_cast<double>(r.integer("n", need, 1, limits::kSequence).value_or(0));
      m.k = static_cast<double>(r.integer("k", need, 1, limits::kSequence).value_or(0));
      break;
    }
    case Benchmark::kAttention:
      m.batch = static_cast<double>(r.integer("batch", need, 1, limits::kBatch).value_or(0));
      m.seq_len = static_cast<double>(r.integer("seq_len", need, 1, limits::kSequence).value_or(0));
      m.heads = static_cast<double>(r.integer("heads", need, 1, limits::kWidth).value_or(0));
      m.head_dim = static_cast<double>(r.integer("head_dim", need, 1, limits::kWidth).value_or(0));
      m.causal = r.boolean("causal", need).value_or(false);
      m.dtype = r.choice("dtype", units::kDTypeNames, Need::kOptional, {DType::kFp16, DType::kBf16, DType::kFp8});
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
      if (const auto name = r.string("algorithm", Need::kOptional)) {
        if (const auto a = base::value_in(kForcedAlgorithmNames, *name)) {
          m.algorithm = *a;
        } else {
          r.error("algorithm", "expected one of \"ring\", \"tree\", \"nvls\", \"auto\", got \"" + *name + "\"");
        }
      }
      break;
    case Benchmark::kAllToAll:  // the bottleneck link's bandwidth; without `bytes` its plateau
      break;
    case Benchmark::kPower:
      m.intensity = r.number("intensity", Need::kOptional, Range::kPositive);
      m.kernel = r.string("kernel", Need::kOptional).value_or("");
      break;
    case Benchmark::kPowerLimit:
    case Benchmark::kScenario: {
      if (auto s = r.string("scenario", need)) {
        const auto path = std::filesystem::path(file).parent_path() / *s;
        m.scenario = path.lexically_normal().string();
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) {
          r.error("scenario", "scenario file \"" + *s + "\" does not exist (looked for " + m.scenario + ")");
        }
      }
      if (auto v = r.string("runtime_version", Need::kOptional)) {
        m.runtime_version = *v;
        m.runtime_version_pos = r.where("runtime_version");
        m.runtime_version_key = r.path("runtime_version");
        if (!workload::parse_version(*v)) {
          r.error("runtime_version",
                  "expected a release as its project writes it, numbers joined by dots and an "
                  "optional suffix (\"0.6.0\", \"v0.3.0\", \"1.2.0rc1\", \"0.5.3.post3\"), got \"" +
                      *v + "\"");
          m.runtime_version.clear();
        }
      }
      if (m.benchmark == Benchmark::kPowerLimit) {
        if (auto w = r.quantity("power_limit", Dim::kPower, need)) {
          m.power_limit = Watts(*w);
        }
        m.metric = r.string("metric", need).value_or("speed");
        if (m.metric != "speed" && m.metric != "energy") {
          r.error("metric", "expected \"speed\" or \"energy\", got \"" + m.metric + "\"");
        }
        break;
      }
      if (auto k = r.string("metric", need)) {
        m.metric = *k;
        if (!answer::is_report_metric(*k)) {
          r.error("metric", "\"" + *k + "\" is not a numeric key of the report (docs/report.md)");
        }
      }
      break;
    }
    default:
      break;
  }
  r.finish();
}

void load_file(const catalog::Catalog& cat, const std::string& path, Diagnostics& diags,
               std::vector<Measurement>& out) {
  auto parsed = parse::parse_toml(parse::read_file(path, "measurement file"), path, diags);
  if (!parsed) {
    return;
  }
  Reader root(*parsed, "", diags);
  MetaDefaults defaults;
  if (auto meta = root.table("meta", Need::kOptional)) {
    defaults.source = meta->string("source", Need::kOptional).value_or("");
    defaults.publication = meta->string("publication", Need::kOptional).value_or("");
    meta->string("date", Need::kOptional);
    defaults.role = meta->choice("role", kRoleNames, Need::kOptional);
    for (const char* k : {"gpu_name", "driver", "cuda_runtime", "sm_clock", "memory_clock", "power_limit", "notes"}) {
      meta->string(k, Need::kOptional);
    }
    meta->finish();
  }
  root.allow({"measurement"});
  root.finish();
  const toml::array* rows = parsed->get_as<toml::array>("measurement");
  if (rows == nullptr) {
    diags.add(parse::pos_of(*parsed), "measurement", "no [[measurement]] rows");
    return;
  }
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const toml::table* t = rows->get(i)->as_table();
    if (t == nullptr) {
      diags.add(parse::pos_of(*rows->get(i)), "measurement", "expected a table ([[measurement]])");
      continue;
    }
    Reader r(*t, "measurement[" + std::to_string(i) + "]", diags);
    Measurement m;
    m.pos = parse::pos_of(*t);
    read_row(r, cat, path, defaults, m);
    out.push_back(std::move(m));
  }
}

// A row that states its runtime's release is predicted with the runtime file its scenario names
// (or gets by default): that file must model the release. Rows whose scenario does not resolve
// are left to their prediction, which says why.
void check_runtime_versions(const catalog::Catalog& cat, const std::vector<Measurement>& rows, Diagnostics& diags) {
  std::map<std::string, std::optional<workload::Runtime>> runtimes;  // by scenario file
  for (const Measurement& m : rows) {
    if (m.runtime_version.empty() || m.parsed == nullptr) {
      continue;
    }
    auto [it, first] = runtimes.emplace(m.scenario, std::nullopt);
    if (first) {
      try {
        it->second = scenario::resolve(cat, *m.parsed).runtime;
      } catch (const InputError&) {  // resolving the row reports it
      }
    }
    const std::optional<workload::Runtime>& rt = it->second;
    const auto release = workload::parse_version(m.runtime_version);
    if (!rt || !release || rt->versions.covers(*release)) {
      continue;
    }
    diags.add(m.runtime_version_pos, m.runtime_version_key,
              "\"" + m.runtime_version + "\" is outside the releases " + rt->versions.text + " that runtime \"" +
                  rt->id + "\" (" + rt->origin + ") models, which scenario " + m.scenario +
                  " runs: name a runtime file whose versions cover it");
  }
}

}  // namespace

std::vector<Measurement> load_measurements(const catalog::Catalog& catalog, const std::vector<std::string>& paths) {
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
  std::map<std::string, std::shared_ptr<const scenario::ParsedScenario>> parsed;
  for (auto& m : out) {
    if (uses_scenario(m.benchmark) && m.scored && !m.scenario.empty()) {
      auto [it, first] = parsed.emplace(m.scenario, nullptr);
      if (first) {
        try {
          it->second = std::make_shared<const scenario::ParsedScenario>(scenario::parse_scenario_file(m.scenario));
        } catch (const InputError&) {  // resolving the row reports it
        }
      }
      m.parsed = it->second;
    }
  }
  check_runtime_versions(catalog, out, diags);
  if (diags.empty() && out.empty()) {
    std::string where;
    for (const auto& p : paths) {
      where += (where.empty() ? "" : " ") + p;
    }
    diags.add(SourcePos{where}, "", "no measurement files with [[measurement]] rows found");
  }
  diags.throw_if_any();
  return out;
}

}  // namespace gpusim::validation
