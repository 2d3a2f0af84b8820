// The roofline command (include/gpusim/app.hpp): a GPU's roofs (explain::make_roofline), several
// GPUs' together, or a scenario's step on its GPU's roofs. The highlighted dtype defaults to the
// step's dtype with a scenario, else to bf16,
// and on a GPU without bf16 (Volta, Turing) to its 16-bit format, fp16; a dtype asked for by name
// must be one the GPU computes in.
#include <algorithm>

#include "gpusim/app.hpp"
#include "gpusim/scenario.hpp"
#include "gpusim/step.hpp"

namespace gpusim::app {

std::vector<explain::Roofline> roofline(const catalog::Catalog& catalog, const RooflineRequest& request) {
  const RooflineRequest& r = request;
  if (r.gpu.empty() && r.gpus.empty() && !r.scenario) {
    throw RequestError("", "needs a GPU, several GPUs or a scenario");
  }
  if (!r.gpus.empty() && (!r.gpu.empty() || r.scenario)) {
    throw RequestError("gpus", "draws roofs only: it takes no gpu and no scenario");
  }
  if (!r.sets.empty() && !r.scenario) {
    throw RequestError("sets", "apply to a scenario; none was given");
  }
  if (!r.variant.identity() && !r.gpus.empty()) {
    throw RequestError("gpu_variant", "applies to one GPU; several were given");
  }
  check(r.variant);
  const std::vector<DType> roofs = {DType::kFp64, DType::kFp32, DType::kTf32, DType::kFp16,
                                    DType::kBf16, DType::kFp8,  DType::kFp4};
  const std::string asked = r.dtype.value_or("bf16");
  const auto highlight = base::value_in(units::kDTypeNames, asked);
  if (!highlight || std::find(roofs.begin(), roofs.end(), *highlight) == roofs.end()) {
    throw RequestError("dtype",
                       "must be one of " + base::quoted_names(units::kDTypeNames, roofs) + ", got \"" + asked + "\"");
  }
  auto highlight_for = [&](const hardware::GpuSpec& g) {
    if (g.supports(*highlight)) {
      return *highlight;
    }
    if (!r.dtype && g.supports(DType::kFp16)) {
      return DType::kFp16;
    }
    throw RequestError("", "the " + g.name + " has no " + asked + " support");
  };
  std::vector<explain::Roofline> out;
  for (const std::string& id : r.gpus) {
    const hardware::GpuSpec g = catalog.gpu(id);
    out.push_back(explain::make_roofline(g, nullptr, highlight_for(g)));
  }
  if (!r.gpus.empty()) {
    return out;
  }
  if (!r.scenario) {
    const hardware::GpuSpec g =
        r.variant.identity() ? catalog.gpu(r.gpu) : with_gpu_variant(catalog, r.gpu, r.variant).gpu(r.gpu);
    out.push_back(explain::make_roofline(g, nullptr, highlight_for(g)));
    return out;
  }
  const scenario::ParsedScenario parsed = parse(*r.scenario);
  const std::vector<scenario::Override> sets = scenario::parse_overrides(r.sets, r.unsets);
  scenario::Scenario sc = scenario::resolve(catalog, parsed, sets, r.gpu);
  if (!r.variant.identity()) {
    sc = scenario::resolve(with_gpu_variant(catalog, sc.system.gpu.id, r.variant), parsed, sets, r.gpu);
  }
  const step::Evaluation eval = step::evaluate(sc, step::Options{true});
  // The step's ops run in its own dtype: its roof is the one highlighted unless another is asked for.
  const DType shown = !r.dtype && sc.system.gpu.supports(eval.dtype) ? eval.dtype : highlight_for(sc.system.gpu);
  out.push_back(explain::make_roofline(sc.system.gpu, &eval, shown));
  out.back().run = explain::Roofline::Run{sc.system.gpus, sc.layout, sc.runtime.name, eval.dtype};
  return out;
}

}  // namespace gpusim::app
