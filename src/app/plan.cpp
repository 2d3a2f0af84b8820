// The plan command (include/gpusim/app.hpp): a training scenario's layouts (search::plan) or a
// serving scenario's deployments (search::plan_serving), after the request's checks.
#include <algorithm>

#include "gpusim/app.hpp"

namespace gpusim::app {

void check(const PlanRequest& r) {
  if (!base::value_in(search::kObjectiveNames, r.objective)) {
    throw RequestError(
        "objective", "must be one of " + base::quoted_names(search::kObjectiveNames) + ", got \"" + r.objective + "\"");
  }
  if (r.top < 1 || r.top > search::kMaxPlanTop) {
    throw RequestError(
        "top", "must be between 1 and " + std::to_string(search::kMaxPlanTop) + ", got " + std::to_string(r.top));
  }
  if (r.max_gpus < 0 || r.max_gpus > search::kMaxPlanGpus) {
    throw RequestError("max_gpus", "must be between 0 and " + std::to_string(search::kMaxPlanGpus) + ", got " +
                                       std::to_string(r.max_gpus));
  }
  for (const std::string& f : r.formats) {
    if (f.empty()) {
      throw RequestError("formats", "has an empty name");
    }
  }
}

namespace {

// Nothing meets the SLO in the formats searched: the first other format, the fewest bits lost
// first (8-bit before 4-bit), with which a deployment on the same GPU budget would.
void suggest_format(const scenario::Scenario& sc, const search::PlanOptions& o, search::ServingPlanResult& r) {
  std::vector<const scenario::WeightFormat*> others;
  bool own_ggml = false;
  for (const scenario::WeightFormat& f : scenario::weight_formats()) {
    own_ggml = own_ggml || (f.name == sc.job.inference->weight_format && f.ggml_block);
  }
  for (const scenario::WeightFormat& f : scenario::weight_formats()) {
    const bool searched = std::find(r.formats.begin(), r.formats.end(), f.name) != r.formats.end();
    if (!searched && (own_ggml || !f.ggml_block) && sc.system.gpu.supports(f.compute)) {
      others.push_back(&f);
    }
  }
  std::stable_sort(others.begin(), others.end(),
                   [](const scenario::WeightFormat* a, const scenario::WeightFormat* b) { return a->bits > b->bits; });
  search::PlanOptions one = o;
  one.progress = nullptr;
  for (const scenario::WeightFormat* f : others) {
    r.more_formats_tried = true;
    one.formats = {std::string(f->name)};
    if (search::plan_serving(sc, one).meeting > 0) {
      r.meets_with_format = std::string(f->name);
      return;
    }
  }
}

}  // namespace

PlanAnswer plan(const catalog::Catalog& catalog, const PlanRequest& r) {
  check(r);
  PlanAnswer a{
      scenario::resolve(catalog, parse(r.scenario), scenario::parse_overrides(r.sets, r.unsets), r.gpu), {}, {}, {}};
  search::PlanOptions& o = a.options;
  o.objective = *base::value_in(search::kObjectiveNames, r.objective);
  o.top = r.top;
  o.max_gpus = r.max_gpus;
  if (a.scenario.job.inference) {
    o.formats = r.formats;
    o.progress = r.progress;
    a.serving = search::plan_serving(a.scenario, o);
    // Nothing meets the SLO: the smallest larger GPU budget that would (each search a few tenths of
    // a second), so that the answer names the change that helps.
    if (a.serving->meeting == 0 && a.scenario.slo) {
      int searched = std::max(a.scenario.system.gpus, o.max_gpus);
      search::PlanOptions more = o;
      more.progress = nullptr;
      for (int g = 2 * searched; g <= search::kMaxSuggestedServingGpus; g *= 2) {
        a.serving->more_gpus_tried = true;
        more.max_gpus = g;
        if (search::plan_serving(a.scenario, more).meeting > 0) {
          a.serving->meets_with_max_gpus = g;
          break;
        }
      }
      suggest_format(a.scenario, o, *a.serving);
    }
    return a;
  }
  if (!r.formats.empty()) {
    throw RequestError("formats", "apply to serving scenarios; this scenario trains");
  }
  a.training = search::plan(a.scenario, o);
  return a;
}

}  // namespace gpusim::app
