// Private to src/cli/: where a command's outputs go and how they are written. Every command writes
// through here, so that every output is safe in the same way:
// - a destination is resolved first: symbolic links are followed to the file they name, and that
//   file is written (the link stays a link);
// - a regular file (or a new one) is written to a temporary file of a short unique name in the
//   target's own folder and renamed onto the target once complete, so a reader never sees half a
//   report and a failure leaves the old file as it was;
// - a character device, FIFO or socket (or a link to one, e.g. /dev/stdout) is written in place;
// - an output that names a file the command reads, or the file another output names, is refused;
// - every write and every close is checked, standard output's included.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gpusim::cli {

// An output destination as the command line names it: the option ("--output", "--svg") and the
// path. An empty path or "-" is standard output.
struct Destination {
  std::string option;
  std::string path;
};

// Checks destinations before any work: each names a file (not a directory) in an existing
// directory this process may write in; no two name one file (standard output included, when it is
// a regular file); none names one of `inputs` (files the command reads, or a directory of them:
// then an existing .toml file under it). Throws InputError (exit 2) naming the option and path.
void check_destinations(const std::vector<Destination>& destinations, const std::vector<std::string>& inputs);

struct WriteOptions {
  bool create_parents = false;      // create missing folders (removed again if the write fails)
  std::vector<std::string> inputs;  // files (or folders of them) no output may replace
};

// Writes each (path, text) in full, or none of them: regular files go to temporary siblings first
// and are renamed into place once every output was written. An empty path or "-" means standard
// output. Throws InputError (exit 2) for a destination that cannot be written where it is asked for
// (no such directory, no permission, an input), IoError (exit 1) when the device fails a write (a
// full disk, /dev/full, a file size limit) or standard output cannot be written (closed, full);
// either way no temporary file and no folder created here is left behind.
void write_outputs(const std::vector<std::pair<std::string, std::string>>& outputs, const WriteOptions& options = {});

// Writes `text` to standard output in full; throws IoError (exit 1) if it cannot be written.
void write_stdout(const std::string& text);

// Makes sure descriptors 0, 1 and 2 are open, so that no file this process opens takes their place:
// a closed one is held by /dev/null opened so that every read or write on it fails (a closed stdout
// stays a failed write, exit 1). Called first thing in main.
void hold_standard_descriptors();

// Closes standard output and reports whether that succeeded (a delayed write error shows here).
bool close_stdout();

}  // namespace gpusim::cli
