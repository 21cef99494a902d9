#include "common/file_io.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
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
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    check(!ec, "cannot rename '" + tmp + "' to '" + path + "': " + ec.message());
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

bool file_exists(const std::string& path) { return std::filesystem::is_regular_file(path); }

void make_directories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  check(!ec && std::filesystem::is_directory(path),
        "cannot create directory '" + path + "': " + ec.message());
}

}  // namespace octet
