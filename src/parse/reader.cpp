// TOML reading with positions (contract in parse.hpp).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include "parse/internal.hpp"

namespace gpusim::parse {

using base::strfmt;
using units::Dim;
using units::ParsedQuantity;
using units::UnitError;

SourcePos pos_of(const toml::source_region& r) {
  SourcePos p;
  if (r.path) {
    p.file = *r.path;
  }
  // Command-line overrides are parsed from a one-line snippet: its columns mean nothing to the user.
  if (p.file.rfind("--set ", 0) != 0) {
    p.line = static_cast<int>(r.begin.line);
    p.column = static_cast<int>(r.begin.column);
  }
  return p;
}

SourcePos pos_of(const toml::node& n) { return pos_of(n.source()); }

std::optional<toml::table> parse_toml(std::string_view text, const std::string& path, Diagnostics& diags) {
  // Comment bodies are half the bytes of a spec file and half of toml++'s time on it; those it
  // would accept as they are go before it parses (every position stays where it was).
  std::vector<std::pair<std::size_t, std::size_t>> comments;
  if (const auto d = past_limits(text, path, &comments)) {
    diags.add(d->pos, d->key, d->message);
    return std::nullopt;
  }
  try {
    if (!comments.empty()) {
      return toml::parse(without_comments(text, comments), path);
    }
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    diags.add(pos_of(e.source()), "", "TOML syntax error: " + std::string(e.description()));
    return std::nullopt;
  }
}

// Files are read up to kMaxFileBytes: gpusim's largest (a measurement file) is a few hundred KB,
// and a device such as /dev/zero or a mistaken multi-GB path must end in an error, not a hang.
constexpr std::streamsize kMaxFileBytes = 16 * 1024 * 1024;

std::string read_file(const std::string& path, const char* what) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    // The operating system's reason ("No such file or directory", "Permission denied"), when the
    // open failed in it; a folder opens but cannot be read.
    const int why = errno;
    std::error_code ec;
    const std::string reason = std::filesystem::is_directory(path, ec) ? "it is a directory"
                               : why != 0                              ? std::generic_category().message(why)
                                                                       : "it cannot be opened";
    throw InputError({Diagnostic{SourcePos{path}, "", std::string("cannot read ") + what + ": " + reason}});
  }
  // Read in blocks until the end, at most one byte past the limit: a file costs its own size,
  // not the limit's, and a pipe or a device is read the same way.
  constexpr std::size_t kBlock = 64 * 1024;
  std::string text;
  while (in && text.size() <= static_cast<std::size_t>(kMaxFileBytes)) {
    const std::size_t at = text.size();
    const std::size_t want = std::min(kBlock, static_cast<std::size_t>(kMaxFileBytes) + 1 - at);
    text.resize(at + want);
    in.read(text.data() + at, static_cast<std::streamsize>(want));
    text.resize(at + static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) {
    std::error_code ec;
    throw InputError(
        {Diagnostic{SourcePos{path}, "",
                    std::string("cannot read ") + what +
                        (std::filesystem::is_directory(path, ec) ? ": it is a directory" : ": reading it failed")}});
  }
  if (text.size() > static_cast<std::size_t>(kMaxFileBytes)) {
    throw InputError({Diagnostic{
        SourcePos{path}, "",
        strfmt("larger than %lld MiB: not a gpusim %s", static_cast<long long>(kMaxFileBytes >> 20), what)}});
  }
  return text;
}

void merge_under(toml::table& over, toml::table&& under) {
  for (auto it = under.begin(); it != under.end(); ++it) {
    const toml::key& k = it->first;
    toml::node& v = it->second;
    toml::node* mine = over.get(k.str());
    if (mine == nullptr) {
      v.visit([&over, &k](auto&& x) { over.insert_or_assign(k, std::move(x)); });
    } else if (mine->is_table() && v.is_table()) {
      merge_under(*mine->as_table(), std::move(*v.as_table()));
    }
  }
}

Reader::Reader(const toml::table& table, std::string prefix, Diagnostics& diags)
    : table_(&table), prefix_(std::move(prefix)), diags_(&diags) {}

std::string Reader::path(std::string_view key) const {
  return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
}

SourcePos Reader::where(std::string_view key) const {
  if (const toml::node* n = table_->get(key)) {
    return pos_of(*n);
  }
  return pos_of(*table_);
}

void Reader::error(std::string_view key, const std::string& message) { diags_->add(where(key), path(key), message); }

std::string Reader::show(const toml::node& n) {
  std::ostringstream os;
  if (n.is_string()) {
    os << '"' << n.as_string()->get() << '"';
  } else if (n.is_table()) {
    os << "a table";
  } else if (n.is_array()) {
    os << "an array";
  } else if (n.is_floating_point()) {
    os << n.as_floating_point()->get();
  } else {
    n.visit([&os](const auto& v) { os << v; });
  }
  return os.str();
}

