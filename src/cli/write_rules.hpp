// Private to src/cli/: the rules both output writers share (output.cpp writes outputs held in
// memory, streamed_output.cpp writes them as they are computed), defined once in output.cpp.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace gpusim::cli {

// The system's reason for a failure (": No space left on device"), or empty without one.
std::string reason(int error);

// Whether a failed write is the device's fault (exit 1: a full disk, an I/O error, a file size
// limit, a closed or broken standard output) rather than the path's (exit 2, bad input).
bool device_fault(int error);

// Throws IoError (exit 1) for a device fault, InputError (exit 2) naming `where` otherwise.
[[noreturn]] void fail_write(const std::string& where, const std::string& what, int error);

// Writes all `size` bytes to `fd` (retrying interrupted writes); the errno of a failed write, or 0.
int write_all(int fd, const char* data, std::size_t size);

// A new file's permissions: 0666 less the process's umask, as the shell would create it.
mode_t new_file_mode();

}  // namespace gpusim::cli
