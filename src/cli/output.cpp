// Output destinations: resolution, the checks made before any work, and the writes (output.hpp).
#include "cli/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/cli.hpp"
#include "cli/write_rules.hpp"

namespace gpusim::cli {

std::string reason(int error) { return error == 0 ? std::string() : std::string(": ") + std::strerror(error); }

bool device_fault(int error) {
  return error == ENOSPC || error == EIO || error == EDQUOT || error == EFBIG || error == EBADF || error == EPIPE;
}

void fail_write(const std::string& where, const std::string& what, int error) {
  if (device_fault(error)) {
    throw IoError(where + ": " + what + reason(error));
  }
  throw InputError({Diagnostic{SourcePos{where}, "", what + reason(error)}});
}

int write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return errno;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask);
}

namespace {

namespace fs = std::filesystem;

constexpr int kMaxLinks = 40;  // as the kernel's own limit on links followed in one lookup (ELOOP)

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  throw InputError({Diagnostic{SourcePos{path}, "", what}});
}

// Where one destination's bytes end up.
struct Target {
  std::string path;       // as given
  fs::path file;          // the file written: links followed, its folder canonical
  bool in_place = false;  // a device, FIFO or socket: opened and written where it is
  bool exists = false;
  struct stat st {};  // of `file`, when it exists
};

// Resolves `path`; `what` names the output in messages ("--svg: ", or empty).
Target resolve(const std::string& path, const std::string& what) {
  Target t;
  t.path = path;
  if (::stat(path.c_str(), &t.st) == 0) {
    if (S_ISDIR(t.st.st_mode)) {
      refuse(path, what + "is a directory, not a file");
    }
    if (!S_ISREG(t.st.st_mode)) {
      t.file = path;
      t.in_place = true;
      t.exists = true;
      return t;
    }
  }
  // A regular file or none yet: follow the final component's links to the file they name.
  fs::path p(path);
  for (int hops = 0;; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) {
      break;
    }
    if (hops == kMaxLinks) {
      refuse(path, what + "more than " + std::to_string(kMaxLinks) + " symbolic links to follow");
    }
    const fs::path link = fs::read_symlink(p, ec);
    if (ec) {
      refuse(path, what + "cannot read the symbolic link: " + ec.message());
    }
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..") {
    refuse(path, what + "is a directory, not a file");
  }
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  const fs::path real_dir = fs::canonical(dir, ec);
  if (ec || !fs::is_directory(real_dir, ec)) {
    refuse(path, what + "no directory " + dir.string() + " to write it in");
  }
  t.file = real_dir / name;
  t.exists = ::stat(t.file.c_str(), &t.st) == 0;
  if (t.exists && S_ISDIR(t.st.st_mode)) {
    refuse(path, what + "is a directory, not a file");
  }
  return t;
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// Two targets that are one file: the same inode, or the same resolved name of a file not there yet.
bool same_target(const Target& a, const Target& b) {
  if (a.exists && b.exists) {
    return same_file(a.st, b.st);
  }
  return !a.exists && !b.exists && a.file == b.file;
}

// The input `target` would replace, if any.
std::optional<std::string> input_replaced(const Target& target, const std::vector<std::string>& inputs) {
  if (!target.exists) {
    return std::nullopt;
  }
  for (const auto& input : inputs) {
    struct stat st {};
    if (input.empty() || ::stat(input.c_str(), &st) != 0) {
      continue;
    }
    if (same_file(st, target.st)) {
      return input;
    }
    std::error_code ec;
    if (S_ISDIR(st.st_mode) && target.file.extension() == ".toml") {
      const std::string dir = fs::canonical(input, ec).string() + "/";
      if (!ec && target.file.string().compare(0, dir.size(), dir) == 0) {
        return input;
      }
    }
  }
  return std::nullopt;
}

// Standard output as a target, when it is a regular file another output could replace.
std::optional<Target> stdout_file() {
  Target t;
  t.path = "<stdout>";
  if (::fstat(STDOUT_FILENO, &t.st) != 0 || !S_ISREG(t.st.st_mode)) {
    return std::nullopt;
  }
  t.exists = true;
  return t;
}

// Writes `text` to a new temporary file in `target`'s folder; returns its name.
std::string write_temporary(const Target& target, const std::string& text) {
  std::string name = (target.file.parent_path() / ".gpusim-XXXXXX").string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    fail_write(target.path, "cannot create a file in " + target.file.parent_path().string(), errno);
  }
  int error = 0;
  if (::fchmod(fd, target.exists ? (target.st.st_mode & 07777) : new_file_mode()) != 0) {
    error = errno;
  }
  if (error == 0) {
    error = write_all(fd, text.data(), text.size());
  }
  if (::close(fd) != 0 && error == 0) {
    error = errno;
  }
  if (error != 0) {
    ::unlink(name.c_str());
    fail_write(target.path, "cannot write the output file", error);
  }
  return name;
}

void write_in_place(const Target& target, const std::string& text) {
  const int fd = ::open(target.path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    fail_write(target.path, "cannot open the output for writing", errno);
  }
  int error = 0;
  error = write_all(fd, text.data(), text.size());
  if (::close(fd) != 0 && error == 0) {
    error = errno;
  }
  if (error != 0) {
    fail_write(target.path, "cannot write the output file", error);
  }
}

