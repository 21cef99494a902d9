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

bool file_exists(const std::string& path);

// Creates a directory and its parents; fails with a message if it cannot.
void make_directories(const std::string& path);

}  // namespace octet
