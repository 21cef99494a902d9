// Helpers of the operators' int8 references (graph/op.h): NCHW tensors read
// and written one value at a time, and the epilogue of weighted operators.
#pragma once

#include <cstdint>
#include <functional>

#include "common/requantize.h"
#include "graph/op.h"

namespace octet::ops {

inline int16_t at(const ActTensor& x, int64_t n, int64_t c, int64_t y, int64_t w) {
  return x.data[((n * x.dim(1) + c) * x.dim(2) + y) * x.dim(3) + w];
}

inline int16_t& at(ActTensor& x, int64_t n, int64_t c, int64_t y, int64_t w) {
  return x.data[((n * x.dim(1) + c) * x.dim(2) + y) * x.dim(3) + w];
}

// The lowest output: a real 0 (the zero point) when a ReLU is fused.
inline int32_t output_floor(const Int8ReferenceArgs& a) { return lowest_output(a.node.relu, a.q.zero_point, a.q.bits); }

// Input k's value at (n, c, y, w) less its zero point: a real 0 is 0.
inline int32_t centered(const Int8ReferenceArgs& a, size_t k, int64_t n, int64_t c, int64_t y, int64_t w) {
  return int32_t{at(*a.inputs[k], n, c, y, w)} - a.input_zero_points.at(k);
}

// a.y from each pixel's channels: levels(in, C, out) of input 0's C stored
// levels of one pixel, side by side, into its `out_channels` outputs (the
// operators over a pixel's channels: LayerNorm and LocalResponseNorm, C of
// them; ChannelMean and ChannelMax, one).
void write_by_pixel(const Int8ReferenceArgs& a, int64_t out_channels,
                    const std::function<void(const int16_t*, int64_t, int8_t*)>& levels);

// A weighted operator's outputs from their accumulators (bias excluded): the
// int32 logits of the output node, else requantized with the node's fused
// residual (its second input) and ReLU.
void write_weighted(const Int8ReferenceArgs& a, int64_t channels, int64_t height, int64_t width,
                    const std::function<int32_t(int64_t n, int64_t c, int64_t y, int64_t x)>& accumulator);

}  // namespace octet::ops