// Creates the missing folders above `path`, outermost first; returns those it created.
std::vector<fs::path> create_parents(const fs::path& path) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path dir = path.parent_path(); !dir.empty() && !fs::exists(dir, ec); dir = dir.parent_path()) {
    missing.push_back(dir);
    if (dir == dir.parent_path()) {
      break;
    }
  }
  std::vector<fs::path> created;
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0777) != 0) {
      const int error = errno;
      for (auto c = created.rbegin(); c != created.rend(); ++c) {
        ::rmdir(c->c_str());
      }
      fail_write(it->string(), "cannot create the directory", error);
    }
    created.push_back(*it);
  }
  return created;
}

}  // namespace

void check_destinations(const std::vector<Destination>& destinations, const std::vector<std::string>& inputs) {
  std::vector<std::pair<const Destination*, Target>> files;
  std::optional<Target> out = stdout_file();
  const Destination stdout_destination{"standard output", "<stdout>"};
  const Destination* uses_stdout = nullptr;
  for (const auto& d : destinations) {
    if (d.path.empty() || d.path == "-") {
      if (uses_stdout != nullptr) {
        refuse(d.path,
               uses_stdout->option + " and " + d.option + " both name standard output: give each output its own");
      }
      uses_stdout = &d;
      continue;
    }
    const std::string what = d.option + ": ";
    Target t = resolve(d.path, what);
    if (const auto input = input_replaced(t, inputs)) {
      struct stat st {};
      const bool folder = ::stat(input->c_str(), &st) == 0 && S_ISDIR(st.st_mode);
      refuse(d.path, what +
                         (folder             ? "is in " + *input + ", a folder of files this command reads"
                          : *input == d.path ? std::string("is a file this command reads")
                                             : "is " + *input + ", a file this command reads") +
                         "; write the output to another file");
    }
    if (!t.in_place && ::access(t.file.parent_path().c_str(), W_OK) != 0) {
      fail_write(d.path, what + "cannot write in " + t.file.parent_path().string(), errno);
    }
    if (t.in_place) {
      continue;  // a device or pipe may take several outputs, one after the other
    }
    files.emplace_back(&d, std::move(t));
  }
  if (uses_stdout != nullptr && out) {
    files.emplace_back(&stdout_destination, *out);
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (same_target(files[i].second, files[j].second)) {
        const std::string& a = files[j].first->option;
        const std::string& b = files[i].first->option;
        refuse(files[i].first->path,
               (a == b ? "two outputs" : a + " and " + b) + " name one file: give each output its own");
      }
    }
  }
}

void write_outputs(const std::vector<std::pair<std::string, std::string>>& outputs, const WriteOptions& options) {
  std::vector<fs::path> created;
  std::vector<std::string> staged;  // temporary files, not yet renamed
  try {
    std::vector<Destination> destinations;
    for (const auto& [path, text] : outputs) {
      destinations.push_back({"output", path});
      if (options.create_parents && !path.empty() && path != "-") {
        const std::vector<fs::path> made = create_parents(fs::path(path));
        created.insert(created.end(), made.begin(), made.end());
      }
    }
    check_destinations(destinations, options.inputs);
    std::vector<std::pair<Target, const std::string*>> targets;
    const std::string* to_stdout = nullptr;
    for (const auto& [path, text] : outputs) {
      if (path.empty() || path == "-") {
        to_stdout = &text;
      } else {
        targets.emplace_back(resolve(path, ""), &text);
      }
    }
    staged.resize(targets.size());
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (!targets[i].first.in_place) {
        staged[i] = write_temporary(targets[i].first, *targets[i].second);
      }
    }
    for (const auto& [target, text] : targets) {
      if (target.in_place) {
        write_in_place(target, *text);
      }
    }
    if (to_stdout != nullptr) {
      write_stdout(*to_stdout);
    }
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (!staged[i].empty()) {
        if (::rename(staged[i].c_str(), targets[i].first.file.c_str()) != 0) {
          fail_write(targets[i].first.path, "cannot write the output file", errno);
        }
        staged[i].clear();
      }
    }
  } catch (...) {
    for (const auto& name : staged) {
      if (!name.empty()) {
        ::unlink(name.c_str());
      }
    }
    for (auto it = created.rbegin(); it != created.rend(); ++it) {
      ::rmdir(it->c_str());  // removes only what is still empty
    }
    throw;
  }
}

void write_stdout(const std::string& text) {
  std::cout.flush();
  std::fflush(stdout);
  int error = 0;
  error = write_all(STDOUT_FILENO, text.data(), text.size());
  if (error != 0) {
    throw IoError("<stdout>: cannot write to standard output" + reason(error));
  }
}

void hold_standard_descriptors() {
  for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      // Read-only for an output, write-only for input: each use fails as on a closed descriptor.
      const int held = ::open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
      if (held >= 0 && held != fd) {
        ::dup2(held, fd);
        ::close(held);
      }
    }
  }
}

bool close_stdout() {
  std::cout.flush();
  std::fflush(stdout);
  return ::close(STDOUT_FILENO) == 0 || errno == EBADF;
}

}  // namespace gpusim::cli
