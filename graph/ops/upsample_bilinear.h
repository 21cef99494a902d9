// The taps of bilinear resizing, as PyTorch's F.interpolate(mode="bilinear")
// and ONNX's Resize (mode "linear") read them. An axis of n input pixels
// resized to m: with pixel centres aligned (align_corners=False, ONNX's
// "half_pixel"), output pixel o reads the input at (o + 1/2) n / m - 1/2,
// clamped to the input; with corners aligned (align_corners=True,
// nn.UpsamplingBilinear2d, ONNX's "align_corners") at o (n - 1) / (m - 1);
// either from its two neighbours. Shared by the operator's references
// (upsample_bilinear.cpp) and the CPU kernel, so every one reads the same
// pixels with the same weights.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "graph/graph.h"

namespace octet::ops {

// One axis: `in_length` pixels resized to `out_length`.
struct BilinearAxis {
  int in_length, out_length;
  bool align_corners;
};

// A node's axes, for an input of in_h x in_w: its output size where it has one (height, width), else whole
// factors (stride, stride_w) of the input's.
inline BilinearAxis bilinear_rows(const Node& n, int in_h) {
  return {in_h, n.height ? n.height : n.stride * in_h, n.align_corners};
}
inline BilinearAxis bilinear_columns(const Node& n, int in_w) {
  return {in_w, n.width ? n.width : upsample_across(n) * in_w, n.align_corners};
}

// The unit of an axis's weights, 1 / span of a pixel, the fraction in lowest terms: 2 m / gcd(n, m) with centres
// aligned (2 factor for m = factor x n); with corners aligned (m - 1) / gcd(n - 1, m - 1) (65 -> 513 pixels: 8),
// 1 for an input or output of one pixel.
inline int64_t bilinear_span(BilinearAxis a) {
  const int64_t n = a.in_length, m = a.out_length;
  if (!a.align_corners) return 2 * m / std::gcd(n, m);
  return n == 1 || m == 1 ? 1 : (m - 1) / std::gcd(n - 1, m - 1);
}

// Output pixel o's two input pixels and their weights in units of 1 / span: they sum to the span.
struct BilinearTaps {
  int first, second;
  int first_weight, second_weight;
};

inline BilinearTaps bilinear_taps(int o, BilinearAxis a) {
  const int64_t n = a.in_length, m = a.out_length, span = bilinear_span(a);
  // The source coordinate times the span, exactly: with centres aligned ((2 o + 1) n - m) / gcd(n, m), by a whole
  // factor 2 o + 1 - factor (no product of sides: a factor's input may be 2^30 pixels long, a size's at most 2^16);
  // with corners aligned o (n - 1) / gcd(n - 1, m - 1).
  int64_t t = m % n == 0 ? 2 * int64_t{o} + 1 - m / n : ((2 * int64_t{o} + 1) * n - m) / std::gcd(n, m);
  if (a.align_corners) t = n == 1 || m == 1 ? 0 : int64_t{o} * ((n - 1) / std::gcd(n - 1, m - 1));
  const int64_t below = t >= 0 ? t / span : -((span - 1 - t) / span);  // floor(t / span)
  const int fraction = static_cast<int>(t - below * span);
  const int64_t last = a.in_length - 1;
  return {static_cast<int>(std::clamp<int64_t>(below, 0, last)),
          static_cast<int>(std::clamp<int64_t>(below + 1, 0, last)), static_cast<int>(span) - fraction, fraction};
}

// The largest side of an image resized to a size, and of its input.
constexpr int kMostBilinearSide = 1 << 16;

// The most the weights of an output pixel may sum to (span down x span across): requantize_by_division's bound.
constexpr int64_t kMostBilinearTotal = 1 << 22;

// log2 of a power of two from 1 to 2^30; -1 for anything else.
inline int power_of_two_exponent(int64_t v) {
  for (int e = 0; e <= 30; ++e)
    if (v == int64_t{1} << e) return e;
  return -1;
}

}  // namespace octet::ops
