// Private to src/report/: the shortest decimal that reads back as exactly a double, as
// std::to_chars(first, last, double) writes it (C++17 [charconv.to.chars]: printf's %f or %e,
// whichever is shorter, %f on a tie, each with the fewest digits that read back to the value).
// A C++ library without floating-point to_chars (the WebAssembly build's libc++) gets the same
// text from printf and strtod: the fewest significant digits, correctly rounded, that read back
// (write_shortest_printf; a test keeps the two equal).
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gpusim::report {

namespace shortest_detail {
// Whether digits d1 d2 ... dn × 10^(exponent − n + 1) with v's sign reads back as v.
inline bool reads_back(const std::string& digits, int exponent, double v) {
  std::string text;
  if (v < 0) {
    text += '-';
  }
  text += digits[0];
  text += '.';
  text.append(digits, 1, std::string::npos);
  text += 'e';
  text += std::to_string(exponent);
  return std::strtod(text.c_str(), nullptr) == v;
}

// The digits one unit in their last place away from v's magnitude (`away` > 0) or toward zero,
// in place when that decimal reads back as v.
inline bool step_last_digit(std::string& digits, int& exponent, int away, double v) {
  std::string d = digits;
  int e = exponent;
  auto i = static_cast<std::ptrdiff_t>(d.size()) - 1;
  if (away > 0) {
    for (; i >= 0 && d[static_cast<std::size_t>(i)] == '9'; --i) {
      d[static_cast<std::size_t>(i)] = '0';
    }
    if (i < 0) {  // 99..9 + 1 = 100..0: one more power of ten, as many digits
      d.pop_back();
      d.insert(d.begin(), '1');
      ++e;
    } else {
      ++d[static_cast<std::size_t>(i)];
    }
  } else {
    for (; i >= 0 && d[static_cast<std::size_t>(i)] == '0'; --i) {
      d[static_cast<std::size_t>(i)] = '9';
    }
    if (i < 0) {
      return false;
    }
    --d[static_cast<std::size_t>(i)];
    if (d[0] == '0') {  // 10..0 − 1 = 09..9: one power of ten less
      if (d.size() == 1) {
        return false;
      }
      d.erase(d.begin());
      d += '9';
      --e;
    }
  }
  if (!reads_back(d, e, v)) {
    return false;
  }
  digits = d;
  exponent = e;
  return true;
}
}  // namespace shortest_detail

// `v` finite; [first, last) holds at least 32 characters. Returns the end of what it wrote.
inline char* write_shortest_printf(char* first, char* last, double v) {
  using shortest_detail::reads_back;
  using shortest_detail::step_last_digit;
  std::string out;
  if (v == 0) {
    out = std::signbit(v) ? "-0" : "0";
  } else {
    // The fewest significant digits that read back: printf's correctly rounded %e, or where that
    // misses the value's rounding interval, the decimal next to it on the other side.
    const bool negative = v < 0;
    std::string mantissa;  // the significant digits alone
    int exponent = 0;
    for (int digits = 1; digits <= 17; ++digits) {
      char sci[40];
      std::snprintf(sci, sizeof sci, "%.*e", digits - 1, negative ? -v : v);
      const std::string text(sci);
      const std::size_t e_at = text.find('e');
      mantissa.clear();
      for (std::size_t i = 0; i < e_at; ++i) {
        if (text[i] != '.') {
          mantissa += text[i];
        }
      }
      exponent = std::atoi(text.c_str() + e_at + 1);
      if (reads_back(mantissa, exponent, v) || digits == 17) {
        break;
      }
      if (step_last_digit(mantissa, exponent, 1, v) || step_last_digit(mantissa, exponent, -1, v)) {
        break;
      }
    }
    const int n = static_cast<int>(mantissa.size());
    std::string fixed;
    if (exponent >= n - 1) {
      // A whole number: %.0f's exact digits (as many as the shortest digits padded with zeros).
      char whole[400];
      std::snprintf(whole, sizeof whole, "%.0f", negative ? -v : v);
      fixed = whole;
    } else if (exponent >= 0) {
      fixed.assign(mantissa, 0, static_cast<std::size_t>(exponent + 1));
      fixed += '.';
      fixed.append(mantissa, static_cast<std::size_t>(exponent + 1), std::string::npos);
    } else {
      fixed = "0.";
      fixed.append(static_cast<std::size_t>(-exponent - 1), '0');
      fixed += mantissa;
    }
    std::string scientific(1, mantissa[0]);
    if (n > 1) {
      scientific += '.';
      scientific.append(mantissa, 1, std::string::npos);
    }
    const int magnitude = exponent < 0 ? -exponent : exponent;
    scientific += exponent < 0 ? "e-" : "e+";
    if (magnitude < 10) {
      scientific += '0';
    }
    scientific += std::to_string(magnitude);
    if (negative) {
      out = '-';
    }
    out += fixed.size() <= scientific.size() ? fixed : scientific;
  }
  const std::size_t size = std::min(out.size(), static_cast<std::size_t>(last - first));
  std::memcpy(first, out.data(), size);
  return first + size;
}

inline char* write_shortest(char* first, char* last, double v) {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  return std::to_chars(first, last, v).ptr;
#else
  return write_shortest_printf(first, last, v);
#endif
}

}  // namespace gpusim::report
