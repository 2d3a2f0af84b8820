// Diagnostics and input errors (contract in include/gpusim/base.hpp).
#include <utility>

#include "gpusim/base.hpp"

namespace gpusim::base {
namespace {
std::string join(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) {
    if (!out.empty()) {
      out += '\n';
    }
    out += d.format();
  }
  return out;
}
}  // namespace

std::string Diagnostic::format() const {
  std::string out = pos.file.empty() ? std::string("<input>") : pos.file;
  if (pos.line > 0) {
    out += ':' + std::to_string(pos.line) + ':' + std::to_string(pos.column);
  }
  out += ": ";
  if (!key.empty()) {
    out += key + ": ";
  }
  return out + message;
}

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join(diagnostics)), diagnostics_(std::move(diagnostics)) {}

namespace {
std::string message_of(const Diagnostic& d) { return d.key.empty() ? d.message : d.key + ": " + d.message; }
}  // namespace

std::string InputError::first_message() const {
  return diagnostics_.empty() ? std::string(what()) : message_of(diagnostics_.front());
}

std::string Diagnostics::first_message() const { return list_.empty() ? std::string() : message_of(list_.front()); }

void Diagnostics::add(SourcePos pos, std::string key, std::string message) {
  list_.push_back(Diagnostic{std::move(pos), std::move(key), std::move(message)});
}

void Diagnostics::append(const std::vector<Diagnostic>& more) { list_.insert(list_.end(), more.begin(), more.end()); }

void Diagnostics::throw_if_any() const {
  if (!list_.empty()) {
    throw InputError(list_);
  }
}

}  // namespace gpusim::base
