// Validation and calibration reports: every row predicted against measured, and the summaries per
// GPU, per category and per role (check rows are the evidence; fit rows tuned a parameter).
#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"

namespace gpusim::report {
namespace {

using validation::Benchmark;
using validation::Measurement;
using validation::Role;
using validation::RowResult;
using validation::Summary;
using validation::ValidationReport;

// Measured and predicted figures in the units people read them in.
std::string show(const Measurement& m, double v) {
  switch (m.benchmark) {
    case Benchmark::kGemm:
    case Benchmark::kAttention:
      return strfmt("%.1f TFLOP/s", units::to_teraflops(FlopPerSecond(v)));
    case Benchmark::kLatencyL1:
    case Benchmark::kLatencyL2:
    case Benchmark::kLatencyDram:
      return m.value_in_cycles ? strfmt("%.0f cycles", v) : strfmt("%.1f ns", units::to_ns(Seconds(v)));
    case Benchmark::kLaunchOverhead:
      return strfmt("%.2f us", units::to_us(Seconds(v)));
    case Benchmark::kPower:
      return strfmt("%.0f W", v);
    case Benchmark::kScenario:
    case Benchmark::kPowerLimit:
      return strfmt("%.4g", v);
    default:
      return v >= units::kTera ? strfmt("%.2f TB/s", units::to_terabytes_per_second(BytesPerSecond(v)))
                               : strfmt("%.1f GB/s", units::to_gigabytes_per_second(BytesPerSecond(v)));
  }
}

std::string summary_line(const Summary& s) {
  return strfmt("  %-18s %5d %12.1f %% %8.1f %% %8.1f %%\n", s.group.c_str(), s.count, pct(s.median), pct(s.p90),
                pct(s.worst));
}

const char* kSummaryHeader = "  %-18s %5s %14s %10s %10s\n";

std::string coverage_line(const validation::Coverage& c) {
  return strfmt("  %-18s %5d %8d %9.1f %% %16.1f %%\n", c.group.c_str(), c.rows, c.inside, pct(c.share),
                pct(c.median_half_width));
}

// How often the bands hold the measured value, per category and over all (check rows).
std::string coverage_text(const ValidationReport& r) {
  if (r.coverage.rows == 0) {
    return "";
  }
  std::string out =
      "\nband coverage, check rows with a band (measured within low-high; the bands aim at about 80 %):\n" +
      strfmt("  %-18s %5s %8s %11s %18s\n", "", "rows", "inside", "coverage", "median half-width");
  for (const auto& c : r.coverage_by_category) {
    out += coverage_line(c);
  }
  return out + coverage_line(r.coverage);
}

}  // namespace

std::string validation_text(const ValidationReport& r) {
  std::string out = strfmt("%-16s %-6s %-16s %-15s %16s %16s %9s\n", "id", "role", "gpu", "benchmark", "measured",
                           "predicted", "error");
  std::string unpredicted;
  std::string unscored;
  for (const RowResult& row : r.rows) {
    const Measurement& m = *row.measurement;
    if (!m.scored) {
      unscored += strfmt("  %-12s %s\n", m.id.c_str(), m.note.c_str());
      continue;
    }
    if (!row.prediction.value) {
      unpredicted += strfmt("  %-12s %s\n", m.id.c_str(), row.prediction.reason.c_str());
      continue;
    }
    out += strfmt("%-16s %-6s %-16s %-15s %16s %16s %+8.1f%%\n", m.id.c_str(), validation::to_string(m.role),
                  m.gpu.c_str(), validation::to_string(m.benchmark), show(m, m.value).c_str(),
                  show(m, *row.prediction.value).c_str(), pct(*row.error()));
  }
  if (!unpredicted.empty()) {
    out += "\nnot predicted yet (scored rows the model cannot predict):\n" + unpredicted;
  }
  if (!unscored.empty()) {
    out += "\nnot scored (conditions the model cannot represent):\n" + unscored;
  }
  const std::string header = strfmt(kSummaryHeader, "", "rows", "median |err|", "p90", "worst");
  out += "\nper GPU (check and fit rows):\n" + header;
  for (const auto& s : r.by_gpu) {
    out += summary_line(s);
  }
  const std::string signed_header =
      strfmt("%-18s %6s %14s %10s %10s\n", "", "rows", "median |err|", "mean err", "worst");
  auto signed_line = [](const Summary& s) {
    return strfmt("  %-16s %6d %13.1f %% %+8.1f %% %8.1f %%\n", s.group.c_str(), s.count, 100 * s.median, 100 * s.mean,
                  100 * s.worst);
  };
  if (!r.by_runtime.empty()) {
    out += "\nper runtime, end-to-end check rows (mean err: + predicted high, - low):\n" + signed_header;
    for (const auto& s : r.by_runtime) {
      out += signed_line(s);
    }
    out += "\nper GPU, end-to-end check rows:\n" + signed_header;
    for (const auto& s : r.by_gpu_end_to_end) {
      out += signed_line(s);
    }
  }
  out += "\nper category, check rows (held out from calibration: the evidence):\n" + header;
  for (const auto& s : r.by_category[static_cast<int>(Role::kCheck)]) {
    out += summary_line(s);
  }
  out += "\nper category, fit rows (a spec value was set or calibrated from them):\n" + header;
  for (const auto& s : r.by_category[static_cast<int>(Role::kFit)]) {
    out += summary_line(s);
  }
  out += "\nsummary:\n" + header;
  out += summary_line(r.by_role[static_cast<int>(Role::kCheck)]);
  out += summary_line(r.by_role[static_cast<int>(Role::kFit)]);
  out += summary_line(r.all);
  return out + coverage_text(r);
}

std::string validation_json(const ValidationReport& r) {
  JsonWriter w;
  w.begin_object();
  w.begin_array("rows");
  for (const RowResult& row : r.rows) {
    const Measurement& m = *row.measurement;
    w.begin_object();
    w.value("id", m.id);
    w.value("file", m.file);
    w.value("role", validation::to_string(m.role));
    w.value("gpu", m.gpu);
    w.value("benchmark", validation::to_string(m.benchmark));
    w.value("category", validation::category_of(m));
    w.value("scored", m.scored);
    w.value("measured", m.value);
    w.value("predicted", row.prediction.value);
    w.value("error", row.error());
    w.value("band_low", row.prediction.band ? std::optional<double>(row.prediction.band->low) : std::nullopt);
    w.value("band_high", row.prediction.band ? std::optional<double>(row.prediction.band->high) : std::nullopt);
    if (!row.prediction.value) {
      w.value("reason", row.prediction.reason);
    }
    w.end_object();
  }
  w.end_array();
  auto summaries = [&w](const char* key, const std::vector<Summary>& list) {
    w.begin_array(key);
    for (const auto& s : list) {
      w.begin_object();
      w.value("group", s.group);
      w.value("rows", s.count);
      w.value("median_abs_error", s.median);
      w.value("p90_abs_error", s.p90);
      w.value("worst_abs_error", s.worst);
      w.value("mean_error", s.mean);
      w.end_object();
    }
    w.end_array();
  };
  summaries("by_gpu", r.by_gpu);
  summaries("by_runtime", r.by_runtime);
  summaries("by_gpu_end_to_end", r.by_gpu_end_to_end);
  summaries("by_category_check", r.by_category[static_cast<int>(Role::kCheck)]);
  summaries("by_category_fit", r.by_category[static_cast<int>(Role::kFit)]);
  summaries("by_role", {r.by_role[0], r.by_role[1]});
  summaries("all", {r.all});
  auto coverage = [&w](const validation::Coverage& c) {
    w.begin_object();
    w.value("group", c.group);
    w.value("rows", c.rows);
    w.value("inside", c.inside);
    w.value("coverage", c.share);
    w.value("median_half_width", c.median_half_width);
    w.end_object();
  };
  w.begin_array("coverage_by_category");
  for (const auto& c : r.coverage_by_category) {
    coverage(c);
  }
  w.end_array();
  w.begin_array("coverage");
  coverage(r.coverage);
  w.end_array();
  w.end_object();
  return w.str() + "\n";
}

std::string validation_csv(const ValidationReport& r) {
  std::string out = "id,role,gpu,benchmark,category,scored,measured,predicted,error,band_low,band_high\n";
  for (const RowResult& row : r.rows) {
    const Measurement& m = *row.measurement;
    const auto& b = row.prediction.band;
    out += strfmt("%s,%s,%s,%s,%s,%s,%.6g,%s,%s,%s,%s\n", csv_field(m.id).c_str(), validation::to_string(m.role),
                  csv_field(m.gpu).c_str(), validation::to_string(m.benchmark),
                  csv_field(validation::category_of(m)).c_str(), m.scored ? "true" : "false", m.value,
                  row.prediction.value ? strfmt("%.6g", *row.prediction.value).c_str() : "",
                  row.error() ? strfmt("%.4f", *row.error()).c_str() : "", b ? strfmt("%.6g", b->low).c_str() : "",
                  b ? strfmt("%.6g", b->high).c_str() : "");
  }
  return out;
}

std::string calibration_text(const validation::CalibrationResult& fit, const ValidationReport& v0,
                             const ValidationReport& v1, const std::string& out_dir) {
  std::string text = strfmt("%-22s %-28s %12s %12s  %s\n", "scope", "parameter", "prior", "fitted", "rows");
  for (const auto& p : fit.params) {
    const double k = p.is_time ? units::to_us(Seconds(1)) : 1.0;  // times are shown in microseconds
    text += strfmt("%-22s %-28s %12.4g %12.4g  %zu%s\n", p.scope.c_str(), (p.table + "." + p.key).c_str(), p.prior * k,
                   p.value * k, p.rows.size(), p.is_time ? " (us)" : "");
  }
  if (!fit.kept.empty()) {
    text += "\nkept at their prior values:\n";
    for (const auto& k : fit.kept) {
      text += "  " + k + "\n";
    }
  }
  for (const Role role : {Role::kFit, Role::kCheck}) {
    const auto& before = v0.by_category[static_cast<int>(role)];
    const auto& after = v1.by_category[static_cast<int>(role)];
    text += strfmt("\n%-16s %8s %16s %16s   (%s rows)\n", "category", "rows", "median before", "median after",
                   validation::to_string(role));
    for (std::size_t i = 0; i < before.size() && i < after.size(); ++i) {
      text += strfmt("%-16s %8d %15.1f%% %15.1f%%\n", before[i].group.c_str(), before[i].count, pct(before[i].median),
                     pct(after[i].median));
    }
    const Summary& b = v0.by_role[static_cast<int>(role)];
    const Summary& a = v1.by_role[static_cast<int>(role)];
    text += strfmt("%-16s %8d %15.1f%% %15.1f%%\n", "all", b.count, pct(b.median), pct(a.median));
  }
  text += "overlay written to " + out_dir + " (use --specs " + out_dir + ")\n";
  return text;
}

}  // namespace gpusim::report