const toml::node* Reader::get(std::string_view key, Need need) {
  know(key);
  const toml::node* n = table_->get(key);
  if (n == nullptr && need == Need::kRequired) {
    diags_->add(pos_of(*table_), path(key), "missing required key");
  }
  return n;
}

namespace {
std::string range_problem(double v, Range range) {
  switch (range) {
    case Range::kAny:
      return {};
    case Range::kPositive:
      return v > 0 ? std::string() : "must be greater than zero";
    case Range::kNonNegative:
      return v >= 0 ? std::string() : "must not be negative";
    case Range::kFraction:
      return (v > 0 && v <= 1) ? std::string() : "must be a fraction in (0, 1]";
  }
  return {};
}

std::string magnitude_problem(double v, Dim dim) {
  const units::Magnitudes m = units::accepted_magnitudes(dim);
  if (v == 0 || (std::fabs(v) >= m.lo && std::fabs(v) <= m.hi)) {
    return {};
  }
  if (v < 0) {
    return std::string("must be between -") + m.hi_text + " and -" + m.lo_text;
  }
  return std::string("must be between ") + m.lo_text + " and " + m.hi_text;
}
}  // namespace

std::optional<double> Reader::quantity(std::string_view key, Dim dim, Need need, Range range) {
  const toml::node* n = get(key, need);
  if (n == nullptr) {
    return std::nullopt;
  }
  if (!n->is_string()) {
    error(key, "expected " + describe(dim) + " (a string with its unit), got " + show(*n));
    return std::nullopt;
  }
  try {
    const double v = parse_si(n->as_string()->get(), dim);
    std::string problem = range_problem(v, range);
    if (problem.empty()) {
      problem = magnitude_problem(v, dim);
    }
    if (problem.empty()) {
      problem = declared_range_problem(key, v);
    }
    if (!problem.empty()) {
      error(key, problem + ", got " + show(*n));
      return std::nullopt;
    }
    return v;
  } catch (const UnitError& e) {
    error(key, e.what());
    return std::nullopt;
  }
}

std::optional<double> Reader::number(std::string_view key, Need need, Range range, double max) {
  const toml::node* n = get(key, need);
  if (n == nullptr) {
    return std::nullopt;
  }
  std::optional<double> v;
  if (n->is_floating_point()) {
    v = n->as_floating_point()->get();
  } else if (n->is_integer()) {
    v = static_cast<double>(n->as_integer()->get());
  }
  if (!v || !std::isfinite(*v)) {
    error(key, "expected a plain number, got " + show(*n));
    return std::nullopt;
  }
  std::string problem = range_problem(*v, range);
  if (problem.empty()) {
    problem = declared_range_problem(key, *v);
  }
  if (!problem.empty()) {
    error(key, problem + ", got " + show(*n));
    return std::nullopt;
  }
  if (std::fabs(*v) > max) {
    std::string bound = base::strfmt("%g", max);  // %g's 1e+06 is written 1e6, as docs/scenarios.md has it
    if (const auto e = bound.find("e+"); e != std::string::npos) {
      const auto digits = bound.find_first_not_of('0', e + 2);
      bound.erase(e + 1, digits - e - 1);
    }
    error(key, "must be at most " + bound + ", got " + show(*n));
    return std::nullopt;
  }
  return v;
}

std::optional<std::int64_t> Reader::integer(std::string_view key, Need need, std::int64_t min, std::int64_t max) {
  const toml::node* n = get(key, need);
  if (n == nullptr) {
    return std::nullopt;
  }
  std::optional<std::int64_t> v;
  if (n->is_integer()) {
    v = n->as_integer()->get();
  } else if (n->is_floating_point()) {  // allow 2e12 style counts when they are whole numbers
    v = whole_number(n->as_floating_point()->get());
  }
  std::string problem = count_problem(v, min, max);
  if (problem.empty()) {
    problem = declared_range_problem(key, static_cast<double>(*v));
  }
  if (!problem.empty()) {
    error(key, problem + ", got " + show(*n));
    return std::nullopt;
  }
  return v;
}

