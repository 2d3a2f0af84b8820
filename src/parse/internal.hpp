// Private to src/parse/: what the spec readers (hardware_specs.cpp, runtime_specs.cpp) share.
#pragma once

#include <string_view>

#include "parse/parse.hpp"

namespace gpusim::parse {

// Reads a quantity into a typed value, leaving it as it was when absent or bad.
template <class Q>
void set_q(Reader& r, std::string_view key, units::Dim dim, Q& out, Need need = Need::kRequired,
           Range range = Range::kPositive) {
  if (auto v = r.quantity(key, dim, need, range)) {
    out = Q(*v);
  }
}

}  // namespace gpusim::parse
