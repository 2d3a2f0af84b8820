// Leave-one-publication-out cross-validation [stone-1974]: each publication's rows are predicted by
// the model as it would stand had that publication never been read, and only those predictions
// are scored. A model judged on the rows its values were fitted to looks better than it is; this
// is the figure that says how it does on a publication it has not seen.
//
// For each publication P:
//  1. Every spec value whose line names a row of P (docs/measurements.md, "Role"; spec_lines) is
//     taken back to the value a sibling spec holds without P: a GPU's to its architecture's
//     default, else to the median over the GPUs of its architecture, else over all GPUs; an
//     architecture's, runtime's, link's (and so on) to the median over the other files of its kind.
//     The median is taken over the values as written and keeps one of them (no new number).
//  2. What calibration can fit of those values is fitted again on the fit rows of every other
//     publication (`calibrate` restricted to the scopes taken back): efficiencies, latencies and
//     power activities per GPU and architecture, a runtime's remainder.
//  3. P's rows are predicted under that catalog.
// A value with no sibling to fall back to stays as shipped; the fold lists it, and the rows it was
// fitted on are left out of the summaries (they are not held out). A publication no spec value names is predicted by
// the shipped specs, which never saw it.
//
// Each held-out scenario row carries the band of its figure as an estimate would, with nothing of
// its publication in it either: the spec ranges around the held-out prediction, and the model's
// error as quantiles of the held-out residuals of every other publication's rows (model_error.cpp),
// the jackknife+ interval in its K-fold form (CV+) [barber-jackknife-2021] with publications as the folds. Its coverage
// is the band's honest one: the quantiles in the shipped model-error file come from these very
// rows, so `gpusim validate` judges them in-sample.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "gpusim/validation.hpp"

namespace gpusim::validation {

namespace {

using catalog::SpecKind;
using Key = std::tuple<SpecKind, std::string, std::string>;  // kind, spec id, table.key

// A value as written, in SI units when it carries one: "0.94" -> 0.94, "\"0.46 us\"" -> 4.6e-7.
std::optional<double> numeric(const std::string& text) {
  std::string t = text;
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') {
    t = t.substr(1, t.size() - 2);
  }
  try {
    std::size_t used = 0;
    const double v = std::stod(t, &used);
    if (used == t.size()) {
      return v;
    }
    const units::ParsedQuantity q = units::parse_quantity(t);
    return q.si;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The lower median of the candidates by value, as written; nullopt when none is numeric.
std::optional<std::string> median_text(const std::vector<std::string>& texts) {
  std::vector<std::pair<double, std::string>> v;
  for (const std::string& t : texts) {
    if (const auto x = numeric(t)) {
      v.emplace_back(*x, t);
    }
  }
  if (v.empty()) {
    return std::nullopt;
  }
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2].second;
}

bool names_any(const SpecLine& l, const std::set<std::string>& ids) {
  return std::any_of(l.rows.begin(), l.rows.end(), [&ids](const std::string& r) { return ids.count(r) != 0; });
}

struct Fallbacks {
  const catalog::Catalog& catalog;
  const std::map<Key, const SpecLine*>& values;
  const std::set<std::string>& left_out;  // the publication's row ids
  std::map<Key, std::string> taken;       // values already taken back in this fold

  // The value of (kind, id, key) without the publication: taken back, kept, or none.
  [[nodiscard]] std::optional<std::string> standing(SpecKind kind, const std::string& id,
                                                    const std::string& key) const {
    if (const auto t = taken.find({kind, id, key}); t != taken.end()) {
      return t->second;
    }
    const auto it = values.find({kind, id, key});
    if (it == values.end() || names_any(*it->second, left_out)) {
      return std::nullopt;
    }
    return it->second->value;
  }

  [[nodiscard]] std::optional<std::string> median_over(SpecKind kind, const std::string& key, const std::string& self,
                                                       const std::optional<hardware::Arch>& arch) const {
    std::vector<std::string> texts;
    for (const std::string& other : catalog.ids(kind)) {
      if (other == self) {
        continue;
      }
      if (arch) {
        try {
          if (catalog.gpu(other).arch != *arch) {
            continue;
          }
        } catch (const InputError&) {
          continue;
        }
      }
      if (const auto v = standing(kind, other, key)) {
        texts.push_back(*v);
      }
    }
    return median_text(texts);
  }

