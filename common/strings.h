// Small string helpers shared by the readers of names and paths.
#pragma once

#include <string>

namespace octet {

// Whether `s` ends with `suffix` (every string ends with the empty one).
inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether `s` is `suffix` after at least one more character (a file "x.onnx", not ".onnx").
inline bool ends_after(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && ends_with(s, suffix);
}

}  // namespace octet
