// A grid of scenario variants: the file is parsed once, each point resolved with its overrides
// (the catalog remembers resolved specs) and estimated without advice. A point that cannot run
// carries its reason instead of an estimate.
#include <sstream>

#include "gpusim/search.hpp"

namespace gpusim::search {

Axis parse_axis(const std::string& text) {
  const auto eq = text.find('=');
  Axis a;
  if (eq != std::string::npos && eq > 0) {
    a.key = text.substr(0, eq);
    std::stringstream ss(text.substr(eq + 1));
    for (std::string v; std::getline(ss, v, ',');) {
      if (!v.empty()) {
        a.values.push_back(v);
      }
    }
  }
  if (a.key.empty() || a.values.empty()) {
    throw InputError({Diagnostic{SourcePos{"--vary " + text}, "",
                                 "expected KEY=V1,V2,... with at least one value (e.g. system.gpus=8,16,32)"}});
  }
  return a;
}

std::size_t grid_size(const std::vector<Axis>& axes) {
  std::size_t n = axes.empty() ? 0 : 1;
  for (const auto& a : axes) {
    n *= a.values.size();
  }
  return n;
}

std::vector<SweepPoint> sweep(const catalog::Catalog& catalog, const scenario::ParsedScenario& parsed,
                              const std::vector<scenario::Override>& fixed, const std::vector<Axis>& axes,
                              const SweepOptions& options) {
  const std::size_t points = grid_size(axes);
  const auto shard = static_cast<std::size_t>(options.shard);
  const auto shards = static_cast<std::size_t>(options.shards);
  const std::size_t mine = points > shard ? (points - shard + shards - 1) / shards : 0;
  std::vector<SweepPoint> out;
  out.reserve(mine);
  std::vector<scenario::Override> o = fixed;
  for (std::size_t i = shard; i < points; i += shards) {
    o.resize(fixed.size());
    SweepPoint p;
    std::size_t rest = i;
    for (const auto& a : axes) {
      const std::string& v = a.values[rest % a.values.size()];
      rest /= a.values.size();
      o.push_back(scenario::Override{a.key, v});
      p.values.push_back(v);
    }
    try {
      p.estimate = answer::estimate(scenario::resolve(catalog, parsed, o), answer::Options{false});
    } catch (const InputError& e) {
      p.problem = e.first_message();
    }
    out.push_back(std::move(p));
    if (options.progress) {
      options.progress(out.size(), mine);
    }
  }
  return out;
}

}  // namespace gpusim::search
