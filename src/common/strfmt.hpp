// Private: printf-style formatting into a std::string (messages, advice, reports).
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace gpusim::detail {

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
inline std::string
strfmt(const char* f, ...) {
  va_list ap;
  va_start(ap, f);
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(nullptr, 0, f, copy);
  va_end(copy);
  std::string out(n > 0 ? static_cast<std::size_t>(n) : 0U, '\0');
  if (n > 0) {
    std::vsnprintf(out.data(), out.size() + 1, f, ap);
  }
  va_end(ap);
  return out;
}

}  // namespace gpusim::detail
