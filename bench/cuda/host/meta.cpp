// [meta] helpers (see meta.hpp).
#include "gpusim_bench/meta.hpp"

#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace gpusim::bench {

std::string cuda_version_string(int version) {
  if (version < 0) {
    throw std::invalid_argument("negative CUDA version");
  }
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string year_month(std::time_t t) {
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) {
    throw std::invalid_argument("time out of range");
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d", tm.tm_year + 1900, tm.tm_mon + 1);
  return buf;
}

std::string parse_proc_driver_version(std::string_view text) {
  // The version is the first token of digits and dots (with at least one dot) after "Module".
  const std::size_t module = text.find("Module");
  if (module == std::string_view::npos) {
    return "";
  }
  // Only the "NVRM version" line: the next one names the compiler and its version.
  text = text.substr(0, text.find('\n', module));
  std::size_t i = module + 6;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
    }
    std::size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) {
      ++j;
    }
    const std::string_view token = text.substr(i, j - i);
    bool numeric = !token.empty() && std::isdigit(static_cast<unsigned char>(token.front())) != 0;
    for (char c : token) {
      numeric = numeric && (std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.');
    }
    if (numeric && token.find('.') != std::string_view::npos) {
      return std::string(token);
    }
    if (token.empty()) {
      break;
    }
    i = j;
  }
  return "";
}

}  // namespace gpusim::bench
