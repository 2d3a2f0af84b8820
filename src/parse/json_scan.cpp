// The scan of a config.json's text made before nlohmann parses it (contract in internal.hpp):
// nlohmann keeps no positions, so the keys' offsets, too deep a nesting and a number past a double's
// range are found here, each with the byte where it starts.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "parse/internal.hpp"

namespace gpusim::parse {

// 1-based line and column of byte `offset` of `text`.
SourcePos position(std::string_view text, std::size_t offset, const std::string& path) {
  offset = std::min(offset, text.size());
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return SourcePos{path, line, static_cast<int>(offset - line_start) + 1};
}

Scan scan(std::string_view text) {
  Scan out;
  std::string open;
  bool key_next = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      std::size_t j = i + 1;
      bool escaped = false;
      while (j < text.size() && text[j] != '"') {
        escaped = escaped || text[j] == '\\';
        j += text[j] == '\\' ? 2 : 1;
      }
      if (key_next && open == "{" && !escaped && j < text.size()) {
        out.keys.insert_or_assign(std::string(text.substr(i + 1, j - i - 1)), i);
      }
      key_next = false;
      i = j;
      continue;
    }
    switch (c) {
      case '{':
      case '[':
        open.push_back(c);
        if (open.size() > static_cast<std::size_t>(kMaxJsonNesting)) {
          out.too_deep = i;
          return out;
        }
        key_next = c == '{';
        break;
      case '}':
      case ']':
        if (!open.empty()) {
          open.pop_back();
        }
        key_next = false;
        break;
      case ',':
        key_next = !open.empty() && open.back() == '{';
        break;
      default:
        if (c == '-' || (c >= '0' && c <= '9')) {
          const std::size_t end = std::min(text.find_first_not_of("0123456789+-.eE", i), text.size());
          std::string number(text.substr(i, end - i));
          if (!out.overflow && !std::isfinite(std::strtod(number.c_str(), nullptr))) {
            out.overflow = std::pair{i, std::move(number)};
          }
          i = end - 1;
        }
        break;
    }
  }
  return out;
}

}  // namespace gpusim::parse
