// The keys of a training runtime spec that describe its training loop rather than its kernels
// (format in specs/README.md): the loss computed in chunks over the logits, and the defaults of
// the recipes the runtime ships ([recipe], [recipe.<method>], [recipe.<method>.single_device]),
// which a scenario's [training] inherits for every key it leaves out.
#include "parse/parse.hpp"

namespace gpusim::parse {

namespace {

void read_defaults(Reader& r, workload::RecipeDefaults& d) {
  d.master_weights = r.boolean("master_weights", Need::kOptional);
  d.optimizer = r.choice("optimizer", workload::kOptimizerNames, Need::kOptional);
  d.optimizer_states = r.choice("optimizer_states", workload::kStatePrecisionNames, Need::kOptional);
  d.paged_optimizer = r.boolean("paged_optimizer", Need::kOptional);
  d.optimizer_in_backward = r.boolean("optimizer_in_backward", Need::kOptional);
  d.recompute = r.choice("recompute", workload::kRecomputeNames, Need::kOptional);
  d.lora_rank = r.integer("lora_rank", Need::kOptional, 1, limits::kWidth);
  d.lora_targets = r.choice("lora_targets", workload::kLoraTargetNames, Need::kOptional);
}

}  // namespace

void read_loss_settings(Reader& r, workload::Runtime& rt) {
  // Optional in spec files too: a runtime that states nothing computes the loss over all logits.
  if (auto v = r.integer("loss_chunks", Need::kOptional, 1, limits::kSequence)) {
    rt.loss_chunks = *v;
  }
}

void read_recipe(Reader& r, workload::Runtime& rt) {
  read_defaults(r, rt.recipe.all);
  for (const auto& [method, name] : workload::kMethodNames) {
    const auto i = static_cast<std::size_t>(method);
    if (auto m = r.table(name, Need::kOptional)) {
      read_defaults(*m, rt.recipe.method[i]);
      if (auto one = m->table("single_device", Need::kOptional)) {
        read_defaults(*one, rt.recipe.single_device[i]);
        one->finish();
      }
      m->finish();
    }
  }
  r.finish();
}

}  // namespace gpusim::parse
