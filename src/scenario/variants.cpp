// A scenario over a grid of values of a few keys (contract in scenario.hpp). Each combination is
// what resolve() gives for it. Resolving reads every table of the file for every combination; for
// a training scenario whose varied keys are its GPU count, layout or batch, almost all of that
// reading gives the same result each time. So a combination is resolved from the file until each
// of its values has been read once, and the others are rebuilt from the parts those resolves read:
//  - a key's value as the loader read it (its type and range checked there);
//  - for each GPU count: the node shape (GPUs and NICs per node) and the [cost] figures, the only
//    parts of [system] and [cost] that depend on it (system.cpp);
//  - for each runtime id: the runtime with the scenario's settings applied (runtime.cpp), which
//    reads no varied key;
//  - what the resolve read beside the scenario (detail::Trace): [training]'s recipe keys and
//    switches, and whether [parallelism] and its data key are there.
// The rules that depend on the varied keys are the loader's own functions, run again on each
// rebuilt combination: the default data degree and the layout rules (check_parallel), the default
// runtime, the recipe's defaults (apply_recipe) and the rules across tables (check_across). They
// report into a scratch list. A combination that breaks one of them would report those problems,
// and no others, when resolved: find() gives the first of them as it is; at() resolves the
// combination from the file, so that its messages carry their positions.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "scenario/internal.hpp"

namespace gpusim::scenario {

namespace {

enum class Key { kGpus, kMicroBatch, kGlobalBatch, kPrecision, kTensor, kPipeline, kData, kZero };
constexpr base::Named<Key> kKeyNames[] = {{Key::kGpus, "system.gpus"},
                                          {Key::kMicroBatch, "training.micro_batch"},
                                          {Key::kGlobalBatch, "training.global_batch"},
                                          {Key::kPrecision, "training.precision"},
                                          {Key::kTensor, "parallelism.tensor"},
                                          {Key::kPipeline, "parallelism.pipeline"},
                                          {Key::kData, "parallelism.data"},
                                          {Key::kZero, "parallelism.zero"}};

std::int64_t value_of(const Scenario& sc, Key k) {
  switch (k) {
    case Key::kGpus:
      return sc.system.gpus;
    case Key::kMicroBatch:
      return sc.layout.micro_batch;
    case Key::kGlobalBatch:
      return sc.job.training->global_batch;
    case Key::kPrecision:
      return static_cast<std::int64_t>(sc.job.training->precision);
    case Key::kTensor:
      return sc.layout.tensor;
    case Key::kPipeline:
      return sc.layout.pipeline;
    case Key::kData:
      return sc.layout.data;
    case Key::kZero:
      return sc.layout.zero;
  }
  return 0;
}

// Values come from a resolved scenario, where the loader kept them in these fields' types.
void set_value(Scenario& sc, Key k, std::int64_t v) {
  switch (k) {
    case Key::kGpus:
      sc.system.gpus = static_cast<int>(v);
      break;
    case Key::kMicroBatch:
      sc.layout.micro_batch = v;
      break;
    case Key::kGlobalBatch:
      sc.job.training->global_batch = v;
      break;
    case Key::kPrecision:
      sc.job.training->precision = static_cast<DType>(v);
      break;
    case Key::kTensor:
      sc.layout.tensor = static_cast<int>(v);
      break;
    case Key::kPipeline:
      sc.layout.pipeline = static_cast<int>(v);
      break;
    case Key::kData:
      sc.layout.data = static_cast<int>(v);
      break;
    case Key::kZero:
      sc.layout.zero = static_cast<int>(v);
      break;
  }
}

// What [system] and [cost] resolve to for one GPU count.
struct Sized {
  int gpus_per_node = 0;
  int nics_per_node = 0;
  cost::CostConfig cost;
  std::optional<hardware::System> cloud_system;
};

}  // namespace

struct Variants::Impl {
  const catalog::Catalog* catalog;
  std::string path;
  std::shared_ptr<ParsedScenario::Tree> tree;
  std::vector<Override> fixed;
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;
  std::vector<Key> typed;  // the keys as rebuildable ones (all of them when `rebuildable`)
  bool rebuildable = false;

  std::size_t resolved = 0;
  Scenario last;                                               // the last combination resolved from the file
  std::optional<Scenario> work;                                // the rebuilt combination, from the first one resolved
  detail::Trace trace;                                         // of that resolve
  std::vector<std::vector<std::optional<std::int64_t>>> read;  // [key][value]: as resolved
  std::map<int, Sized> by_gpus;
  std::map<std::string, workload::Runtime, std::less<>> runtimes;
  int sized_gpus = 0;          // the count work's node shape and cost are for
  toml::table scratch_tables;  // empty [training] and [parallelism] for the rules' readers
  Diagnostics scratch;

  Impl(const catalog::Catalog& c, std::string p, std::shared_ptr<ParsedScenario::Tree> t, std::vector<Override> f,
       std::vector<std::string> k, std::vector<std::vector<std::string>> v)
      : catalog(&c),
        path(std::move(p)),
        tree(std::move(t)),
        fixed(std::move(f)),
        keys(std::move(k)),
        values(std::move(v)) {
    read.resize(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      read[i].resize(values[i].size());
    }
    rebuildable = true;
    for (const auto& key : keys) {
      const auto known = base::value_in(kKeyNames, key);
      // A key given twice is resolved as the loader takes it (the later one wins), not rebuilt.
      const bool again = known && std::find(typed.begin(), typed.end(), *known) != typed.end();
      rebuildable = rebuildable && known && !again;
      if (rebuildable) {
        typed.push_back(*known);
      }
    }
    scratch_tables.insert("training", toml::table{});
    scratch_tables.insert("parallelism", toml::table{});
  }

