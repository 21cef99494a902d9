// Checks and arithmetic the operators' shape rules share.
#pragma once

#include <cstdint>

#include "common/error.h"
#include "graph/graph.h"

namespace octet::ops {

// Activations larger than this are refused: every size and index then fits
// int and int32 arithmetic (graphs come from files, see graph/graph.h).
constexpr int64_t kMaxActivationValues = 2147483647;

// Whether c x h x w positive sizes (each below 2^33) stay within the bound,
// multiplied in an order that cannot overflow int64.
inline bool within_bound(int64_t c, int64_t h, int64_t w) {
  return h <= kMaxActivationValues && w <= kMaxActivationValues && c <= kMaxActivationValues &&
         c * h <= kMaxActivationValues && c * h * w <= kMaxActivationValues;
}

// Output positions of a window sliding over `size` values (padded on both sides).
inline int64_t window_positions(int64_t size, int64_t kernel, int64_t stride, int64_t padding) {
  return (size + 2 * padding - kernel) / stride + 1;
}

// An upsampling's output (each input pixel becoming down x across), checked against the bound.
inline ActShape upsampled_shape(const ActShape& in, int64_t down, int64_t across) {
  const int64_t h = int64_t{in.h} * down, w = int64_t{in.w} * across;
  check(within_bound(in.c, h, w), "output has more than 2^31 - 1 values");
  return {in.c, static_cast<int>(h), static_cast<int>(w)};
}

}  // namespace octet::ops
