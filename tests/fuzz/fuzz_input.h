// Shared by the libFuzzer targets: octet's loaders read files, so each input
// is written to a per-process scratch file and loaded through the same path
// the tools use. A loader may refuse an input only with octet::Error (a
// message naming the problem); any other exception, crash or sanitizer report
// is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/error.h"

namespace octet::fuzz {

// The scratch file for this process, removed at exit.
inline const std::string& scratch_path(const char* suffix = ".bin") {
  static const std::string path = [suffix] {
    const char* dir = std::getenv("TMPDIR");
    std::string p = std::string(dir && *dir ? dir : "/tmp") + "/octet-fuzz-" + std::to_string(getpid()) + suffix;
    static std::string to_remove;
    to_remove = p;
    std::atexit([] { std::remove(to_remove.c_str()); });
    return p;
  }();
  return path;
}

inline const std::string& write_scratch(const uint8_t* data, size_t size, const char* suffix = ".bin") {
  const std::string& path = scratch_path(suffix);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size != 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

// Runs `load`, accepting octet::Error as a clean refusal.
template <typename Load>
void expect_clean(Load load) {
  try {
    load();
  } catch (const Error&) {
  }
}

}  // namespace octet::fuzz