std::optional<std::int64_t> whole_number(double d) {
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18) {
    return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

std::string count_problem(std::optional<std::int64_t> v, std::int64_t min, std::int64_t max) {
  if (!v) {
    return "expected a whole number";
  }
  if (*v < min || *v > max) {
    return "must be between " + std::to_string(min) + " and " + std::to_string(max);
  }
  return {};
}

std::optional<bool> Reader::boolean(std::string_view key, Need need) {
  const toml::node* n = get(key, need);
  if (n == nullptr) {
    return std::nullopt;
  }
  if (!n->is_boolean()) {
    error(key, "expected true or false, got " + show(*n));
    return std::nullopt;
  }
  return n->as_boolean()->get();
}

std::optional<std::string> Reader::string(std::string_view key, Need need) {
  const toml::node* n = get(key, need);
  if (n == nullptr) {
    return std::nullopt;
  }
  if (!n->is_string()) {
    error(key, "expected a string, got " + show(*n));
    return std::nullopt;
  }
  return n->as_string()->get();
}

std::vector<std::string> Reader::string_list(std::string_view key) {
  std::vector<std::string> out;
  const toml::node* n = get(key, Need::kOptional);
  if (n == nullptr) {
    return out;
  }
  const toml::array* arr = n->as_array();
  if (arr == nullptr) {
    error(key, "expected an array of strings, got " + show(*n));
    return out;
  }
  for (const auto& e : *arr) {
    if (!e.is_string()) {
      diags_->add(pos_of(e), path(key), "expected a string, got " + show(e));
      continue;
    }
    out.push_back(e.as_string()->get());
  }
  return out;
}

std::vector<std::int64_t> Reader::integer_list(std::string_view key, Need need, std::int64_t min, std::int64_t max) {
  std::vector<std::int64_t> out;
  const toml::node* n = get(key, need);
  if (n == nullptr) {
    return out;
  }
  const toml::array* arr = n->as_array();
  if (arr == nullptr || arr->empty()) {
    error(key, "expected a non-empty array of whole numbers, got " + show(*n));
    return out;
  }
  for (const auto& e : *arr) {
    std::optional<std::int64_t> v;
    if (e.is_integer()) {
      v = e.as_integer()->get();
    }
    if (const std::string problem = count_problem(v, min, max); !problem.empty()) {
      diags_->add(pos_of(e), path(key), problem + ", got " + show(e));
      continue;
    }
    out.push_back(*v);
  }
  return out;
}

std::optional<double> Reader::latency_seconds(std::string_view key, double clock_hz, Need need) {
  const toml::node* n = get(key, need);
  if (n == nullptr) {
    return std::nullopt;
  }
  if (!n->is_string()) {
    error(key, "expected a latency like \"478 ns\" or \"34 cycles\", got " + show(*n));
    return std::nullopt;
  }
  try {
    const ParsedQuantity q = units::parse_quantity(n->as_string()->get());
    double seconds = 0;
    if (q.dim == Dim::kTime) {
      seconds = q.si;
    } else if (q.dim == Dim::kCycles && clock_hz > 0) {
      seconds = q.si / clock_hz;
    } else if (q.dim == Dim::kCycles) {
      return std::nullopt;  // no clock to count them with: the clock's own diagnostic says why
    } else {
      error(key, "expected a latency like \"478 ns\" or \"34 cycles\", got " + show(*n));
      return std::nullopt;
    }
    if (seconds <= 0) {
      error(key, "must be greater than zero, got " + show(*n));
      return std::nullopt;
    }
    std::string problem = magnitude_problem(q.si, q.dim);
    if (problem.empty()) {
      problem = declared_range_problem(key, seconds);
    }
    if (!problem.empty()) {
      error(key, problem + ", got " + show(*n));
      return std::nullopt;
    }
    return seconds;
  } catch (const UnitError& e) {
    error(key, std::string("expected a latency like \"478 ns\" or \"34 cycles\", got ") + e.what());
    return std::nullopt;
  }
}

std::optional<Reader> Reader::table(std::string_view key, Need need) {
  const toml::node* n = get(key, need);
  if (n == nullptr) {
    return std::nullopt;
  }
  if (!n->is_table()) {
    error(key, "expected a table, got " + show(*n));
    return std::nullopt;
  }
  Reader child(*n->as_table(), path(key), *diags_);
  child.elsewhere_ = elsewhere_;
  child.ranges_ = ranges_;
  return child;
}

void Reader::allow(std::initializer_list<std::string_view> keys) {
  for (auto k : keys) {
    know(k);
  }
}

std::vector<std::string_view> Reader::known_keys() const {
  std::vector<std::string_view> out;
  for (std::size_t at = 0; at < known_.size();) {
    const std::size_t end = known_.find('\0', at);
    out.push_back(std::string_view(known_).substr(at, end - at));
    at = end + 1;
  }
  return out;
}

void Reader::finish() {
  const std::vector<std::string_view> known = known_keys();
  std::vector<std::string_view> names;  // the known keys sorted, once each (for suggestions)
  for (const auto& [k, v] : *table_) {
    if (std::find(known.begin(), known.end(), k.str()) != known.end()) {
      continue;
    }
    // An unknown key: the suggestions go through the known keys in order, once each.
    if (names.empty()) {
      names = known;
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
    }
    std::string message = "unknown key";
    std::size_t best = 3;  // suggest only close spellings
    for (const std::string_view cand : names) {
      const std::size_t d = base::edit_distance(k.str(), cand);
      if (d < best) {
        best = d;
        message = "unknown key (did you mean \"" + std::string(cand) + "\"?)";
      }
    }
    if (elsewhere_) {
      if (const std::string there = elsewhere_(prefix_, k.str()); !there.empty()) {
        message = "unknown key here: \"" + std::string(k.str()) + "\" belongs in " + there;
      }
    }
    // Keys inserted by --set carry no position of their own; their value does.
    diags_->add(k.source().begin.line > 0 ? pos_of(k.source()) : pos_of(v), path(k.str()), message);
  }
}

}  // namespace gpusim::parse
