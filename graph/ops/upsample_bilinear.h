// The taps of bilinear upsampling by a whole factor, as PyTorch's
// F.interpolate(mode="bilinear") and ONNX's Resize (mode "linear") read them.
// With pixel centres aligned (align_corners=False, ONNX's "half_pixel"),
// output pixel o of an axis upsampled `factor` times reads the input at
// (o + 1/2) / factor - 1/2, clamped to the input; with corners aligned
// (align_corners=True, nn.UpsamplingBilinear2d, ONNX's "align_corners") at
// o (in - 1) / (out - 1); either from its two neighbours. Shared by the
// operator's references (upsample_bilinear.cpp) and the CPU kernel, so every
// one reads the same pixels with the same weights.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace octet::ops {

// One axis: `in_length` pixels upsampled `factor` times.
struct BilinearAxis {
  int factor, in_length;
  bool align_corners;
};

// The unit of an axis's weights, 1 / span of a pixel: 2 factor with centres aligned; with corners aligned
// (out - 1) / gcd(in - 1, out - 1), the fraction in lowest terms (65 -> 513 pixels: 8), 1 for an input of one
// pixel.
inline int bilinear_span(BilinearAxis a) {
  if (!a.align_corners) return 2 * a.factor;
  const int out_steps = a.factor * a.in_length - 1, in_steps = a.in_length - 1;
  return in_steps == 0 ? 1 : out_steps / std::gcd(in_steps, out_steps);
}

// Output pixel o's two input pixels and their weights in units of 1 / span: they sum to the span.
struct BilinearTaps {
  int first, second;
  int first_weight, second_weight;
};

inline BilinearTaps bilinear_taps(int o, BilinearAxis a) {
  const int span = bilinear_span(a);
  int t = 2 * o + 1 - a.factor;  // the source coordinate times the span
  if (a.align_corners)
    t = a.in_length == 1 ? 0 : int(int64_t{o} * (a.in_length - 1) * span / (int64_t{a.factor} * a.in_length - 1));
  const int below = t >= 0 ? t / span : -((span - 1 - t) / span);  // floor(t / span)
  const int fraction = t - below * span;
  return {std::clamp(below, 0, a.in_length - 1), std::clamp(below + 1, 0, a.in_length - 1), span - fraction,
          fraction};
}

// The most the weights of an output pixel may sum to (span down x span across): requantize_by_division's bound.
constexpr int32_t kMostBilinearTotal = 1 << 22;

// log2 of a power of two from 1 to 2^30; -1 for anything else.
inline int power_of_two_exponent(int v) {
  for (int e = 0; e <= 30; ++e)
    if (v == 1 << e) return e;
  return -1;
}

}  // namespace octet::ops
