// An output written as it is computed, put in place whole (see streamed_output.hpp).
#include "cli/streamed_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/cli.hpp"
#include "cli/write_rules.hpp"

namespace gpusim::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

bool is_stdout(const std::string& path) { return path.empty() || path == "-"; }

}  // namespace

StreamedOutput::StreamedOutput(const std::string& path) : path_(path) {
  std::error_code ec;
  const fs::file_status status = is_stdout(path) ? fs::file_status{} : fs::status(path, ec);
  if (is_stdout(path) || (fs::exists(status) && !fs::is_regular_file(status))) {
    kind_ = Kind::kCopied;
    std::FILE* f = std::tmpfile();
    if (f == nullptr) {
      throw IoError((is_stdout(path) ? std::string("<stdout>") : path) +
                    ": cannot create a temporary file to stage the output" + reason(errno));
    }
    fd_ = ::dup(::fileno(f));
    std::fclose(f);  // the file has no name: it lives while fd_ is open
    if (fd_ < 0) {
      throw IoError(path + ": cannot stage the output" + reason(errno));
    }
    return;
  }
  // A regular file, or nothing there yet: through a symbolic link, its target.
  fs::path target(path);
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    const fs::path resolved = fs::weakly_canonical(target, ec);
    if (!ec) {
      target = resolved;
    }
  }
  target_ = target.string();
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = (dir / ".gpusim-XXXXXX").string();
  errno = 0;
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) {
    const int error = errno;
    fail_write(path, "cannot write the output file", error);
  }
  temporary_ = name;
  (void)::fchmod(fd_, new_file_mode());
}

StreamedOutput::~StreamedOutput() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
  if (!committed_ && !temporary_.empty()) {
    ::unlink(temporary_.c_str());
  }
}

void StreamedOutput::fail(const std::string& what, int error) {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temporary_.empty()) {
    ::unlink(temporary_.c_str());
    temporary_.clear();
  }
  const std::string where = is_stdout(path_) ? std::string("<stdout>") : path_;
  if (device_fault(error) || is_stdout(path_)) {
    throw IoError(where + ": " + what + reason(error));
  }
  throw InputError({Diagnostic{SourcePos{where}, "", what + reason(error)}});
}

void StreamedOutput::write(std::string_view text) {
  buffer_.append(text);
  if (buffer_.size() >= kFlushBytes) {
    flush();
  }
}

void StreamedOutput::flush() {
  if (const int error = write_all(fd_, buffer_.data(), buffer_.size()); error != 0) {
    fail(kind_ == Kind::kFile ? "cannot write the output file" : "cannot stage the output", error);
  }
  buffer_.clear();
}

void StreamedOutput::rename_into_place() {
  flush();
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail("cannot write the output file", errno);
  }
  fd_ = -1;
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
    fail("cannot write the output file", errno);
  }
  temporary_.clear();
  committed_ = true;
}

void StreamedOutput::copy_out() {
  flush();
  int out = STDOUT_FILENO;
  if (is_stdout(path_)) {
    std::cout.flush();
  } else {
    out = ::open(path_.c_str(), O_WRONLY | O_TRUNC);
    if (out < 0) {
      fail("cannot write the output file", errno);
    }
  }
  int error = ::lseek(fd_, 0, SEEK_SET) < 0 ? errno : 0;
  std::array<char, 1 << 16> chunk{};
  while (error == 0) {
    const ssize_t n = ::read(fd_, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      error = n < 0 ? errno : 0;
      break;
    }
    error = write_all(out, chunk.data(), static_cast<std::size_t>(n));
  }
  if (out != STDOUT_FILENO && ::close(out) != 0 && error == 0) {
    error = errno;
  }
  if (error != 0) {
    fail(is_stdout(path_) ? "cannot write to standard output" : "cannot write the output file", error);
  }
  committed_ = true;
}

void commit_all(const std::vector<StreamedOutput*>& outputs) {
  for (StreamedOutput* o : outputs) {
    if (o->kind_ == StreamedOutput::Kind::kFile) {
      o->rename_into_place();
    }
  }
  for (StreamedOutput* o : outputs) {
    if (o->kind_ == StreamedOutput::Kind::kCopied && !is_stdout(o->path_)) {
      o->copy_out();
    }
  }
  for (StreamedOutput* o : outputs) {
    if (o->kind_ == StreamedOutput::Kind::kCopied && is_stdout(o->path_)) {
      o->copy_out();
    }
  }
}

}  // namespace gpusim::cli
