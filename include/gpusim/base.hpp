// Foundation of every stage: input errors with their position, one string table per enum, and
// printf-style formatting into a std::string, and independent work spread over the cores.
//
// Errors: every problem in a spec, scenario or measurement file becomes a Diagnostic
// "file:line:col: key: message"; a file's problems are collected and thrown together as one
// InputError, which the CLI maps to exit code 2.
// Enum names: each enum has exactly one table of {value, name} pairs (kNames in the header that
// declares the enum); to_string, parsing and the "expected one of" lists all read that table.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpusim::base {

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
  // The first diagnostic's message alone (for a status column), or what() when there is none.
  [[nodiscard]] std::string first_message() const;

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
  // The first diagnostic as InputError::first_message() gives it ("" when there is none).
  [[nodiscard]] std::string first_message() const;

 private:
  std::vector<Diagnostic> list_;
};

// One {value, name} pair of an enum's string table.
template <class E>
struct Named {
  E value;
  const char* name;
};

template <class E, std::size_t N>
constexpr const char* name_in(const Named<E> (&table)[N], E value) {
  for (const auto& n : table) {
    if (n.value == value) {
      return n.name;
    }
  }
  return "?";
}

template <class E, std::size_t N>
constexpr std::optional<E> value_in(const Named<E> (&table)[N], std::string_view name) {
  for (const auto& n : table) {
    if (name == n.name) {
      return n.value;
    }
  }
  return std::nullopt;
}

// "\"a\", \"b\", \"c\"": the names of `values` (all of the table's when empty), for messages.
template <class E, std::size_t N>
std::string quoted_names(const Named<E> (&table)[N], const std::vector<E>& values = {}) {
  std::string out;
  for (const auto& n : table) {
    bool wanted = values.empty();
    for (const E v : values) {
      wanted = wanted || v == n.value;
    }
    if (wanted) {
      out += (out.empty() ? "\"" : ", \"") + std::string(n.name) + "\"";
    }
  }
  return out;
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
inline std::string
strfmt(const char* f, ...) {
  va_list ap;
  va_start(ap, f);
  va_list copy;
  va_copy(copy, ap);
  // Most texts fit a line: formatted once into it; a longer one is measured, then formatted.
  char line[256];
  const int n = std::vsnprintf(line, sizeof line, f, copy);
  va_end(copy);
  std::string out;
  if (n > 0 && static_cast<std::size_t>(n) < sizeof line) {
    out.assign(line, static_cast<std::size_t>(n));
  } else if (n > 0) {
    out.assign(static_cast<std::size_t>(n), '\0');
    std::vsnprintf(out.data(), out.size() + 1, f, ap);
  }
  va_end(ap);
  return out;
}

// Independent work spread over the cores (plan's serving candidates, validation's rows).
// Runs work(i) for every i in [0, n) on up to `threads` threads (0: one per core the system
// reports), each taking the next index as it finishes one. The caller keeps each i's result in
// slot i, so what it assembles afterwards does not depend on the order or the thread count. The
// first exception any work(i) throws is rethrown here once every thread has stopped; no further
// index starts after it.
void parallel_for(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& work);

// Misspelt names (src/base/names.cpp). The edit distance with adjacent transpositions; the known
// names closest to `asked` (at most `most`, closest first, compared without case: a few edits, or
// containing a short name); and " did you mean ..." words for a message ("" when none is close).
std::size_t edit_distance(std::string_view a, std::string_view b);
std::vector<std::string> closest_names(std::string_view asked, const std::vector<std::string>& known,
                                       std::size_t most = 3);
std::string did_you_mean(std::string_view asked, const std::vector<std::string>& known);

}  // namespace gpusim::base

// Ranges of the counts and totals read from files and --set (docs/scenarios.md#ranges). Each bound
// is orders of magnitude above any real job (the largest runs use ~10^5 GPUs, ~10^2 layers,
// contexts of ~10^6 tokens) and low enough that every product the model forms from them stays
// exact in int64 and finite in double: tokens per step (batch x sequence <= 10^16), parameters
// (layers x width^2 <= 10^19), FLOPs per step. A count past its bound is a typo, not a job.
namespace gpusim::limits {
inline constexpr std::int64_t kDevices = 10'000'000;    // GPUs, nodes' GPUs and NICs, parallel degrees
inline constexpr std::int64_t kLayers = 100'000;        // layers, virtual pipeline stages
inline constexpr std::int64_t kWidth = 10'000'000;      // hidden, heads, kv_heads, ffn_hidden, vocab
inline constexpr std::int64_t kSequence = 100'000'000;  // tokens per sequence, prompt, output, chunk, KV block
inline constexpr std::int64_t kBatch = 100'000'000;     // sequences per step or in flight
inline constexpr std::int64_t kRequests = 1'000'000;    // serving requests simulated one by one
inline constexpr std::int64_t kPixels = 65'536;         // image height or width
inline constexpr std::int64_t kWorkers = 10'000;        // input pipeline workers
inline constexpr std::int64_t kSms = 100'000;           // streaming multiprocessors of one GPU
inline constexpr std::int64_t kTile = 4096;             // GEMM threadblock tile edge
inline constexpr std::int64_t kChannels = 1024;         // collective channels
inline constexpr std::int64_t kMeshLinks = 1024;        // peer links of one GPU in a full mesh
inline constexpr double kTokens = 1e16;                 // tokens to train on
inline constexpr double kParams = 1e15;                 // parameters of a standard shape
inline constexpr double kRatio = 1e6;                   // plain ratios without a natural bound
inline constexpr double kFigure = 1e18;                 // a measured figure (tokens/s, GPU-hours, ...)
inline constexpr std::int64_t kRows = 1'000'000;        // measured rows a statistic is taken over
inline constexpr double kLogRatio = 10;                 // ln of a predicted / measured ratio (e^10 ~ 22,000)
}  // namespace gpusim::limits

namespace gpusim {
using base::Diagnostic;
using base::Diagnostics;
using base::InputError;
using base::SourcePos;
}  // namespace gpusim
