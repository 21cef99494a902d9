// File helpers shared by every writer in octet: outputs are written to a
// temporary file beside the destination and renamed, so a crash or an error
// never leaves a half-written file under the requested name.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace octet {

// Calls `write` with a stream to `path + ".tmp-<pid>"`, then renames it to
// `path`. On any exception the temporary file is removed and the error rethrown.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

// Writes text to `path` atomically, or to standard output when path is "-".
void write_text_output(const std::string& path, const std::string& text);

std::vector<uint8_t> read_file_bytes(const std::string& path);
// `size` bytes of `path` from `offset`; fails when the file is shorter.
std::vector<uint8_t> read_file_range(const std::string& path, int64_t offset, int64_t size);
int64_t file_size(const std::string& path);  // fails naming the file when it cannot be read

// File-system helpers on POSIX calls. octet uses no std::filesystem: in a
// process that also loads pip PyTorch's libtorch.so, calls to it bind to the
// copy libtorch exports (built for another libstdc++) and crash; the ctest
// NoStdFilesystemSymbols keeps it out of every binary.
bool file_exists(const std::string& path);       // a regular file (following links)
bool directory_exists(const std::string& path);  // a directory (following links)
bool path_exists(const std::string& path);       // anything

// Creates a directory and its parents; fails with a message if it cannot.
void make_directories(const std::string& path);

// Names of the entries of a directory (without "." and ".."), sorted; fails
// with a message if it cannot be read.
std::vector<std::string> list_directory(const std::string& path);

// Removes a file or a directory with everything in it (links are removed,
// not followed); nothing happens when `path` does not exist. Fails with a
// message naming what could not be removed.
void remove_tree(const std::string& path);

}  // namespace octet
