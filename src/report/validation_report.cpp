// Validation and calibration reports: every row predicted against measured, and the summaries per
// GPU, per category and per role (check rows are the evidence; fit rows tuned a parameter).
#include <cmath>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"
#include "report/validation_parts.hpp"

namespace gpusim::report {
namespace validation_parts {

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

// The summaries of a report: per GPU, per runtime and GPU (end-to-end), per kind and segment, per
// category and role. A cross-validated report's rows are all held out, so they are not split by role.
std::string summaries_text(const ValidationReport& r) {
  const bool cv = r.cross_validated;
  std::string out;
  const std::string header = strfmt(kSummaryHeader, "", "rows", "median |err|", "p90", "worst");
  out += cv ? "\nper GPU (every row predicted without its publication):\n" + header
            : "\nper GPU (check and fit rows):\n" + header;
  for (const auto& s : r.by_gpu) {
    out += summary_line(s);
  }
  const std::string signed_header =
      strfmt("%-18s %6s %14s %10s %10s\n", "", "rows", "median |err|", "mean err", "worst");
  // A titled table of signed summaries.
  auto signed_table = [&signed_header](const std::string& title, const std::vector<Summary>& list) {
    std::string t = "\n" + title + "\n" + signed_header;
    for (const auto& s : list) {
      t += strfmt("  %-16s %6d %13.1f %% %+8.1f %% %8.1f %%\n", s.group.c_str(), s.count, 100 * s.median, 100 * s.mean,
                  100 * s.worst);
    }
    return t;
  };
  const std::string which = cv ? "end-to-end rows, each without its publication" : "end-to-end check rows";
  if (!r.by_runtime.empty()) {
    out += signed_table("per runtime, " + which + " (mean err: + predicted high, - low):", r.by_runtime);
    out += signed_table("per GPU, " + which + ":", r.by_gpu_end_to_end);
  }
  const std::string rows_of = cv ? "every row, each without its publication" : "check rows";
  out += signed_table("per kind of job, " + rows_of + ":", r.by_kind);
  out += signed_table("per GPU segment, " + rows_of + ":", r.by_segment);
  out += cv ? "\nper category, check rows:\n" + header
            : "\nper category, check rows (held out from calibration: the evidence):\n" + header;
  for (const auto& s : r.by_category[static_cast<int>(Role::kCheck)]) {
    out += summary_line(s);
  }
  out += cv ? "\nper category, fit rows (each predicted without its publication's fits):\n" + header
            : "\nper category, fit rows (a spec value was set or calibrated from them):\n" + header;
  for (const auto& s : r.by_category[static_cast<int>(Role::kFit)]) {
    out += summary_line(s);
  }
  out += "\nsummary:\n" + header;
  out += summary_line(r.by_role[static_cast<int>(Role::kCheck)]);
  out += summary_line(r.by_role[static_cast<int>(Role::kFit)]);
  out += summary_line(r.all);
  return out;
}

std::string coverage_line(const validation::Coverage& c) {
  return strfmt("  %-18s %5d %8d %9.1f %% %16.1f %%\n", c.group.c_str(), c.rows, c.inside, pct(c.share),
                pct(c.median_half_width));
}

// What the bands were built from, in words.
const char* basis_words(validation::BandBasis b) {
  switch (b) {
    case validation::BandBasis::kRanges:
      return "the bands hold the spec files' ranges alone (the catalog has no model-error groups).";
    case validation::BandBasis::kInSample:
      return "in-sample: the bands' model-error quantiles come from these rows' own held-out errors\n"
             "(--cross-validate judges bands built without each row's publication).";
    case validation::BandBasis::kHeldOut:
      return "held out: each band is the spec ranges around the held-out prediction and the model error\n"
             "of the other publications' rows (jackknife+).";
  }
  return "";
}

std::string coverage_table(const std::string& title, const std::vector<validation::Coverage>& by_category,
                           const validation::Coverage& all) {
  std::string out = "\n" + title + "\n" +
                    strfmt("  %-18s %5s %8s %11s %18s\n", "", "rows", "inside", "coverage", "median half-width");
  for (const auto& c : by_category) {
    out += coverage_line(c);
  }
  return out + coverage_line(all);
}

// How often the bands hold the measured value, per category and over all: check rows, and every
// row of a cross-validated report.
std::string coverage_text(const ValidationReport& r) {
  if (r.coverage.rows == 0 && r.check_coverage.rows == 0) {
    return "";
  }
  std::string out = strfmt("\nband coverage (measured within low-high; the bands aim at about 80 %%)\n%s\n",
                           basis_words(r.band_basis));
  if (r.cross_validated) {
    out += coverage_table("every row with a band, each predicted without its publication:", r.coverage_by_category,
                          r.coverage);
  }
  return out + coverage_table("check rows with a band:", r.check_coverage_by_category, r.check_coverage);
}

// The model-error groups of a cross-validation: what specs/uncertainty/model-error.toml holds.
std::string model_error_text(const workload::ModelError& me) {
  if (me.groups.empty()) {
    return "";
  }
  std::string out = strfmt(
      "\nmodel error on publications it was not fitted to: quantiles of ln(predicted / measured) over the\n"
      "held-out rows, %.0f %% central (a runtime with fewer than %d rows takes every runtime's;\n"
      "specs/uncertainty/model-error.toml):\n",
      pct(me.coverage), me.min_runtime_rows);
  out += strfmt("  %-9s %-11s %-16s %5s %8s %8s   %s\n", "job", "metric", "runtime", "rows", "low", "high",
                "measured against predicted");
  for (const workload::ModelErrorGroup& g : me.groups) {
    out += strfmt("  %-9s %-11s %-16s %5d %+8.3f %+8.3f   %+.0f %% to %+.0f %%\n",
                  base::name_in(workload::kJobKindNames, g.job), base::name_in(workload::kMetricFamilyNames, g.metric),
                  g.runtime.empty() ? "every runtime" : g.runtime.c_str(), g.rows, g.low, g.high,
                  pct(std::exp(-g.high) - 1.0), pct(std::exp(-g.low) - 1.0));
  }
  return out;
}

}  // namespace validation_parts

using namespace validation_parts;  // NOLINT: the parts above, shared with cross_validation_report.cpp

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
  out += summaries_text(r);
  return out + coverage_text(r);
}

