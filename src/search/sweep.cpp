// A grid of scenario variants: the file is parsed once, each point resolved with its overrides
// (scenario::Variants: rebuilt from earlier points' parts where the keys allow it) and estimated
// without advice or per-op shares, with the kernel tables of nearby points shared. A point that
// cannot run carries its reason instead of an estimate. The grid is bounded before any work, and
// its points are handed on one at a time.
#include <limits>
#include <optional>
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

std::optional<std::uint64_t> grid_points(const std::vector<Axis>& axes) {
  std::uint64_t n = axes.empty() ? 0 : 1;
  for (const auto& a : axes) {
    const auto values = static_cast<std::uint64_t>(a.values.size());
    if (values != 0 && n > std::numeric_limits<std::uint64_t>::max() / values) {
      return std::nullopt;
    }
    n *= values;
  }
  return n;
}

std::uint64_t shard_points(std::uint64_t points, int shard, int shards) {
  const auto first = static_cast<std::uint64_t>(shard);
  const auto step = static_cast<std::uint64_t>(shards);
  return points > first ? (points - first - 1) / step + 1 : 0;
}

void check_grid(const std::vector<Axis>& axes, const SweepOptions& options) {
  const std::optional<std::uint64_t> points = grid_points(axes);
  const bool counted = points.has_value();
  const std::uint64_t all = points.value_or(0);
  const std::uint64_t mine = shard_points(all, options.shard, options.shards);
  if (counted && mine <= options.max_points) {
    return;
  }
  std::string sizes;
  double approx = 1;
  for (const auto& a : axes) {
    sizes += (sizes.empty() ? "" : " x ") + std::to_string(a.values.size());
    approx *= static_cast<double>(a.values.size());
  }
  std::string count =
      counted ? std::to_string(all) + " points" : base::strfmt("about %.3g points, more than 64 bits count", approx);
  if (counted && options.shards > 1) {
    count += base::strfmt(", of which shard %d/%d has %llu", options.shard, options.shards,
                          static_cast<unsigned long long>(mine));
  }
  throw InputError({Diagnostic{SourcePos{"--vary"}, "",
                               "the grid has " + count + " (" + sizes + " values), more than the limit of " +
                                   std::to_string(options.max_points) +
                                   " points a sweep estimates in one run; narrow the --vary lists, " +
                                   "split the grid with --shard I/N, or raise the limit with --max-points N (at most " +
                                   std::to_string(kMaxSweepPointsLimit) + ")"}});
}

void sweep(const catalog::Catalog& catalog, const scenario::ParsedScenario& parsed,
           const std::vector<scenario::Override>& fixed, const std::vector<Axis>& axes, const SweepOptions& options,
           const std::function<void(const SweepPoint&)>& visit) {
  check_grid(axes, options);
  const std::uint64_t points = grid_points(axes).value_or(0);
  const auto shard = static_cast<std::uint64_t>(options.shard);
  const auto shards = static_cast<std::uint64_t>(options.shards);
  const auto mine = static_cast<std::size_t>(shard_points(points, options.shard, options.shards));
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;
  for (const auto& a : axes) {
    keys.push_back(a.key);
    values.push_back(a.values);
  }
  scenario::Variants variants(catalog, parsed, fixed, std::move(keys), std::move(values));
  std::vector<std::size_t> choice(axes.size());
  std::size_t done = 0;
  // Points that differ in what no kernel sum reads (GPU count, data parallelism, ZeRO, prices...)
  // share their kernel tables (step::TableCache: the same numbers as without it). The cache starts
  // afresh every kPointsPerCache points, so memory stays bounded however long the grid.
  constexpr std::size_t kPointsPerCache = 1024;
  std::optional<step::TableCache> tables;
  for (std::uint64_t i = shard; i < points; i += shards) {
    if (done % kPointsPerCache == 0) {
      tables.emplace();
    }
    SweepPoint p;
    std::uint64_t rest = i;
    for (std::size_t k = 0; k < axes.size(); ++k) {
      choice[k] = static_cast<std::size_t>(rest % axes[k].values.size());
      rest /= axes[k].values.size();
      p.values.push_back(axes[k].values[choice[k]]);
    }
    if (const scenario::Scenario* sc = variants.find(choice, p.problem); sc != nullptr) {
      try {
        answer::Options estimate;
        estimate.advice = false;
        estimate.op_shares = false;
        estimate.tables = &*tables;
        p.estimate = answer::estimate(*sc, estimate);
      } catch (const InputError& e) {
        p.problem = e.first_message();
      }
    }
    visit(p);
    ++done;
    if (options.progress) {
      options.progress(done, mine);
    }
  }
}

std::vector<SweepPoint> sweep(const catalog::Catalog& catalog, const scenario::ParsedScenario& parsed,
                              const std::vector<scenario::Override>& fixed, const std::vector<Axis>& axes,
                              const SweepOptions& options) {
  check_grid(axes, options);
  std::vector<SweepPoint> out;
  out.reserve(static_cast<std::size_t>(shard_points(grid_points(axes).value_or(0), options.shard, options.shards)));
  sweep(catalog, parsed, fixed, axes, options, [&out](const SweepPoint& p) { out.push_back(p); });
  return out;
}

}  // namespace gpusim::search
