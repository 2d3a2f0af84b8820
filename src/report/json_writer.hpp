// Private to src/report/: a minimal streaming JSON writer. Non-finite numbers are written as null so a report
// never contains NaN or Infinity; finite ones in the shortest form that reads back to the same double
// (write_shortest: std::to_chars's text), so byte and parameter counts keep every digit.
#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/shortest.hpp"

namespace gpusim::report {

// The shortest decimal that reads back as exactly `v` ("124000000", "0.1", "1.5e+21"); finite `v` only.
inline std::string exact_number(double v) {
  std::array<char, 32> buf{};
  return std::string(buf.data(), write_shortest(buf.data(), buf.data() + buf.size(), v));
}

class JsonWriter {
 public:
  JsonWriter() = default;
  // A writer for a value nested `depth` levels down in a document written piece by piece: its
  // lines are indented as they would be there.
  explicit JsonWriter(int depth) : depth_(depth) {}
  // Room for `bytes` of document, where it is known to be large (one allocation, not a doubling).
  void reserve(std::size_t bytes) { out_.reserve(bytes); }
  void begin_object(const char* key = nullptr) { open(key, '{'); }
  void end_object() { close('}'); }
  void begin_array(const char* key = nullptr) { open(key, '['); }
  void end_array() { close(']'); }
  void value(const char* key, double v) {
    prefix(key);
    if (!std::isfinite(v)) {
      out_ += "null";
      return;
    }
    std::array<char, 32> buf{};
    // A whole number under 10^5 in magnitude (not -0) is its own shortest form: its fixed digits
    // are never longer than the scientific form ("10000" ties "1e+04", and a tie goes to fixed).
    constexpr double kFixedBelow = 1e5;
    const bool whole = std::fabs(v) < kFixedBelow && v == std::trunc(v) && !(v == 0 && std::signbit(v));
    char* end = whole ? std::to_chars(buf.data(), buf.data() + buf.size(), static_cast<long>(v)).ptr
                      : write_shortest(buf.data(), buf.data() + buf.size(), v);
    out_.append(buf.data(), end);
  }
  void value(const char* key, std::optional<double> v) {
    if (v) {
      value(key, *v);
    } else {
      null(key);
    }
  }
  void value(const char* key, int v) { value(key, static_cast<double>(v)); }
  void value(const char* key, bool v) {
    prefix(key);
    out_ += v ? "true" : "false";
  }
  void value(const char* key, const std::string& s) {
    prefix(key);
    quote(s);
  }
  void value(const char* key, const char* s) {
    prefix(key);
    quote(s);
  }
  void null(const char* key) {
    prefix(key);
    out_ += "null";
  }
  [[nodiscard]] const std::string& str() const { return out_; }
  // The document, moved out: the writer is left empty.
  [[nodiscard]] std::string take() { return std::move(out_); }

 private:
  void open(const char* key, char c) {
    prefix(key);
    out_ += c;
    first_.push_back(true);
    ++depth_;
  }
  void close(char c) {
    --depth_;
    first_.pop_back();
    newline();
    out_ += c;
  }
  void prefix(const char* key) {
    if (!first_.empty()) {
      if (!first_.back()) {
        out_ += ',';
      }
      first_.back() = false;
      newline();
    }
    if (key != nullptr) {
      quote(key);
      out_ += ": ";
    }
  }
  void newline() {
    out_ += '\n';
    out_.append(static_cast<std::size_t>(depth_) * 2, ' ');
  }
  // Characters a JSON string escapes: the quote, the backslash and the control characters.
  static bool plain(std::string_view s) {
    for (const char c : s) {
      if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
        return false;
      }
    }
    return true;
  }
  void quote(std::string_view s) {
    out_ += '"';
    if (plain(s)) {  // most keys and values: copied whole
      out_ += s;
      out_ += '"';
      return;
    }
    for (const char c : s) {
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\t':
          out_ += "\\t";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += c;
          }
      }
    }
    out_ += '"';
  }
  std::string out_;
  std::vector<bool> first_;
  int depth_ = 0;
};

}  // namespace gpusim::report