namespace validation_parts {

// (high − low) / 2 over the prediction; nullopt without a band.
std::optional<double> half_width(const RowResult& row) {
  const auto& b = row.prediction.band;
  const auto& y = row.prediction.value;
  if (!b || !y || *y == 0) {
    return std::nullopt;
  }
  return 0.5 * (b->high - b->low) / std::fabs(*y);
}

// The members of a validation report's JSON object.
void write_validation(JsonWriter& w, const ValidationReport& r) {
  w.value("cross_validated", r.cross_validated);
  w.begin_array("rows");
  for (const RowResult& row : r.rows) {
    const Measurement& m = *row.measurement;
    w.begin_object();
    w.value("id", m.id);
    w.value("file", m.file);
    w.value("publication", m.publication);
    w.value("role", validation::to_string(m.role));
    w.value("gpu", m.gpu);
    w.value("benchmark", validation::to_string(m.benchmark));
    w.value("category", validation::category_of(m));
    w.value("kind", validation::to_string(row.kind));
    if (!row.runtime.empty()) {
      w.value("runtime", row.runtime);
    }
    w.value("scored", m.scored);
    w.value("measured", m.value);
    w.value("predicted", row.prediction.value);
    w.value("error", row.error());
    w.value("band_low", row.prediction.band ? std::optional<double>(row.prediction.band->low) : std::nullopt);
    w.value("band_high", row.prediction.band ? std::optional<double>(row.prediction.band->high) : std::nullopt);
    if (const auto inside = row.inside_band()) {
      w.value("in_band", *inside);
    } else {
      w.null("in_band");
    }
    w.value("band_half_width", half_width(row));
    if (!row.prediction.value) {
      w.value("reason", row.prediction.reason);
    }
    if (!row.not_held_out.empty()) {
      w.value("not_held_out", row.not_held_out);
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
  summaries("by_kind", r.by_kind);
  summaries("by_segment", r.by_segment);
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
  w.value("band_basis", validation::to_string(r.band_basis));
  w.begin_array("coverage_by_category");
  for (const auto& c : r.coverage_by_category) {
    coverage(c);
  }
  w.end_array();
  w.begin_array("coverage");
  coverage(r.coverage);
  w.end_array();
  w.begin_array("coverage_check_by_category");
  for (const auto& c : r.check_coverage_by_category) {
    coverage(c);
  }
  w.end_array();
  w.begin_array("coverage_check");
  coverage(r.check_coverage);
  w.end_array();
}

}  // namespace validation_parts

std::string validation_json(const ValidationReport& r) {
  JsonWriter w;
  w.begin_object();
  write_validation(w, r);
  w.end_object();
  return w.take() + "\n";
}

namespace validation_parts {

const char* const kCsvHeader =
    "id,role,gpu,benchmark,category,scored,measured,predicted,error,band_low,band_high,publication,in_band,"
    "band_half_width";

std::string csv_row(const RowResult& row) {
  const Measurement& m = *row.measurement;
  const auto& b = row.prediction.band;
  const auto inside = row.inside_band();
  const auto& y = row.prediction.value;
  const auto half = half_width(row);
  return strfmt("%s,%s,%s,%s,%s,%s,%.6g,%s,%s,%s,%s,%s,%s,%s", csv_field(m.id).c_str(), validation::to_string(m.role),
                csv_field(m.gpu).c_str(), validation::to_string(m.benchmark),
                csv_field(validation::category_of(m)).c_str(), m.scored ? "true" : "false", m.value,
                y ? strfmt("%.6g", *y).c_str() : "", row.error() ? strfmt("%.4f", *row.error()).c_str() : "",
                b ? strfmt("%.6g", b->low).c_str() : "", b ? strfmt("%.6g", b->high).c_str() : "",
                csv_field(m.publication).c_str(), inside ? (*inside ? "true" : "false") : "",
                half ? strfmt("%.4f", *half).c_str() : "");
}

}  // namespace validation_parts

std::string validation_csv(const ValidationReport& r) {
  std::string out = std::string(kCsvHeader) + "\n";
  for (const RowResult& row : r.rows) {
    out += csv_row(row) + "\n";
  }
  return out;
}

std::string threshold_breach_text(const validation::ThresholdBreach& b) {
  using W = validation::ThresholdBreach::What;
  const char* how = b.cross_validated ? "cross-validated " : "";
  switch (b.what) {
    case W::kRuntimeBias:
      return base::strfmt("runtime %s has a cross-validated mean error of %+.2f %% over %s, beyond +-%.2f %%",
                          b.group.c_str(), 100.0 * b.value, count_words(b.count, "row").c_str(), b.bound);
    case W::kKindMedian:
      return base::strfmt("%smedian |error| %.2f %% of %s exceeds %.2f %%", how, 100.0 * b.value,
                          count_words(b.count, b.group + " row").c_str(), b.bound);
    case W::kMedian:
      break;
  }
  return base::strfmt("%smedian |error| %.2f %% of %s exceeds %.2f %%", how, 100.0 * b.value,
                      count_words(b.count, b.cross_validated ? "scored row" : "scored " + b.group + " row").c_str(),
                      b.bound);
}

}  // namespace gpusim::report
