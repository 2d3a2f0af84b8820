// Input errors with their position. Every problem in a spec or scenario becomes a Diagnostic
// "file:line:col: key: message"; a file's problems are collected and thrown together as one
// InputError, which main maps to exit code 2 (DESIGN §3).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace gpusim {

struct SourcePos {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based; 0 when unknown
};

struct Diagnostic {
  SourcePos pos;
  std::string key;  // dotted key path, e.g. "memory.bandwidth"; may be empty
  std::string message;
  [[nodiscard]] std::string format() const;
};

class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

class Diagnostics {
 public:
  void add(SourcePos pos, std::string key, std::string message);
  void append(const std::vector<Diagnostic>& more);
  [[nodiscard]] bool empty() const { return list_.empty(); }
  [[nodiscard]] const std::vector<Diagnostic>& list() const { return list_; }
  // Throws InputError with everything collected so far, if anything was.
  void throw_if_any() const;

 private:
  std::vector<Diagnostic> list_;
};

}  // namespace gpusim
