// Private to src/parse/: what the spec readers (hardware_specs.cpp, runtime_specs.cpp), the TOML
// reader (reader.cpp, toml_limits.cpp) and the config.json reader (hf_config.cpp, json_scan.cpp) share.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "parse/parse.hpp"

namespace gpusim::parse {

// The first place `text` passes a limit of what reaches toml++ (toml_limits.cpp), outside strings
// and comments; nullopt when none. With `comments`, also the byte ranges [first, second) of the
// comment bodies (after the '#', before the line break) that toml++ would accept as they are, in a
// text that is all well-formed UTF-8 (none otherwise).
std::optional<Diagnostic> past_limits(std::string_view text, const std::string& path,
                                      std::vector<std::pair<std::size_t, std::size_t>>* comments = nullptr);
// `text` without the given comment bodies (each '#' kept, and every line break): what toml++ makes
// of it is what it makes of `text`, every position included.
std::string without_comments(std::string_view text, const std::vector<std::pair<std::size_t, std::size_t>>& comments);

// Reads a quantity into a typed value, leaving it as it was when absent or bad.
template <class Q>
void set_q(Reader& r, std::string_view key, units::Dim dim, Q& out, Need need = Need::kRequired,
           Range range = Range::kPositive) {
  if (auto v = r.quantity(key, dim, need, range)) {
    out = Q(*v);
  }
}

// HF configs nest a few levels (rope_scaling, task_specific_params); deeper is not a config.
constexpr int kMaxJsonNesting = 64;

// 1-based line and column of byte `offset` of `text`.
SourcePos position(std::string_view text, std::size_t offset, const std::string& path);

// Byte offsets of a JSON text's top-level keys (the last of duplicates wins, as in nlohmann), the
// first nesting past kMaxJsonNesting and the first number a double cannot hold (json_scan.cpp).
struct Scan {
  std::map<std::string, std::size_t, std::less<>> keys;
  std::optional<std::size_t> too_deep;
  std::optional<std::pair<std::size_t, std::string>> overflow;  // offset, the number as written
};
Scan scan(std::string_view text);

}  // namespace gpusim::parse
