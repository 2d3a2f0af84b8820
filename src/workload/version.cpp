// Runtime releases and the ranges of them a runtime file models (gpusim/workload/runtime.hpp;
// format in specs/README.md, `versions`; a measurement row's `runtime_version` in
// docs/measurements.md).
#include <algorithm>
#include <cctype>
#include <limits>

#include "gpusim/workload.hpp"

namespace gpusim::workload {

namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Reads "N(.N)*" from `text` at `at`; false (and `at` where it stopped) when it does not start
// with a digit, a component is empty, or one exceeds what an int holds.
bool read_components(std::string_view text, std::size_t& at, std::vector<int>& out) {
  while (true) {
    if (at >= text.size() || !is_digit(text[at])) {
      return false;
    }
    long long n = 0;
    while (at < text.size() && is_digit(text[at])) {
      n = n * 10 + (text[at] - '0');
      if (n > std::numeric_limits<int>::max()) {
        return false;
      }
      ++at;
    }
    out.push_back(static_cast<int>(n));
    // A dot followed by a digit continues the release; anything else ends it.
    if (at + 1 < text.size() && text[at] == '.' && is_digit(text[at + 1])) {
      ++at;
      continue;
    }
    return true;
  }
}

// -1, 0 or 1 as `a` compares with `b` on b's components (a padded with zeros).
int compare_on(const std::vector<int>& a, const std::vector<int>& b) {
  for (std::size_t i = 0; i < b.size(); ++i) {
    const int x = i < a.size() ? a[i] : 0;
    if (x != b[i]) {
      return x < b[i] ? -1 : 1;
    }
  }
  return 0;
}

// A plain bound of a range: components and nothing else.
std::optional<std::vector<int>> parse_bound(std::string_view text) {
  std::vector<int> out;
  std::size_t at = 0;
  if (!read_components(text, at, out) || at != text.size()) {
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<std::vector<int>> parse_version(std::string_view text) {
  std::size_t at = 0;
  if (!text.empty() && (text[0] == 'v' || text[0] == 'V')) {
    at = 1;
  }
  std::vector<int> out;
  if (!read_components(text, at, out)) {
    return std::nullopt;
  }
  // Suffixes as PEP 440 spells them (and projects that follow it): a pre-, post- or dev-release
  // word with its number, each after an optional separator ("rc1", ".post3", "-rc1", ".dev174"),
  // then an optional local part after '+' ("+cu124").
  static constexpr std::string_view kWords[] = {"preview", "alpha", "beta", "post", "pre", "rev",
                                                "dev",     "rc",    "a",    "b",    "c",   "r"};
  while (at < text.size() && text[at] != '+') {
    if (text[at] == '.' || text[at] == '-' || text[at] == '_') {
      ++at;
    }
    const std::string_view rest = text.substr(at);
    const auto word = std::find_if(std::begin(kWords), std::end(kWords),
                                   [&](std::string_view w) { return rest.substr(0, w.size()) == w; });
    if (word == std::end(kWords)) {
      return std::nullopt;
    }
    at += word->size();
    while (at < text.size() && is_digit(text[at])) {
      ++at;
    }
  }
  if (at < text.size()) {  // '+': a local part of letters, digits and dots
    ++at;
    if (at == text.size()) {
      return std::nullopt;
    }
    for (; at < text.size(); ++at) {
      if (!is_alnum(text[at]) && text[at] != '.') {
        return std::nullopt;
      }
    }
  }
  return out;
}

std::optional<VersionRange> parse_version_range(std::string_view text) {
  VersionRange r;
  r.text = std::string(text);
  const std::size_t dash = text.find('-');
  if (dash == std::string_view::npos) {  // a series: "0.3" is 0.3 up to every 0.3.x
    auto series = parse_bound(text);
    if (!series) {
      return std::nullopt;
    }
    r.min = *series;
    r.max = *series;
    return r;
  }
  auto lo = parse_bound(text.substr(0, dash));
  if (!lo) {
    return std::nullopt;
  }
  r.min = *lo;
  const std::string_view rest = text.substr(dash + 1);
  if (rest.empty()) {
    return r;
  }
  auto hi = parse_bound(rest);
  // The lower bound is the least release the range could cover: above the upper, none is.
  if (!hi || compare_on(*lo, *hi) > 0) {
    return std::nullopt;
  }
  r.max = *hi;
  return r;
}

bool VersionRange::covers(const std::vector<int>& release) const {
  if (!stated()) {
    return true;
  }
  return compare_on(release, min) >= 0 && (max.empty() || compare_on(release, max) <= 0);
}

}  // namespace gpusim::workload