  // Numbers only: a name, an id or a switch has no sibling that could stand in for it.
  [[nodiscard]] std::optional<std::string> prior(const SpecLine& l) const {
    if (!numeric(l.value)) {
      return std::nullopt;
    }
    if (l.kind == SpecKind::kGpu) {
      std::optional<hardware::Arch> arch;
      try {
        arch = catalog.gpu(l.id).arch;
      } catch (const InputError&) {
        return std::nullopt;
      }
      if (const auto v = standing(SpecKind::kArch, hardware::to_string(*arch), l.key); v && numeric(*v)) {
        return v;
      }
      if (const auto v = median_over(SpecKind::kGpu, l.key, l.id, arch)) {
        return v;
      }
    }
    return median_over(l.kind, l.key, l.id, std::nullopt);
  }
};

// A patch file over spec (kind, id) setting the given keys ("table.key" or top-level "key").
std::string patch_text(const std::string& id, const std::map<std::string, std::string>& keys) {
  std::string top = "base = \"" + id + "\"\n";
  std::map<std::string, std::string> tables;
  for (const auto& [key, value] : keys) {
    const std::size_t dot = key.rfind('.');
    if (dot == std::string::npos) {
      top += key + " = " + value + "\n";
    } else {
      tables[key.substr(0, dot)] += key.substr(dot + 1) + " = " + value + "\n";
    }
  }
  for (const auto& [table, body] : tables) {
    top += "\n[" + table + "]\n" + body;
  }
  return top;
}

Key key_of_scope(const FittedParam& p) {
  const std::string key = p.table + "." + p.key;
  if (p.scope.rfind("arch:", 0) == 0) {
    return {SpecKind::kArch, p.scope.substr(5), key};
  }
  if (p.scope.rfind("runtime:", 0) == 0) {
    return {SpecKind::kRuntime, p.scope.substr(8), key};
  }
  return {SpecKind::kGpu, p.scope, key};
}

std::string scope_of(const Key& k) {
  switch (std::get<0>(k)) {
    case SpecKind::kArch:
      return "arch:" + std::get<1>(k);
    case SpecKind::kRuntime:
      return "runtime:" + std::get<1>(k);
    default:
      return std::get<1>(k);
  }
}

// The model's error in each held-out row's band, from the residuals of the other publications'
// rows; and the groups of every row's residual (what the shipped file should hold). The coverage
// and the smallest runtime group are the shipped file's; without one the bands keep their ranges.
void add_model_error(CrossValidation& cv, const std::map<std::string, std::vector<std::size_t>>& by_publication,
                     const workload::ModelError& shipped) {
  if (shipped.coverage <= 0) {
    return;
  }
  std::vector<RowResult>& rows = cv.held_out.rows;
  std::vector<std::optional<Residual>> residuals(rows.size());
  std::vector<Residual> all;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    residuals[i] = residual_of(rows[i]);
    if (residuals[i]) {
      all.push_back(*residuals[i]);
    }
  }
  cv.model_error = model_error_of(all, shipped.coverage, shipped.min_runtime_rows);
  cv.held_out.band_basis = BandBasis::kHeldOut;
  for (const auto& [publication, members] : by_publication) {
    std::vector<Residual> others;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (residuals[i] && rows[i].measurement->publication != publication) {
        others.push_back(*residuals[i]);
      }
    }
    const workload::ModelError without = model_error_of(others, shipped.coverage, shipped.min_runtime_rows);
    for (const std::size_t i : members) {
      RowResult& rr = rows[i];
      const auto band = answer::band_index(rr.measurement->metric);
      if (!rr.prediction.band || !rr.prediction.value || !band || rr.kind == RowKind::kMicrobenchmark) {
        continue;
      }
      const workload::JobKind job =
          rr.kind == RowKind::kTraining ? workload::JobKind::kTraining : workload::JobKind::kServing;
      const answer::ErrorFamily f = answer::error_family(job, answer::kBandKeys[*band].time);
      if (const auto* g = without.find(job, f.metric, rr.runtime_named ? rr.runtime : std::string())) {
        const double y = *rr.prediction.value;
        rr.prediction.band = answer::widen(*rr.prediction.band, y, answer::model_error_deviation(y, *g, f.flip));
      }
    }
  }
}

}  // namespace

