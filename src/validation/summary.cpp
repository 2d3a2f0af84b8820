// Validation summary and its text, JSON and CSV forms.
#include "gpusim/validate/validate.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/strfmt.hpp"
#include "report/json_writer.hpp"

namespace gpusim {

using detail::strfmt;

std::optional<double> RowResult::error() const {
  if (!prediction.value || measurement->value == 0) {
    return std::nullopt;
  }
  return (*prediction.value - measurement->value) / measurement->value;
}

Summary summarize(const std::string& group, std::vector<double> errs) {
  Summary s;
  s.group = group;
  s.count = static_cast<int>(errs.size());
  if (errs.empty()) {
    return s;
  }
  std::sort(errs.begin(), errs.end());
  const std::size_t n = errs.size();
  s.median = n % 2 == 1 ? errs[n / 2] : 0.5 * (errs[n / 2 - 1] + errs[n / 2]);
  // nearest rank: the smallest value with at least 90 % of the values at or below it
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(n)));
  s.p90 = errs[std::max<std::size_t>(rank, 1) - 1];
  s.worst = errs.back();
  return s;
}

ValidationReport validate(const std::vector<Measurement>& rows, const Catalog& catalog) {
  ValidationReport r;
  std::map<std::string, std::vector<double>> by_cat;
  std::map<std::string, std::vector<double>> by_gpu;
  std::vector<double> all;
  for (const Measurement& m : rows) {
    RowResult rr{&m, predict(m, catalog)};
    if (auto e = rr.error()) {
      by_cat[category_of(m.benchmark)].push_back(std::fabs(*e));
      by_gpu[m.gpu].push_back(std::fabs(*e));
      all.push_back(std::fabs(*e));
    }
    r.rows.push_back(std::move(rr));
  }
  for (auto& [k, v] : by_cat) {
    r.by_category.push_back(summarize(k, v));
  }
  for (auto& [k, v] : by_gpu) {
    r.by_gpu.push_back(summarize(k, v));
  }
  r.all = summarize("all", all);
  return r;
}

namespace {

// Measured and predicted figures in the units people read them in.
std::string show(const Measurement& m, double v) {
  switch (m.benchmark) {
    case Benchmark::kGemm:
    case Benchmark::kAttention:
      return strfmt("%.1f TFLOP/s", v / 1e12);
    case Benchmark::kLatencyL1:
    case Benchmark::kLatencyL2:
    case Benchmark::kLatencyDram:
      return m.value_in_cycles ? strfmt("%.0f cycles", v) : strfmt("%.1f ns", v * 1e9);
    case Benchmark::kLaunchOverhead:
      return strfmt("%.2f us", v * 1e6);
    case Benchmark::kPower:
      return strfmt("%.0f W", v);
    case Benchmark::kScenario:
      return strfmt("%.4g", v);
    default:
      return v >= 1e12 ? strfmt("%.2f TB/s", v / 1e12) : strfmt("%.1f GB/s", v / 1e9);
  }
}

std::string summary_line(const Summary& s) {
  return strfmt("  %-16s %5d %12.1f %% %8.1f %% %8.1f %%\n", s.group.c_str(), s.count, 100 * s.median, 100 * s.p90,
                100 * s.worst);
}

}  // namespace

std::string validation_text(const ValidationReport& r) {
  std::string out =
      strfmt("%-12s %-16s %-15s %16s %16s %9s\n", "id", "gpu", "benchmark", "measured", "predicted", "error");
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
    out += strfmt("%-16s %-16s %-15s %16s %16s %+8.1f%%\n", m.id.c_str(), m.gpu.c_str(), to_string(m.benchmark),
                  show(m, m.value).c_str(), show(m, *row.prediction.value).c_str(), 100 * *row.error());
  }
  if (!unpredicted.empty()) {
    out += "\nnot predicted yet (scored rows the model cannot predict):\n" + unpredicted;
  }
  if (!unscored.empty()) {
    out += "\nnot scored (conditions the model cannot represent):\n" + unscored;
  }
  const std::string header = strfmt("  %-16s %5s %14s %10s %10s\n", "", "rows", "median |err|", "p90", "worst");
  out += "\nper GPU:\n" + header;
  for (const auto& s : r.by_gpu) {
    out += summary_line(s);
  }
  out += "\nper category:\n" + header;
  for (const auto& s : r.by_category) {
    out += summary_line(s);
  }
  out += summary_line(r.all);
  return out;
}

std::string validation_json(const ValidationReport& r) {
  detail::JsonWriter w;
  w.begin_object();
  w.begin_array("rows");
  for (const RowResult& row : r.rows) {
    const Measurement& m = *row.measurement;
    w.begin_object();
    w.value("id", m.id);
    w.value("file", m.file);
    w.value("gpu", m.gpu);
    w.value("benchmark", to_string(m.benchmark));
    w.value("category", category_of(m.benchmark));
    w.value("scored", m.scored);
    w.value("measured", m.value);
    w.value("predicted", row.prediction.value);
    w.value("error", row.error());
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
      w.end_object();
    }
    w.end_array();
  };
  summaries("by_gpu", r.by_gpu);
  summaries("by_category", r.by_category);
  summaries("all", {r.all});
  w.end_object();
  return w.str() + "\n";
}

std::string validation_csv(const ValidationReport& r) {
  std::string out = "id,gpu,benchmark,category,scored,measured,predicted,error\n";
  for (const RowResult& row : r.rows) {
    const Measurement& m = *row.measurement;
    out += strfmt("%s,%s,%s,%s,%s,%.6g,%s,%s\n", m.id.c_str(), m.gpu.c_str(), to_string(m.benchmark),
                  category_of(m.benchmark), m.scored ? "true" : "false", m.value,
                  row.prediction.value ? strfmt("%.6g", *row.prediction.value).c_str() : "",
                  row.error() ? strfmt("%.4f", *row.error()).c_str() : "");
  }
  return out;
}

}  // namespace gpusim
