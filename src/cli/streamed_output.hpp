// Private to src/cli/: an output written piece by piece as a command computes it (sweep's rows), so
// that memory stays the same however long the output grows, and still put in place whole or not at
// all, as write_outputs (cli.hpp) puts outputs it holds in memory:
//   - a regular file, or a path with nothing there yet, is written to a temporary file in the same
//     directory (a short name, so any legal file name can be written), which commit_all renames
//     over it; through a symbolic link, the link's target is written and the link stays a link;
//   - standard output ("" or "-"), a device or a pipe is written to an anonymous temporary file,
//     which commit_all copies to it, so that nothing reaches it when the command fails.
// An output destroyed before commit_all leaves nothing behind. Errors: InputError (exit 2) for a
// path that cannot be written where it is asked for (no such directory, no permission); IoError
// (exit 1) when the device fails a write (a full disk, a closed standard output).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpusim::cli {

class StreamedOutput {
 public:
  explicit StreamedOutput(const std::string& path);
  StreamedOutput(const StreamedOutput&) = delete;
  StreamedOutput& operator=(const StreamedOutput&) = delete;
  StreamedOutput(StreamedOutput&&) = delete;
  StreamedOutput& operator=(StreamedOutput&&) = delete;
  ~StreamedOutput();

  void write(std::string_view text);

 private:
  friend void commit_all(const std::vector<StreamedOutput*>& outputs);
  enum class Kind { kFile, kCopied };
  void flush();
  void rename_into_place();
  void copy_out();
  [[noreturn]] void fail(const std::string& what, int error);

  std::string path_;       // as given ("" or "-": standard output)
  std::string target_;     // the file renamed over (kFile): the path, or a symbolic link's target
  std::string temporary_;  // kFile: the temporary sibling
  Kind kind_ = Kind::kFile;
  int fd_ = -1;
  std::string buffer_;
  bool committed_ = false;
};

// Puts every output in place: the files are renamed first, then devices and pipes are written,
// standard output last. Throws as StreamedOutput does; outputs not yet in place are then dropped.
void commit_all(const std::vector<StreamedOutput*>& outputs);

}  // namespace gpusim::cli