CrossValidation cross_validate(const std::vector<Measurement>& rows, const catalog::Catalog& catalog) {
  CrossValidation cv;
  cv.shipped = validate(resolve(rows, catalog));
  cv.shipped.all_roles = true;  // summarized over the same rows as the held-out report
  summarize_rows(cv.shipped);
  cv.held_out = cv.shipped;
  cv.held_out.cross_validated = true;

  std::set<std::string> ids;
  std::map<std::string, std::vector<std::size_t>> by_publication;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ids.insert(rows[i].id);
    by_publication[rows[i].publication].push_back(i);
  }
  const std::vector<SpecLine> lines = spec_lines(catalog, ids);
  std::map<Key, const SpecLine*> values;  // the top layer's line wins, as in the catalog
  for (const SpecLine& l : lines) {
    // The [uncertainty] ranges never enter a prediction: nothing to take back there.
    if (!l.key.empty() && l.key.rfind("uncertainty.", 0) != 0) {
      values[{l.kind, l.id, l.key}] = &l;
    }
  }

  // The rows of a publication predicted under `cat` with the bands of their figures: the spec
  // ranges alone, the model's error being added below from the other publications' rows.
  auto predict_held_out = [&](const std::vector<std::size_t>& members, const catalog::Catalog& cat) {
    std::vector<Measurement> own;
    for (const std::size_t i : members) {
      own.push_back(rows[i]);
    }
    std::vector<Subject> subjects = resolve(own, cat);
    for (Subject& sub : subjects) {
      if (sub.scenario) {
        sub.scenario->model_error = nullptr;
      }
    }
    std::vector<Prediction> predictions = predict_all(subjects, true);
    std::vector<RowResult> out;
    for (std::size_t j = 0; j < subjects.size(); ++j) {
      out.push_back(row_result(subjects[j], std::move(predictions[j])));
      out.back().measurement = &rows[members[j]];
    }
    return out;
  };

  for (const auto& [publication, members] : by_publication) {
    std::set<std::string> left_out;
    for (const std::size_t i : members) {
      left_out.insert(rows[i].id);
    }
    std::vector<const SpecLine*> cited;
    for (const auto& [k, l] : values) {
      if (names_any(*l, left_out)) {
        cited.push_back(l);
      }
    }
    if (cited.empty()) {
      // The shipped specs never saw it: its rows as shipped, with their bands.
      std::vector<RowResult> results = predict_held_out(members, catalog);
      for (std::size_t j = 0; j < members.size(); ++j) {
        cv.held_out.rows[members[j]] = std::move(results[j]);
      }
      continue;
    }
    // Architectures first: a GPU's value falls back to its architecture's as taken back.
    std::stable_sort(cited.begin(), cited.end(), [](const SpecLine* a, const SpecLine* b) {
      return (a->kind == SpecKind::kArch) > (b->kind == SpecKind::kArch);
    });
    Fold fold{publication, static_cast<int>(members.size()), {}};
    Fallbacks fb{catalog, values, left_out, {}};
    for (const SpecLine* l : cited) {
      TakenBack t{l->kind, l->id, l->key, l->value, "", std::nullopt};
      if (const auto p = fb.prior(*l)) {
        t.prior = *p;
        fb.taken[{l->kind, l->id, l->key}] = *p;
      }
      fold.taken_back.push_back(std::move(t));
    }
    catalog::Catalog held = catalog;
    std::map<std::pair<SpecKind, std::string>, std::map<std::string, std::string>> patches;
    std::set<std::string> scopes;
    for (const auto& [k, text] : fb.taken) {
      patches[{std::get<0>(k), std::get<1>(k)}][std::get<2>(k)] = text;
      scopes.insert(scope_of(k));
    }
    for (const auto& [spec, keys] : patches) {
      held.add_file(
          spec.first, spec.second,
          catalog::SpecFile{"<cross-validation without " + publication + ">/" +
                                base::name_in(catalog::kSpecFolders, spec.first) + "/" + spec.second + ".toml",
                            patch_text(spec.second, keys)});
    }
    // Fit again, on the other publications' fit rows, what calibration can of what was taken back.
    std::vector<Measurement> others;
    for (const Measurement& m : rows) {
      if (m.publication != publication) {
        others.push_back(m);
      }
    }
    std::vector<FittedParam> refits;
    if (!scopes.empty()) {
      for (const FittedParam& p : calibrate(others, held, scopes).params) {
        const Key k = key_of_scope(p);
        if (fb.taken.count(k) == 0) {
          continue;  // a value this publication never set keeps its shipped value
        }
        for (TakenBack& t : fold.taken_back) {
          if (t.kind == std::get<0>(k) && t.id == std::get<1>(k) && t.key == std::get<2>(k)) {
            t.refit = p.value;
          }
        }
        refits.push_back(p);
      }
    }
    const catalog::Catalog without = with_overlay(held, refits);
    // Rows behind a value that could not be taken back are not held out.
    std::map<std::string, std::string> kept_on;  // row id -> the value kept
    for (const SpecLine* l : cited) {
      if (fb.taken.count({l->kind, l->id, l->key}) == 0) {
        for (const std::string& id : l->rows) {
          if (left_out.count(id) != 0 && kept_on.count(id) == 0) {
            kept_on[id] = std::string(base::name_in(catalog::kSpecFolders, l->kind)) + "/" + l->id + " " + l->key;
          }
        }
      }
    }
    std::vector<RowResult> results = predict_held_out(members, without);
    for (std::size_t j = 0; j < members.size(); ++j) {
      RowResult& rr = results[j];
      if (const auto k = kept_on.find(rows[members[j]].id); k != kept_on.end()) {
        rr.not_held_out = k->second;
      }
      cv.held_out.rows[members[j]] = std::move(rr);
    }
    cv.folds.push_back(std::move(fold));
  }
  add_model_error(cv, by_publication, *catalog.model_error());
  summarize_rows(cv.held_out);
  return cv;
}

}  // namespace gpusim::validation
