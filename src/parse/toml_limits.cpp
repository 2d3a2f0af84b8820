// The bounds on what reaches toml++ (contract in internal.hpp).
#include <vector>

#include "parse/internal.hpp"

namespace gpusim::parse {

using base::strfmt;

// What reaches toml++ is bounded: toml++ 3.3 recurses once per key segment and per nested array or
// inline table, so one 60,000-segment dotted key overflows the stack (SIGSEGV) before it can report
// anything. No gpusim file comes near these limits; a file past one is refused with its position.
constexpr std::size_t kMaxLineBytes = 64 * 1024;
constexpr int kMaxKeySegments = 64;  // a.b.c... in one key or [header]
constexpr int kMaxNesting = 64;      // arrays and inline tables inside one another

// The first place `text` passes a limit, outside strings and comments; nullopt when none. Dots
// count as key segments only in key position: in a [header], or before a line's (or an inline
// table item's) '='; a float's dot is in value position.
std::optional<Diagnostic> past_limits(std::string_view text, const std::string& path) {
  int line = 1;
  int column = 0;
  std::vector<char> open;  // the '[' and '{' of values, innermost last
  bool in_key = true;
  int segments = 1;
  char quote = 0;  // the open string's quote, 0 outside strings
  bool triple = false;
  std::size_t line_start = 0;
  auto at = [&](const std::string& what) { return Diagnostic{SourcePos{path, line, column}, "", what}; };
  auto starts = [&](std::size_t i, char q) { return text.substr(i, 3) == std::string(3, q); };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    ++column;
    if (c == '\n') {
      if (i - line_start > kMaxLineBytes) {
        return at(strfmt("a line longer than %zu bytes: not a gpusim file", kMaxLineBytes));
      }
      ++line;
      column = 0;
      line_start = i + 1;
      if (quote != 0 && !triple) {
        quote = 0;  // an unclosed one-line string: toml++ reports it
      }
      if (quote == 0 && open.empty()) {
        in_key = true;
        segments = 1;
      }
      continue;
    }
    if (quote != 0) {
      if (c == '\\' && quote == '"') {
        ++i;  // an escaped character, an escaped quote included
        ++column;
      } else if (c == quote && (!triple || starts(i, quote))) {
        i += triple ? 2 : 0;
        quote = 0;
      }
      continue;
    }
    switch (c) {
      case '#':
        while (i + 1 < text.size() && text[i + 1] != '\n') {
          ++i;
        }
        break;
      case '"':
      case '\'':
        quote = c;
        triple = starts(i, c);
        i += triple ? 2 : 0;
        break;
      case '.':
        if (in_key && ++segments > kMaxKeySegments) {
          return at(strfmt("a key of more than %d dotted parts: not a gpusim file", kMaxKeySegments));
        }
        break;
      case '=':
        in_key = false;
        segments = 1;
        break;
      case '[':
      case '{':
        if (!in_key || c == '{') {  // a '[' in key position opens a [header], not a value
          open.push_back(c);
          if (static_cast<int>(open.size()) > kMaxNesting) {
            return at(strfmt("arrays or tables nested more than %d deep: not a gpusim file", kMaxNesting));
          }
          in_key = c == '{';
          segments = 1;
        }
        break;
      case ']':
      case '}':
        if (!open.empty() && !(in_key && c == ']')) {
          open.pop_back();
        }
        break;
      case ',':
        if (!open.empty()) {
          in_key = open.back() == '{';  // the next item of an inline table is a key again
          segments = 1;
        }
        break;
      default:
        break;
    }
  }
  if (text.size() - line_start > kMaxLineBytes) {
    return at(strfmt("a line longer than %zu bytes: not a gpusim file", kMaxLineBytes));
  }
  return std::nullopt;
}

}  // namespace gpusim::parse
