// Reader of specs/uncertainty/model-error.toml (format in specs/README.md, "Model error"): the
// quantiles of the model's held-out errors per kind of job, metric family and runtime, which the
// band of an estimate adds to its assumption ranges (answer/uncertainty.cpp).
#include <algorithm>

#include "parse/parse.hpp"

namespace gpusim::parse {

namespace {

void read_group(Reader& r, const workload::ModelError& me, const std::vector<std::string>& runtimes,
                workload::ModelErrorGroup& g) {
  if (auto v = r.choice("job", workload::kJobKindNames, Need::kRequired)) {
    g.job = *v;
  }
  if (auto v = r.choice("metric", workload::kMetricFamilyNames, Need::kRequired)) {
    g.metric = *v;
    if (g.job == workload::JobKind::kTraining && g.metric == workload::MetricFamily::kLatency) {
      r.error("metric", "a training job's times count as its rates: its one family is \"throughput\"");
    }
  }
  if (auto v = r.string("runtime", Need::kOptional)) {
    if (std::find(runtimes.begin(), runtimes.end(), *v) == runtimes.end()) {
      std::string known;
      for (const std::string& id : runtimes) {
        known += (known.empty() ? "" : ", ") + id;
      }
      r.error("runtime", "unknown runtime id \"" + *v + "\" (known: " + known + ")");
    } else {
      g.runtime = *v;
    }
  }
  if (auto v = r.integer("rows", Need::kRequired, 1, limits::kRows)) {
    g.rows = static_cast<int>(*v);
    if (!g.runtime.empty() && g.rows < me.min_runtime_rows) {
      r.error("rows", base::strfmt("a runtime's own group needs at least method.min_runtime_rows = %d rows, got %d",
                                   me.min_runtime_rows, g.rows));
    }
  }
  const auto low = r.number("low", Need::kRequired, Range::kAny, limits::kLogRatio);
  const auto high = r.number("high", Need::kRequired, Range::kAny, limits::kLogRatio);
  if (low && high) {
    if (*high < *low) {
      r.error("high", base::strfmt("the upper quantile is at least the lower one (low = %g), got %g", *low, *high));
    }
    g.low = *low;
    g.high = *high;
  }
  r.finish();
}

}  // namespace

void read_model_error(const toml::table& table, Diagnostics& diags, const std::vector<std::string>& runtimes,
                      workload::ModelError& out) {
  Reader root(table, "", diags);
  root.allow({"base", "group"});
  if (auto m = root.table("method", Need::kRequired)) {
    if (auto v = m->number("coverage", Need::kRequired, Range::kFraction)) {
      if (*v >= 1.0) {
        m->error("coverage", base::strfmt("a central coverage is above 0 and below 1, got %g", *v));
      } else {
        out.coverage = *v;
      }
    }
    if (auto v = m->integer("min_runtime_rows", Need::kRequired, 1, limits::kRows)) {
      out.min_runtime_rows = static_cast<int>(*v);
    }
    m->finish();
  }
  if (auto m = root.table("meta", Need::kOptional)) {
    m->string_list("sources");
    m->string_list("assumptions");
    m->finish();
  }
  root.finish();
  const toml::node* node = table.get("group");
  if (node == nullptr) {
    return;  // no groups: the band carries no model error
  }
  const toml::array* groups = node->as_array();
  if (groups == nullptr) {
    diags.add(pos_of(*node), "group", "expected an array of tables ([[group]])");
    return;
  }
  for (std::size_t i = 0; i < groups->size(); ++i) {
    const toml::table* t = groups->get(i)->as_table();
    if (t == nullptr) {
      diags.add(pos_of(*groups->get(i)), "group", "expected a table ([[group]])");
      continue;
    }
    Reader r(*t, "group[" + std::to_string(i) + "]", diags);
    workload::ModelErrorGroup g;
    read_group(r, out, runtimes, g);
    const bool twice = std::any_of(out.groups.begin(), out.groups.end(), [&g](const workload::ModelErrorGroup& o) {
      return o.job == g.job && o.metric == g.metric && o.runtime == g.runtime;
    });
    if (twice) {
      r.error("runtime", "a second group for " + std::string(base::name_in(workload::kJobKindNames, g.job)) + " " +
                             base::name_in(workload::kMetricFamilyNames, g.metric) + " on " +
                             (g.runtime.empty() ? std::string("every runtime") : g.runtime));
    }
    out.groups.push_back(std::move(g));
  }
}

}  // namespace gpusim::parse
