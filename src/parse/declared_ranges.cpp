// The accepted range of each bounded spec and scenario quantity (contract in parse.hpp; the rows
// of spec files are listed in specs/README.md#ranges, those of scenarios in
// docs/scenarios.md#ranges). A dimension's magnitudes (units::accepted_magnitudes) only keep a
// value finite; these bounds keep it physical: a GPU clocked at 1e-6 Hz or with one SM is a typo,
// and the model would take it and answer. Each bound sits well outside every part the catalog
// models and every price paid today, so new parts fit, and the reason names the span seen.
#include <map>

#include "parse/parse.hpp"

namespace gpusim::parse {

using units::Dim;

const std::vector<KeyRange>& key_ranges() {
  static const std::vector<KeyRange> kRows = {
      // GPU files (architecture defaults merge into them, so arch/ files are held to the same rows).
      {"gpus", "sm_count", std::nullopt, "8", "1024",
       "the catalog spans 28 SMs (RTX 3060) to 304 CUs (MI300X); no part with fewer than 8 trains a model"},
      {"gpus", "boost_clock", Dim::kFrequency, "100 MHz", "5 GHz", "every modelled GPU boosts at 1.4 to 2.7 GHz"},
      {"gpus", "power.max_clock", Dim::kFrequency, "100 MHz", "5 GHz", "as boost_clock"},
      {"gpus", "compute.*", Dim::kFlopRate, "10 GFLOP/s", "100 PFLOP/s",
       "the catalog spans 0.2 TFLOP/s (consumer FP64) to 10 PFLOP/s (FP4)"},
      {"gpus", "memory.capacity", Dim::kBytes, "1 GB", "10 TB", "the catalog spans 11 GiB to 192 GB"},
      {"gpus", "memory.bandwidth", Dim::kBandwidth, "10 GB/s", "100 TB/s", "the catalog spans 288 GB/s to 8 TB/s"},
      {"gpus", "memory.latency", Dim::kTime, "1 ns", "10 us", "DRAM latencies are 0.2 to 0.7 us"},
      {"gpus", "cache.l2_size", Dim::kBytes, "256 KiB", "10 GB", "the catalog spans 3 MiB to 256 MB"},
      {"gpus", "cache.l2_bandwidth", Dim::kBandwidth, "10 GB/s", "1 PB/s", "the catalog spans 0.56 to 7 TB/s"},
      {"gpus", "cache.l2_latency", Dim::kTime, "1 ns", "10 us", "L2 latencies are 0.1 to 0.2 us"},
      {"gpus", "cache.l1_latency", Dim::kTime, "1 ns", "10 us", "L1 latencies are 10 to 30 ns"},
      {"gpus", "peer_link.bandwidth", Dim::kBandwidth, "1 GB/s", "100 TB/s",
       "the catalog spans 50 to 900 GB/s per direction; 0 with link = \"none\""},
      {"gpus", "power.tdp", Dim::kPower, "10 W", "5 kW", "the catalog spans 72 W (L4) to 1.2 kW (GB200)"},
      {"gpus", "power.idle", Dim::kPower, "1 W", "1 kW", "the catalog spans 8 to 130 W"},
      {"gpus", "power.busy_floor", Dim::kPower, "1 W", "5 kW", "between idle and the TDP"},
      {"gpus", "price.purchase", Dim::kMoney, "50 USD", "1000000 USD", "the catalog spans 329 to 40000 USD"},
      {"gpus", "price.cloud_rate", Dim::kMoneyPerTime, "0.01 USD/h", "1000 USD/h",
       "the catalog spans 0.06 to 4.49 USD/h"},
      // Host files.
      {"hosts", "memory", Dim::kBytes, "1 GB", "100 TB", "the catalog spans 64 GiB to 2 TB"},
      {"hosts", "memory_bandwidth", Dim::kBandwidth, "1 GB/s", "10 TB/s", "the catalog spans 83 to 614 GB/s"},
      {"hosts", "nvme_bandwidth", Dim::kBandwidth, "100 MB/s", "1 TB/s", "the catalog spans 6.9 to 28 GB/s"},
      // Link files.
      {"links", "bandwidth", Dim::kBandwidth, "100 MB/s", "100 TB/s",
       "the catalog spans 3.1 GB/s (25 Gb/s Ethernet) to 900 GB/s (NVLink 5)"},
      {"links", "latency", Dim::kTime, "10 ns", "1 ms", "the catalog spans 0.5 to 5 us"},
      {"links", "staged_latency", Dim::kTime, "10 ns", "1 ms", "the catalog states 10 us"},
      // Runtime files: the request path of a serving engine (zero where nothing is published).
      {"runtimes", "serving.api_latency", Dim::kTime, "10 us", "10 s",
       "the catalog's serving runtimes state 6.8 to 10.4 ms"},
      {"runtimes", "serving.tokenize_per_token", Dim::kTime, "1 ns", "1 ms",
       "tokenizers take 0.1 to 20 us per token of one CPU thread"},
      // Scenario files (and --set); zero stays allowed where the key allows it (free electricity).
      {"scenario", "serving.api_latency", Dim::kTime, "10 us", "10 s", "as a runtime file's serving.api_latency"},
      {"scenario", "serving.tokenize_per_token", Dim::kTime, "1 ns", "1 ms",
       "as a runtime file's serving.tokenize_per_token"},
      {"scenario", "input.storage_bandwidth", Dim::kBandwidth, "1 MB/s", "10 TB/s",
       "node storage reads at 0.5 to 100 GB/s"},
      {"scenario", "cost.electricity", Dim::kMoneyPerEnergy, "0.001 USD/kWh", "10 USD/kWh",
       "electricity sells at 0.03 to 0.5 USD/kWh"},
      {"scenario", "cost.cloud_rate", Dim::kMoneyPerTime, "0.01 USD/h", "1000 USD/h",
       "per GPU-hour, as a GPU file's price.cloud_rate"},
      {"scenario", "cost.host_power", Dim::kPower, "1 W", "100 kW", "per node; the defaults are 100 W to 2.5 kW"},
      {"scenario", "cost.lifetime", Dim::kTime, "30 days", "50 years", "hardware is written off over 3 to 6 years"},
      {"scenario", "cost.carbon_intensity", Dim::kMassPerEnergy, "1 g/kWh", "2 kg/kWh", "grids emit 0.01 to 1 kg/kWh"},
      {"scenario", "cost.utilization", std::nullopt, "0.0001", "1",
       "the share of the lifetime the hardware works; below 1e-4 (under an hour a year) its cost per job has no bound"},
  };
  return kRows;
}

namespace {
// Whether `pattern` ("power.tdp", or "compute.*" for every key of [compute]) names `key`.
bool covers(std::string_view pattern, std::string_view key) {
  if (pattern.size() > 2 && pattern.substr(pattern.size() - 2) == ".*") {
    const std::string_view table = pattern.substr(0, pattern.size() - 1);  // "compute."
    return key.size() > table.size() && key.substr(0, table.size()) == table &&
           key.find('.', table.size()) == std::string_view::npos;
  }
  return key == pattern;
}

double bound(const KeyRange& k, std::string_view text) {
  return k.dim ? units::parse_si(text, *k.dim) : std::stod(std::string(text));
}
}  // namespace

std::string Reader::declared_range_problem(std::string_view key, double v) const {
  // Whether zero is allowed is the key's own rule; a reader given no ranges checks none.
  if (v == 0 || ranges_ == nullptr) {
    return {};
  }
  const std::string full = path(key);
  for (const KeyRange& k : *ranges_) {
    if (!covers(k.key, full)) {
      continue;
    }
    if (v < bound(k, k.lo) || v > bound(k, k.hi)) {
      return "must be between " + std::string(k.lo) + " and " + std::string(k.hi) + " (" + std::string(k.why) + ")";
    }
    return {};
  }
  return {};
}

const std::vector<KeyRange>& key_ranges(std::string_view folder) {
  // Split by folder once: every reader of a file of that folder points at its rows.
  static const std::map<std::string_view, std::vector<KeyRange>> by_folder = [] {
    std::map<std::string_view, std::vector<KeyRange>> out;
    for (const KeyRange& k : key_ranges()) {
      out[k.folder].push_back(k);
    }
    return out;
  }();
  static const std::vector<KeyRange> none;
  const auto it = by_folder.find(folder);
  return it == by_folder.end() ? none : it->second;
}

}  // namespace gpusim::parse
