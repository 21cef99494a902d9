// Helpers shared by octet's tests.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/file_io.h"

namespace octet {

// The message of the octet::Error that `f` throws, or "no error".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// A fresh directory removed when the test ends.
class TempDir {
 public:
  TempDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/octet-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    try {
      remove_tree(dir_);
    } catch (const Error&) {  // a destructor must not throw; a leftover temporary directory is harmless
    }
  }
  std::string path() const { return dir_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The loss column of a training step log (epoch,step,loss,acc).
inline std::vector<double> step_log_losses(const std::string& csv) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  std::vector<double> losses;
  while (std::getline(in, line)) {
    const size_t second = line.find(',', line.find(',') + 1);
    losses.push_back(std::stod(line.substr(second + 1)));
  }
  return losses;
}

// Source tree and data locations, passed in by CMake.
inline std::string source_dir() { return OCTET_SOURCE_DIR; }
inline std::string zoo_checkpoint(const std::string& name) { return source_dir() + "/models/zoo/" + name + ".octet"; }
inline std::string fashion_mnist_dir() { return "/usr/share/datasets/fashion-mnist"; }
// CIFAR-10 binary files, or "" when the environment does not provide them.
inline std::string cifar10_dir() {
  const char* dir = std::getenv("OCTET_CIFAR10_DIR");
  return dir ? dir : "";
}

}  // namespace octet
