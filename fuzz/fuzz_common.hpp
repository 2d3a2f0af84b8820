// Shared by the fuzz targets: the contract every input must keep. An input either loads or raises
// the project's InputError; anything else (another exception, a signal, a sanitizer report) is a
// bug libFuzzer reports. An estimate that loads has no NaN, infinity or negative number.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>

#include "gpusim/gpusim.hpp"

namespace gpusim::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Aborts (a finding) when a report field is not finite or is negative.
inline void check_report(const answer::Estimate& e) {
  for (const answer::Field& f : answer::report_fields(e)) {
    if (const double* v = std::get_if<double>(&f.value)) {
      if (!std::isfinite(*v) || *v < 0) {
        std::fprintf(stderr, "report field %s.%s = %g breaks the contract\n", f.section, f.key, *v);
        std::abort();
      }
    }
  }
}

inline const Catalog& catalog() {
  static const Catalog c = Catalog::builtin();
  return c;
}

}  // namespace gpusim::fuzz
