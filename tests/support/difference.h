// Bit-for-bit comparison of two runs' values, with a message that says where.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace octet {

// "" when equal; otherwise how many values differ and where the first one is
// (NHWC position in a tensor of per-sample shape `shape`).
template <typename T>
std::string difference(const std::vector<T>& expected, const std::vector<T>& actual, const ActShape& shape) {
  if (expected.size() != actual.size())
    return "sizes differ: " + std::to_string(expected.size()) + " expected, " + std::to_string(actual.size()) + " got";
  int64_t count = 0, first = -1;
  for (size_t i = 0; i < expected.size(); ++i)
    if (expected[i] != actual[i]) {
      if (first < 0) first = static_cast<int64_t>(i);
      ++count;
    }
  if (count == 0) return "";
  const int64_t c = first % shape.c, x = first / shape.c % shape.w, y = first / (int64_t(shape.c) * shape.w) % shape.h;
  return std::to_string(count) + " of " + std::to_string(expected.size()) + " values differ, the first at [n " +
         std::to_string(first / shape.numel()) + "][y " + std::to_string(y) + "][x " + std::to_string(x) + "][c " +
         std::to_string(c) + "]: expected " + std::to_string(int64_t(expected[first])) + ", got " +
         std::to_string(int64_t(actual[first]));
}

}  // namespace octet
