// The CUDA runtime's operators that move or rescale channels (concat, mul,
// channel slice and shuffle, pad, activation tables), one output byte per thread: each thread's
// work as a plain C++ function with host and device qualifiers, so that the
// host executor of the device layout (tests/ops) runs the kernels' own
// arithmetic on any machine. Values are NHWC int8 with stored (padded)
// channels; every output's padding channels come out 0.
#pragma once

#include <cstdint>

#include "common/requantize.h"

namespace octet::cuda {

// Concat: input i (its `channels` real channels of `in_stored_c`) requantized
// into output channels [first, first + channels). Element e of the
// pixels x channels of this input.
OCTET_HOST_DEVICE void concat_element(const int8_t* x, int in_stored_c, int channels, int first, int out_stored_c,
                                      int32_t multiplier, int32_t shift, int64_t e, int8_t* y) {
  const int64_t pixel = e / channels;
  const int c = static_cast<int>(e - pixel * channels);
  y[pixel * out_stored_c + first + c] =
      static_cast<int8_t>(::octet::requantize(x[pixel * in_stored_c + c], multiplier, 0, 0, shift, -128));
}

// The output channels [from, stored_c) of pixel e / (stored_c - from) set to 0.
OCTET_HOST_DEVICE void zero_channels_element(int from, int stored_c, int64_t e, int8_t* y) {
  const int64_t pixel = e / (stored_c - from);
  y[pixel * stored_c + from + (e - pixel * (stored_c - from))] = 0;
}

// Mul: element e of x times z's (z: the same storage, or with `broadcast`
// one pixel per sample), requantized by one multiplier. Padding channels are
// 0 in x, so 0 in the product and after requantization.
OCTET_HOST_DEVICE void mul_element(const int8_t* x, const int8_t* z, bool broadcast, int64_t pixels, int stored_c,
                                   int32_t multiplier, int32_t shift, int64_t e, int8_t* y) {
  const int64_t per_sample = pixels * stored_c;
  const int64_t ze = broadcast ? e / per_sample * stored_c + e % stored_c : e;
  y[e] = static_cast<int8_t>(::octet::requantize(int32_t(x[e]) * z[ze], multiplier, 0, 0, shift, -128));
}

// ChannelSlice: output channel c is input channel offset + c.
OCTET_HOST_DEVICE void slice_element(const int8_t* x, int in_stored_c, int offset, int channels, int out_stored_c,
                                     int64_t e, int8_t* y) {
  const int64_t pixel = e / out_stored_c;
  const int c = static_cast<int>(e - pixel * out_stored_c);
  y[e] = c < channels ? x[pixel * in_stored_c + offset + c] : int8_t{0};
}

// ChannelShuffle of `channels` in `groups`: output channel c is input
// channel (c % groups) * (channels / groups) + c / groups (the same storage).
OCTET_HOST_DEVICE void shuffle_element(const int8_t* x, int channels, int groups, int stored_c, int64_t e, int8_t* y) {
  const int64_t pixel = e / stored_c;
  const int c = static_cast<int>(e - pixel * stored_c);
  y[e] = c < channels ? x[pixel * stored_c + c % groups * (channels / groups) + c / groups] : int8_t{0};
}

// Activation: each input level's output level from its 256-entry table
// (graph/ops/activation.h, indexed by the input + 128); 0 in the padding
// channels, whatever the table says of a 0.
OCTET_HOST_DEVICE void table_element(const int8_t* x, const int8_t* table, int channels, int stored_c, int64_t e,
                                     int8_t* y) {
  y[e] = e % stored_c < channels ? table[x[e] + 128] : int8_t{0};
}

// Pad2d: zero rows and columns around each image (the same stored channels).
struct PadShape {
  int in_h, in_w, out_h, out_w, stored_c, top, left;
};
OCTET_HOST_DEVICE void pad_element(const int8_t* x, const PadShape& s, int64_t e, int8_t* y) {
  const int64_t pixel = e / s.stored_c;
  const int c = static_cast<int>(e - pixel * s.stored_c);
  const int ox = static_cast<int>(pixel % s.out_w);
  const int64_t rows = pixel / s.out_w;
  const int oy = static_cast<int>(rows % s.out_h);
  const int64_t b = rows / s.out_h;
  const int iy = oy - s.top, ix = ox - s.left;
  const bool inside = iy >= 0 && iy < s.in_h && ix >= 0 && ix < s.in_w;
  y[e] = inside ? x[((b * s.in_h + iy) * s.in_w + ix) * s.stored_c + c] : int8_t{0};
}

}  // namespace octet::cuda
