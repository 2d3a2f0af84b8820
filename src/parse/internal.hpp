// Private to src/parse/: what the spec readers (hardware_specs.cpp, runtime_specs.cpp) and the
// TOML reader (reader.cpp, toml_limits.cpp) share.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "parse/parse.hpp"

namespace gpusim::parse {

// The first place `text` passes a limit of what reaches toml++ (toml_limits.cpp), outside strings
// and comments; nullopt when none.
std::optional<Diagnostic> past_limits(std::string_view text, const std::string& path);

// Reads a quantity into a typed value, leaving it as it was when absent or bad.
template <class Q>
void set_q(Reader& r, std::string_view key, units::Dim dim, Q& out, Need need = Need::kRequired,
           Range range = Range::kPositive) {
  if (auto v = r.quantity(key, dim, need, range)) {
    out = Q(*v);
  }
}

}  // namespace gpusim::parse
