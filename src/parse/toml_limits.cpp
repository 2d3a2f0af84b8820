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

namespace {

// The length of the well-formed UTF-8 sequence of a code point from U+0080 at b[i] (RFC 3629,
// section 4: no overlong form, no surrogate, at most U+10FFFF); 0 where there is none.
std::size_t sequence_at(const unsigned char* b, std::size_t i, std::size_t n) {
  const unsigned c = b[i];
  std::size_t len = 0;
  unsigned lo = 0x80;  // the allowed range of the second byte
  unsigned hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    lo = c == 0xE0 ? 0xA0 : 0x80;
    hi = c == 0xED ? 0x9F : 0xBF;  // ED A0-BF: a surrogate
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    lo = c == 0xF0 ? 0x90 : 0x80;
    hi = c == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;  // ASCII, a continuation byte, or a byte that starts no sequence
  }
  if (i + len > n || b[i + 1] < lo || b[i + 1] > hi) {
    return 0;
  }
  for (std::size_t k = 2; k < len; ++k) {
    if (b[i + k] < 0x80 || b[i + k] > 0xBF) {
      return 0;
    }
  }
  return len;
}

// Whether toml++ 3.3 takes a comment body as it is: TOML 1.0 allows in a comment any Unicode scalar
// value but the control characters other than tab (U+0000-U+0008, U+000A-U+001F, U+007F) and, as
// toml++ reads it, no surrogate (U+D800-U+DFFF). This accepts printable ASCII, tab and well-formed
// UTF-8 sequences: a subset of what toml++ accepts. A body outside it (a carriage return, a stray
// byte) is left for toml++ to report.
bool accepted_as_is(std::string_view body) {
  const auto* b = reinterpret_cast<const unsigned char*>(body.data());
  for (std::size_t i = 0; i < body.size();) {
    const unsigned c = b[i];
    const std::size_t len = c == '\t' || (c >= 0x20 && c < 0x7F) ? 1 : sequence_at(b, i, body.size());
    if (len == 0) {
      return false;
    }
    i += len;
  }
  return true;
}

// Whether all of `text` is well-formed UTF-8. toml++ reports an ill-formed sequence at a column
// that depends on how its reader's buffer falls over the text before it: a file with one is
// parsed as it is, comments and all, so that its error reads as it always did.
bool well_formed(std::string_view text) {
  const auto* b = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = b[i] < 0x80 ? 1 : sequence_at(b, i, text.size());
    if (len == 0) {
      return false;
    }
    i += len;
  }
  return true;
}

}  // namespace

std::string without_comments(std::string_view text, const std::vector<std::pair<std::size_t, std::size_t>>& comments) {
  std::string out;
  std::size_t dropped = 0;
  for (const auto& [first, second] : comments) {
    dropped += second - first;
  }
  out.reserve(text.size() - dropped);
  std::size_t at = 0;
  for (const auto& [first, second] : comments) {
    out.append(text.substr(at, first - at));
    at = second;
  }
  out.append(text.substr(at));
  return out;
}

// The first place `text` passes a limit, outside strings and comments; nullopt when none. Dots
// count as key segments only in key position: in a [header], or before a line's (or an inline
// table item's) '='; a float's dot is in value position.
std::optional<Diagnostic> past_limits(std::string_view text, const std::string& path,
                                      std::vector<std::pair<std::size_t, std::size_t>>* comments) {
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
      case '#': {
        const std::size_t body = i + 1;
        while (i + 1 < text.size() && text[i + 1] != '\n') {
          ++i;
        }
        // A Windows line break's '\r' belongs to the break, not the body.
        const std::size_t end = i + 1 > body && text[i] == '\r' ? i : i + 1;
        if (comments != nullptr && end > body && accepted_as_is(text.substr(body, end - body))) {
          comments->emplace_back(body, end);
        }
        break;
      }
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
  if (comments != nullptr && !comments->empty() && !well_formed(text)) {
    comments->clear();
  }
  return std::nullopt;
}

}  // namespace gpusim::parse