  // The combination resolved from the file, or null with its problems in `problems`.
  const Scenario* from_file(const std::vector<std::size_t>& choice, Diagnostics& problems) {
    std::vector<Override> o = fixed;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      o.push_back(Override{keys[i], values[i][choice[i]]});
    }
    detail::Trace t;
    ++resolved;
    std::optional<Scenario> sc = detail::resolve_traced(*catalog, path, *tree, o, t, problems);
    if (!sc) {
      return nullptr;
    }
    last = std::move(*sc);
    if (!rebuildable || !last.job.training) {
      rebuildable = false;
      return &last;
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
      read[i][choice[i]] = value_of(last, typed[i]);
    }
    by_gpus.try_emplace(last.system.gpus,
                        Sized{last.system.gpus_per_node, last.system.nics_per_node, last.cost, last.cloud_system});
    runtimes.try_emplace(last.runtime.id, last.runtime);
    if (!work) {
      work = last;
      trace = std::move(t);
      sized_gpus = last.system.gpus;
    }
    return &last;
  }

  // The combination rebuilt in `work`. kBroken: a rule failed, its problems in `scratch` as a
  // resolve reports them, without their positions. Each value passed every rule that depends on it
  // alone in some resolve, so a resolve of this combination would report these problems and no
  // others, in the same order.
  enum class Rebuilt { kYes, kBroken, kNotYet };
  Rebuilt rebuild(const std::vector<std::size_t>& choice) {
    if (!rebuildable || !work) {
      return Rebuilt::kNotYet;
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!read[i][choice[i]]) {
        return Rebuilt::kNotYet;
      }
    }
    Scenario& sc = *work;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      set_value(sc, typed[i], *read[i][choice[i]]);
    }
    if (sc.system.gpus != sized_gpus) {
      const auto it = by_gpus.find(sc.system.gpus);
      if (it == by_gpus.end()) {
        sc.system.gpus = sized_gpus;  // put back: nothing else has changed for this count yet
        return Rebuilt::kNotYet;
      }
      sc.system.gpus_per_node = it->second.gpus_per_node;
      sc.system.nics_per_node = it->second.nics_per_node;
      sc.cost = it->second.cost;
      sc.cloud_system = it->second.cloud_system;
      sized_gpus = sc.system.gpus;
    }
    // The loader's order: [parallelism], the runtime and its recipe, then the rules across tables.
    parse::Reader root(scratch_tables, "", scratch);
    if (trace.parallel_table) {
      parse::Reader parallel(*scratch_tables["parallelism"].as_table(), "parallelism", scratch);
      detail::check_parallel(parallel, sc, trace.data_given);
    } else {
      sc.layout.data = sc.system.gpus;
    }
    if (sc.unset.runtime) {
      const std::string id = detail::default_runtime(sc);
      if (id != sc.runtime.id) {
        const auto it = runtimes.find(id);
        if (it == runtimes.end()) {
          scratch = Diagnostics{};
          return Rebuilt::kNotYet;
        }
        sc.runtime = it->second;
      }
    }
    detail::apply_recipe(sc, trace.overrides.training);
    detail::check_across(root, scratch, sc, trace.overrides);
    return scratch.empty() ? Rebuilt::kYes : Rebuilt::kBroken;
  }

  void check_choice(const std::vector<std::size_t>& choice) const {
    if (choice.size() != keys.size()) {
      throw std::invalid_argument("Variants: one choice per key");
    }
    for (std::size_t i = 0; i < choice.size(); ++i) {
      if (choice[i] >= values[i].size()) {
        throw std::out_of_range("Variants: a choice past its key's values");
      }
    }
  }
};

Variants::Variants(const catalog::Catalog& catalog, ParsedScenario parsed, std::vector<Override> fixed,
                   std::vector<std::string> keys, std::vector<std::vector<std::string>> values) {
  if (keys.size() != values.size()) {
    throw std::invalid_argument("Variants: one list of values per key");
  }
  impl_ = std::make_unique<Impl>(catalog, parsed.path(), parsed.tree_, std::move(fixed), std::move(keys),
                                 std::move(values));
}

Variants::~Variants() = default;
Variants::Variants(Variants&&) noexcept = default;
Variants& Variants::operator=(Variants&&) noexcept = default;

const Scenario& Variants::at(const std::vector<std::size_t>& choice) {
  Impl& m = *impl_;
  m.check_choice(choice);
  if (m.rebuild(choice) == Impl::Rebuilt::kYes) {
    return *m.work;
  }
  m.scratch = Diagnostics{};  // a broken combination is resolved for its problems' positions
  Diagnostics problems;
  const Scenario* sc = m.from_file(choice, problems);
  if (sc == nullptr) {
    problems.throw_if_any();
  }
  return *sc;
}

const Scenario* Variants::find(const std::vector<std::size_t>& choice, std::string& problem) {
  Impl& m = *impl_;
  m.check_choice(choice);
  switch (m.rebuild(choice)) {
    case Impl::Rebuilt::kYes:
      return &*m.work;
    case Impl::Rebuilt::kBroken:
      problem = m.scratch.first_message();
      m.scratch = Diagnostics{};
      return nullptr;
    case Impl::Rebuilt::kNotYet:
      break;
  }
  Diagnostics problems;
  const Scenario* sc = m.from_file(choice, problems);
  if (sc == nullptr) {
    problem = problems.first_message();
  }
  return sc;
}

std::size_t Variants::resolved() const { return impl_->resolved; }

}  // namespace gpusim::scenario
