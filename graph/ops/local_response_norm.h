// The int8 form of the LocalResponseNorm operator (graph/ops/local_response_norm.cpp),
// one function for every backend and the oracle, so they compute the same bits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/graph.h"

namespace octet::ops {

// Channels a window holds at most: 15 (AlexNet's and GoogLeNet's are 5).
constexpr int kMostLocalResponseNormSize = 15;

// ONNX's window of channel c: [c - (size - 1) / 2, c + size / 2] within the channels.
inline int local_response_first(int c, int size) { return std::max(0, c - (size - 1) / 2); }
inline int local_response_last(int c, int size, int channels) { return std::min(channels - 1, c + size / 2); }

// What a pixel's int8 normalisation reads besides its values. Stored level
// x_c gives level rint((x_c - z_in) m(S_c)) + z_out, clamped to int8, where
// S_c is the exact sum of (x - z_in)^2 over c's window and
// m(S) = ratio / (bias + gain S)^beta: ratio = s_out / s_in, gain = alpha /
// (size s_in^2) (scales in levels per unit).
struct LocalResponseLevels {
  int size;
  double ratio, gain, bias, beta;
  int32_t input_zero_point, output_zero_point;
};
LocalResponseLevels local_response_levels(const Node& n, double input_scale, double output_scale,
                                          int32_t input_zero_point, int32_t output_zero_point);
double local_response_multiplier(int64_t squares, const LocalResponseLevels& p);
// m(S) for every S a window can hold at the input's zero point, by S: the
// table the CPU and CUDA kernels look up, made once per engine.
std::vector<double> local_response_multipliers(const LocalResponseLevels& p);

// The `channels` output levels of one pixel's stored levels `x` (stride 1),
// m(S) given by `multiplier` (local_response_multiplier, or a table of it).
template <typename T, typename Multiplier>
void local_response_pixel(const T* x, int channels, const LocalResponseLevels& p, Multiplier multiplier, int8_t* y) {
  const auto square = [&](int k) {
    const int64_t v = int64_t{x[k]} - p.input_zero_point;
    return v * v;
  };
  int64_t squares = 0;  // over the window of channel c, slid one channel at a time
  for (int k = 0; k < std::min(p.size / 2, channels); ++k) squares += square(k);
  for (int c = 0; c < channels; ++c) {
    const int enters = c + p.size / 2, leaves = c - (p.size - 1) / 2 - 1;
    if (enters < channels) squares += square(enters);
    if (leaves >= 0) squares -= square(leaves);
    const double level = std::rint(double(int64_t{x[c]} - p.input_zero_point) * multiplier(squares));
    y[c] = static_cast<int8_t>(std::clamp(level + p.output_zero_point, -128.0, 127.0));
  }
}

}  // namespace octet::ops
