#include "common/file_io.h"

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "common/error.h"

namespace octet {

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    check(out.good(), "cannot open '" + tmp + "' for writing");
    write(out);
    out.flush();
    check(out.good(), "write to '" + tmp + "' failed (disk full?)");
    out.close();
    check(std::rename(tmp.c_str(), path.c_str()) == 0,
          "cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno));
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

void write_text_output(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text << std::flush;
    return;
  }
  write_file_atomically(path, [&](std::ostream& out) { out << text; });
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  check(in.good(), "cannot open '" + path + "'");
  const std::streamsize size = in.tellg();
  in.seekg(0);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  check(in.good() || size == 0, "cannot read '" + path + "'");
  return bytes;
}

std::vector<uint8_t> read_file_range(const std::string& path, int64_t offset, int64_t size) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), "cannot open '" + path + "'");
  in.seekg(offset);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  check(in.good() || size == 0, "cannot read " + std::to_string(size) + " bytes at offset " + std::to_string(offset) +
                                    " of '" + path + "' (truncated?)");
  return bytes;
}

int64_t file_size(const std::string& path) {
  struct stat st {};
  check(::stat(path.c_str(), &st) == 0, "cannot open '" + path + "'");
  return static_cast<int64_t>(st.st_size);
}

namespace {
bool stat_mode(const std::string& path, mode_t* mode) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  *mode = st.st_mode;
  return true;
}
}  // namespace

bool file_exists(const std::string& path) {
  mode_t mode = 0;
  return stat_mode(path, &mode) && S_ISREG(mode);
}

bool directory_exists(const std::string& path) {
  mode_t mode = 0;
  return stat_mode(path, &mode) && S_ISDIR(mode);
}

bool path_exists(const std::string& path) {
  mode_t mode = 0;
  return stat_mode(path, &mode);
}

void make_directories(const std::string& path) {
  check(!path.empty(), "cannot create a directory with an empty name");
  // Each prefix ending before a '/', then the whole path.
  for (size_t end = path.find('/', 1); ; end = path.find('/', end + 1)) {
    const std::string prefix = path.substr(0, end);
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      fail("cannot create directory '" + prefix + "': " + std::strerror(errno));
    if (end == std::string::npos) break;
  }
  check(directory_exists(path), "cannot create directory '" + path + "': a file of that name is in the way");
}

std::vector<std::string> list_directory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  check(dir != nullptr, "cannot read directory '" + path + "': " + std::strerror(errno));
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

void remove_tree(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return;
  // Depth first (FTW_DEPTH), links not followed (FTW_PHYS); nftw takes no
  // context pointer, so the first failure is kept in a thread-local.
  static thread_local std::string failure;
  failure.clear();
  const int status = ::nftw(
      path.c_str(),
      [](const char* entry, const struct stat*, int, FTW*) -> int {
        if (std::remove(entry) == 0) return 0;
        failure = std::string(entry) + ": " + std::strerror(errno);
        return 1;
      },
      16, FTW_DEPTH | FTW_PHYS);
  check(status == 0, "cannot remove '" + path + "': " + (failure.empty() ? std::strerror(errno) : failure));
}

}  // namespace octet
