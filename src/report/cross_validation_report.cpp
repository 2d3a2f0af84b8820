// Cross-validation and calibration reports: each publication predicted with the parameters fitted
// without it, against the shipped fit; and a calibration's parameters with the rows they moved.
#include <cmath>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"
#include "report/validation_parts.hpp"

namespace gpusim::report {

using validation::Measurement;
using validation::Role;
using validation::RowResult;
using validation::Summary;
using validation::ValidationReport;
using namespace validation_parts;  // NOLINT: the validation report's parts

namespace {

// "arch/hopper efficiency.gemm 0.94 -> 0.87, refitted 0.912 on the other publications' rows"
std::string taken_back_line(const validation::TakenBack& t) {
  std::string line = strfmt("    %s/%s %s %s", base::name_in(catalog::kSpecFolders, t.kind), t.id.c_str(),
                            t.key.c_str(), t.shipped.c_str());
  if (t.prior.empty()) {
    return line + " kept: no sibling holds this value without the publication\n";
  }
  line += " -> " + t.prior;
  if (t.refit) {
    line += strfmt(", refitted %.4g on the other publications' fit rows", *t.refit);
  }
  return line + "\n";
}

// Median |error| of the same rows under the shipped specs and held out, per group.
std::string against_shipped(const std::vector<Summary>& shipped, const std::vector<Summary>& held) {
  std::string out;
  for (const Summary& h : held) {
    const auto s = std::find_if(shipped.begin(), shipped.end(), [&h](const Summary& x) { return x.group == h.group; });
    out += strfmt("  %-18s %5d %12.1f %% %12.1f %%\n", h.group.c_str(), h.count,
                  s == shipped.end() ? 0.0 : pct(s->median), pct(h.median));
  }
  return out;
}

}  // namespace

std::string cross_validation_text(const validation::CrossValidation& cv) {
  const ValidationReport& r = cv.held_out;
  std::string out = strfmt("%-16s %-6s %-16s %-15s %16s %16s %9s %9s\n", "id", "role", "gpu", "benchmark", "measured",
                           "held out", "error", "shipped");
  std::string kept;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const RowResult& row = r.rows[i];
    const Measurement& m = *row.measurement;
    if (!m.scored || !row.prediction.value) {
      continue;
    }
    if (!row.not_held_out.empty()) {
      kept += strfmt("  %-12s %s\n", m.id.c_str(), row.not_held_out.c_str());
      continue;
    }
    const auto shipped = cv.shipped.rows[i].error();
    out += strfmt("%-16s %-6s %-16s %-15s %16s %16s %+8.1f%% %s\n", m.id.c_str(), validation::to_string(m.role),
                  m.gpu.c_str(), validation::to_string(m.benchmark), show(m, m.value).c_str(),
                  show(m, *row.prediction.value).c_str(), pct(*row.error()),
                  shipped ? strfmt("%+8.1f%%", pct(*shipped)).c_str() : "");
  }
  if (!kept.empty()) {
    out += "\nnot held out (a value fitted on the row has no sibling to fall back to, so it stays):\n" + kept;
  }
  out += summaries_text(r);
  const std::string header = strfmt("  %-18s %5s %14s %14s\n", "", "rows", "shipped", "held out");
  out += "\nmedian |err| under the shipped specs and held out (each publication left out):\n" + header;
  out += against_shipped(cv.shipped.by_kind, r.by_kind);
  out += against_shipped(cv.shipped.by_segment, r.by_segment);
  out += against_shipped({cv.shipped.all}, {r.all});
  out += coverage_text(r);
  out += model_error_text(cv.model_error);
  out += "\nvalues taken back, per publication left out (spec, key, shipped -> without it):\n";
  for (const validation::Fold& f : cv.folds) {
    out += strfmt("  %s (%s)\n", f.publication.c_str(), count_words(f.rows, "row").c_str());
    for (const auto& t : f.taken_back) {
      out += taken_back_line(t);
    }
  }
  return out;
}

std::string cross_validation_json(const validation::CrossValidation& cv) {
  // The held-out report, with each row's shipped prediction and the folds.
  JsonWriter w;
  w.begin_object();
  write_validation(w, cv.held_out);
  w.begin_array("shipped_predictions");
  for (const RowResult& row : cv.shipped.rows) {
    w.begin_object();
    w.value("id", row.measurement->id);
    w.value("predicted", row.prediction.value);
    w.value("error", row.error());
    w.end_object();
  }
  w.end_array();
  w.begin_object("shipped_all");
  w.value("rows", cv.shipped.all.count);
  w.value("median_abs_error", cv.shipped.all.median);
  w.end_object();
  // What specs/uncertainty/model-error.toml holds (scripts/model-error --update writes it from here).
  w.begin_object("model_error");
  w.value("coverage", cv.model_error.coverage);
  w.value("min_runtime_rows", cv.model_error.min_runtime_rows);
  w.begin_array("groups");
  for (const workload::ModelErrorGroup& g : cv.model_error.groups) {
    w.begin_object();
    w.value("job", base::name_in(workload::kJobKindNames, g.job));
    w.value("metric", base::name_in(workload::kMetricFamilyNames, g.metric));
    w.value("runtime", g.runtime);
    w.value("rows", g.rows);
    w.value("low", g.low);
    w.value("high", g.high);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.begin_array("folds");
  for (const validation::Fold& f : cv.folds) {
    w.begin_object();
    w.value("publication", f.publication);
    w.value("rows", f.rows);
    w.begin_array("taken_back");
    for (const auto& t : f.taken_back) {
      w.begin_object();
      w.value("spec", std::string(base::name_in(catalog::kSpecFolders, t.kind)) + "/" + t.id);
      w.value("key", t.key);
      w.value("shipped", t.shipped);
      w.value("prior", t.prior);
      w.value("refit", t.refit);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.take() + "\n";
}

std::string cross_validation_csv(const validation::CrossValidation& cv) {
  // The held-out rows, then each row's prediction and error under the shipped specs.
  std::string out = std::string(kCsvHeader) + ",shipped_predicted,shipped_error\n";
  for (std::size_t i = 0; i < cv.held_out.rows.size(); ++i) {
    const RowResult& s = cv.shipped.rows[i];
    out += csv_row(cv.held_out.rows[i]) + "," +
           (s.prediction.value ? strfmt("%.6g", *s.prediction.value) : std::string()) + "," +
           (s.error() ? strfmt("%.4f", *s.error()) : std::string()) + "\n";
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
  if (!out_dir.empty()) {
    text += "overlay written to " + out_dir + " (use --specs " + out_dir + ")\n";
  }
  return text;
}

}  // namespace gpusim::report
