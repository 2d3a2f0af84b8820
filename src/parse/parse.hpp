// Validated reading of one TOML table (private to src/: toml++ types never leave the parsers).
// Contract: every accessor records its key as known; a missing required key, a value of the
// wrong type, a quantity with a wrong or missing unit, or a value out of range adds a
// Diagnostic with file:line:col, the full key path and the bad value, and returns nullopt.
// finish() reports every key that no accessor asked for (typos never become silent defaults).
#pragma once

#include <toml++/toml.h>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpusim/spec/diagnostics.hpp"
#include "gpusim/units/parse.hpp"

namespace gpusim::detail {

SourcePos pos_of(const toml::source_region& r);
SourcePos pos_of(const toml::node& n);

// Parses TOML text; syntax errors become one Diagnostic each (toml++ stops at the first).
std::optional<toml::table> parse_toml(std::string_view text, const std::string& path, Diagnostics& diags);

enum class Need { kRequired, kOptional };
enum class Range { kAny, kPositive, kNonNegative, kFraction };  // kFraction: 0 < x <= 1

class Reader {
 public:
  Reader(const toml::table& table, std::string prefix, Diagnostics& diags);

  std::optional<double> quantity(std::string_view key, Dim dim, Need need, Range range = Range::kPositive);
  std::optional<double> number(std::string_view key, Need need, Range range = Range::kPositive);
  std::optional<std::int64_t> integer(std::string_view key, Need need, std::int64_t min = 1);
  std::optional<bool> boolean(std::string_view key, Need need);
  std::optional<std::string> string(std::string_view key, Need need);
  // A string from a closed set; the message lists the choices.
  std::optional<std::string> choice(std::string_view key, std::initializer_list<std::string_view> options, Need need);
  std::vector<std::string> string_list(std::string_view key);
  // A latency given either in time units or in cycles; cycles are converted with `clock`.
  std::optional<double> latency_seconds(std::string_view key, double clock_hz, Need need);
  // A nested table; nullopt (with a diagnostic if required) when absent.
  std::optional<Reader> table(std::string_view key, Need need);
  // Mark keys as known without reading them (e.g. "base", "meta").
  void allow(std::initializer_list<std::string_view> keys);
  void finish();

  [[nodiscard]] bool has(std::string_view key) const { return table_->contains(key); }
  // Whether `key` holds exactly this string (for keys that take a number or a keyword).
  [[nodiscard]] bool string_value_is(std::string_view key, std::string_view word) const {
    const auto* v = table_->get_as<std::string>(key);
    return v != nullptr && v->get() == word;
  }
  [[nodiscard]] std::string path(std::string_view key) const;
  [[nodiscard]] SourcePos where(std::string_view key) const;
  void error(std::string_view key, const std::string& message);
  [[nodiscard]] Diagnostics& diagnostics() const { return *diags_; }

 private:
  const toml::node* get(std::string_view key, Need need);
  static std::string show(const toml::node& n);

  const toml::table* table_;
  std::string prefix_;
  Diagnostics* diags_;
  std::set<std::string, std::less<>> known_;
};

}  // namespace gpusim::detail
