// The taps of bilinear upsampling by a whole factor, as PyTorch's
// F.interpolate(mode="bilinear", align_corners=False) and ONNX's Resize
// (mode "linear", coordinate transformation "half_pixel") read them: output
// pixel o of an axis upsampled `factor` times reads the input at
// (o + 1/2) / factor - 1/2, clamped to the input, from its two neighbours.
// Shared by the operator's references (upsample_bilinear.cpp) and the CPU
// kernel, so every one reads the same pixels with the same weights.
#pragma once

#include <algorithm>

namespace octet::ops {

// Output pixel o's two input pixels and their weights in units of
// 1 / (2 factor): they sum to 2 factor (a power of two, so the int8 form
// divides exactly by a shift).
struct BilinearTaps {
  int first, second;
  int first_weight, second_weight;
};

inline BilinearTaps bilinear_taps(int o, int factor, int in_length) {
  const int span = 2 * factor;
  const int t = 2 * o + 1 - factor;  // the source coordinate times 2 factor
  const int below = t >= 0 ? t / span : -((span - 1 - t) / span);  // floor(t / span)
  const int fraction = t - below * span;
  return {std::clamp(below, 0, in_length - 1), std::clamp(below + 1, 0, in_length - 1), span - fraction, fraction};
}

// log2 of a power of two from 1 to 2^30; -1 for anything else.
inline int power_of_two_exponent(int v) {
  for (int e = 0; e <= 30; ++e)
    if (v == 1 << e) return e;
  return -1;
}

}  // namespace octet::ops
