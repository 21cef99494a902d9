// The CUDA runtime's operators that move or rescale channels (concat, mul,
// channel slice and shuffle, pad, option A shortcuts, channel mean and max: one output byte per
// thread; activation and PRelu tables: one vector of bytes per thread; layer
// norm: a pixel per group of threads, a vector per thread at a time; group
// norm: a group of a sample per block of threads; local response norm: one
// output byte per thread): each
// thread's work as a plain C++ function with host and device qualifiers, so that the
// host executor of the device layout (tests/ops) runs the kernels' own
// arithmetic on any machine. Values are NHWC with stored (padded) channels,
// stored as stored_value.h says; every output's padding channels come out 0.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/layer_norm.h"
#include "graph/ops/mul.h"
#include "runtime/cuda/stored_value.h"

namespace octet::cuda {

// Concat: input i (its `channels` real channels of `in_stored_c`) requantized
// into output channels [first, first + channels). Element e of the
// pixels x channels of this input.
// The zero points: the input's and the output's.
OCTET_HOST_DEVICE void concat_element(const int8_t* x, int in_stored_c, int channels, int first, int out_stored_c,
                                      int32_t multiplier, int32_t shift, int32_t in_zero_point,
                                      int32_t out_zero_point, int64_t e, int8_t* y) {
  const int64_t pixel = e / channels;
  const int c = static_cast<int>(e - pixel * channels);
  const int32_t v = stored_value(x[pixel * in_stored_c + c], stored_unsigned(in_zero_point));
  y[pixel * out_stored_c + first + c] =
      static_cast<int8_t>(requantize_stored(v, multiplier, 0, 0, shift, stored_range(false, out_zero_point)));
}

// The output channels [from, stored_c) of pixel e / (stored_c - from) set to 0.
OCTET_HOST_DEVICE void zero_channels_element(int from, int stored_c, int64_t e, int8_t* y) {
  const int64_t pixel = e / (stored_c - from);
  y[pixel * stored_c + from + (e - pixel * (stored_c - from))] = 0;
}

// Mul: element e of x times z's (z: the same storage; one pixel per sample,
// per channel; or one channel of `z_stored_c` per pixel, per pixel),
// requantized by one multiplier. Padding channels are 0 in x, so 0 in the
// product and after requantization. `zero_points`: x's (a), z's (b) and the
// output's.
OCTET_HOST_DEVICE void mul_element(const int8_t* x, const int8_t* z, ops::MulGate gate, int64_t pixels, int stored_c,
                                   int z_stored_c, int32_t multiplier, int32_t shift, BinaryZeroPoints zero_points,
                                   int64_t e, int8_t* y) {
  const int64_t per_sample = pixels * stored_c;
  const int64_t ze = gate == ops::MulGate::PerChannel ? e / per_sample * stored_c + e % stored_c
                     : gate == ops::MulGate::PerPixel ? e / stored_c * z_stored_c
                                                      : e;
  const int32_t product = stored_value(x[e], stored_unsigned(zero_points.a)) *
                          stored_value(z[ze], stored_unsigned(zero_points.b));
  y[e] = static_cast<int8_t>(
      requantize_stored(product, multiplier, 0, 0, shift, stored_range(false, zero_points.out)));
}

// ChannelMean and ChannelMax: output element e (of each pixel's `out_stored_c`)
// is, for channel 0, the pixel's `channels` stored values summed and
// requantized, or the largest of them (stored as it is: the output keeps the
// input's zero point); for the padding channels 0.
struct ChannelReduceOperands {
  int channels, in_stored_c, out_stored_c;
  bool unsigned_in, max;
  int32_t multiplier, shift;
  StoredRange range;
};
OCTET_HOST_DEVICE void channel_reduce_element(const int8_t* x, const ChannelReduceOperands& o, int64_t e, int8_t* y) {
  const int64_t pixel = e / o.out_stored_c;
  if (e != pixel * o.out_stored_c) {
    y[e] = 0;
    return;
  }
  const int8_t* in = x + pixel * o.in_stored_c;
  int32_t sum = 0, best = stored_value(in[0], o.unsigned_in);
  for (int c = 0; c < o.channels; ++c) {
    const int32_t v = stored_value(in[c], o.unsigned_in);
    sum += v;
    best = v > best ? v : best;
  }
  y[e] = static_cast<int8_t>(o.max ? best : requantize_stored(sum, o.multiplier, 0, 0, o.shift, o.range));
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

// The table and LayerNorm kernels load and store W bytes at a time: 16 where a
// pixel's stored channels are a multiple of 16 (cuda-imma's layout), else 4
// (cuda-dp4a's and cuda-cublaslt's multiple): one instruction each, and a
// vector never straddles two pixels. On an H200 the byte-per-thread table and
// pixel-per-thread LayerNorm kernels took 22 of ConvNeXt-T's 39.5 ms.
template <int W>
struct alignas(W) ByteVector {
  int8_t b[W];
};
OCTET_HOST_DEVICE int vector_bytes(int stored_c) { return stored_c % 16 == 0 ? 16 : 4; }
// Calls f(std::integral_constant<int, W>{}) with vector_bytes(stored_c): the
// launchers and the host executor pick W alike.
template <typename F>
void visit_vector_bytes(int stored_c, F&& f) {
  if (vector_bytes(stored_c) == 16)
    f(std::integral_constant<int, 16>{});
  else
    f(std::integral_constant<int, 4>{});
}

// Activation of one vector, channels first_channel.. of a pixel: each stored
// input byte's stored output from its 256-entry table
// (stored_activation_table); 0 in the padding channels, whatever the table
// says of a 0.
template <int W>
OCTET_HOST_DEVICE ByteVector<W> table_vector(const ByteVector<W>& in, const int8_t* table, int first_channel,
                                             int channels) {
  ByteVector<W> out;
  for (int i = 0; i < W; ++i)
    out.b[i] = first_channel + i < channels ? table[static_cast<uint8_t>(in.b[i])] : int8_t{0};
  return out;
}

// graph/ops/activation.h's table (output level by input level + 128) indexed
// by the stored input byte, giving the stored output, at the zero points given.
inline std::array<int8_t, 256> stored_activation_table(const std::array<int8_t, 256>& levels, int32_t in_zero_point,
                                                       int32_t out_zero_point) {
  std::array<int8_t, 256> stored{};
  for (int byte = 0; byte < 256; ++byte) {
    const int32_t level = stored_value(static_cast<int8_t>(byte), stored_unsigned(in_zero_point)) + in_zero_point;
    stored[byte] = static_cast<int8_t>(levels[level + 128] - out_zero_point);
  }
  return stored;
}

// PRelu of one vector, channels first_channel.. of a pixel: each stored input
// byte's stored output from its channel's 256-entry table
// (stored_channel_tables); 0 in the padding channels.
template <int W>
OCTET_HOST_DEVICE ByteVector<W> channel_table_vector(const ByteVector<W>& in, const int8_t* tables, int first_channel,
                                                     int channels) {
  ByteVector<W> out;
  for (int i = 0; i < W; ++i) {
    const int c = first_channel + i;
    out.b[i] = c < channels ? tables[c * 256 + static_cast<uint8_t>(in.b[i])] : int8_t{0};
  }
  return out;
}

// graph/ops/prelu.h's tables (256 levels per channel), each made a stored
// table as stored_activation_table makes one.
inline std::vector<int8_t> stored_channel_tables(const std::vector<int8_t>& levels, int32_t in_zero_point,
                                                 int32_t out_zero_point) {
  std::vector<int8_t> stored(levels.size());
  for (size_t first = 0; first + 256 <= levels.size(); first += 256) {
    std::array<int8_t, 256> channel;
    std::copy_n(levels.begin() + static_cast<std::ptrdiff_t>(first), 256, channel.begin());
    const std::array<int8_t, 256> table = stored_activation_table(channel, in_zero_point, out_zero_point);
    std::copy(table.begin(), table.end(), stored.begin() + static_cast<std::ptrdiff_t>(first));
  }
  return stored;
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

// Upsample: output pixel (oy, ox) is input pixel (oy / down, ox / across), all its stored channels.
struct UpsampleShape {
  int in_h, in_w, down, across, stored_c;
};
OCTET_HOST_DEVICE void upsample_element(const int8_t* x, const UpsampleShape& s, int64_t e, int8_t* y) {
  const int64_t pixel = e / s.stored_c;
  const int c = static_cast<int>(e - pixel * s.stored_c);
  const int out_w = s.in_w * s.across;
  const int ox = static_cast<int>(pixel % out_w);
  const int64_t rows = pixel / out_w;
  const int oy = static_cast<int>(rows % (int64_t{s.in_h} * s.down));
  const int64_t b = rows / (int64_t{s.in_h} * s.down);
  y[e] = x[((b * s.in_h + oy / s.down) * s.in_w + ox / s.across) * s.stored_c + c];
}

// LayerNorm of a pixel's `channels` values (graph/ops/layer_norm.h, by
// common/layer_norm.h's arithmetic): its stored inputs are the values less the
// input's zero point already, its stored outputs the levels less the output's.
// A group of layer_norm_lanes threads shares a pixel, lane l holding its
// vectors l, l + lanes, ...: each lane adds its vectors' sums
// (add_layer_norm_sums), the group adds the lanes' (warp shuffles), then each
// lane writes its vectors (layer_norm_vector). The sums are integers, so the
// grouping cannot change them.
struct LayerNormOperands {
  int channels, stored_c;
  bool unsigned_in;
  int32_t out_zero_point;
  double epsilon, input_scale, output_scale;
};
struct LayerNormSums {
  int64_t sum = 0, squares = 0;
};
// The smallest power of two of lanes holding at most one vector each, at most a warp.
OCTET_HOST_DEVICE int layer_norm_lanes(int vectors) {
  int lanes = 1;
  while (lanes < vectors && lanes < 32) lanes *= 2;
  return lanes;
}
// Padding channels are 0 bytes, stored value 0 signed or not: adding them changes nothing.
template <int W>
OCTET_HOST_DEVICE void add_layer_norm_sums(const ByteVector<W>& in, const LayerNormOperands& o, LayerNormSums& s) {
  for (int i = 0; i < W; ++i) {
    const int64_t v = stored_value(in.b[i], o.unsigned_in);
    s.sum += v;
    s.squares += v * v;
  }
}
// The vector's stored outputs, from the pixel's sum and multiplier m (layer_norm_multiplier).
template <int W>
OCTET_HOST_DEVICE ByteVector<W> layer_norm_vector(const ByteVector<W>& in, int first_channel,
                                                  const LayerNormOperands& o, int64_t sum, double m) {
  const double low = -128.0 - o.out_zero_point, high = 127.0 - o.out_zero_point;
  ByteVector<W> out;
  for (int i = 0; i < W; ++i) {
    const double level = first_channel + i < o.channels
                             ? layer_norm_level(o.channels * stored_value(in.b[i], o.unsigned_in) - sum, m)
                             : 0.0;
    out.b[i] = static_cast<int8_t>(static_cast<int32_t>(level < low ? low : level > high ? high : level));
  }
  return out;
}

// GroupNorm (graph/ops/group_norm.h: LayerNorm's arithmetic over each group's
// values in place of a pixel's): a block of threads per group of a sample,
// thread t holding the group's values t, t + threads, ... (value k: channel
// k % width of the group, of the sample's pixel k / width; group_norm_index).
// Each adds its values' sums (add_group_norm_sums), the block adds the
// threads' (integers: the grouping cannot change them), then each writes its
// values (group_norm_stored: with its channel's affine, group_norm.h's
// arithmetic, and the ReLU's floor), stored less the output's zero point. The
// padding channels, which belong to no group, are zeroed apart
// (zero_channels_element).
struct GroupNormOperands {
  int channels, stored_c, width;  // width: channels a group
  int64_t pixels;       // a sample's
  bool unsigned_in;
  int32_t out_zero_point, lowest;  // lowest: the lowest output level (z_out with a ReLU, else -128)
  double epsilon, input_scale, output_scale;
  const double* affine;  // (device memory on the device) each channel's g_c, then each one's b_c s_out
  OCTET_HOST_DEVICE int64_t values() const { return pixels * width; }  // a group's
};
OCTET_HOST_DEVICE int group_norm_channel(const GroupNormOperands& o, int group, int64_t k) {
  return group * o.width + static_cast<int>(k % o.width);
}
OCTET_HOST_DEVICE int64_t group_norm_index(const GroupNormOperands& o, int64_t sample, int group, int64_t k) {
  return (sample * o.pixels + k / o.width) * o.stored_c + group_norm_channel(o, group, k);
}
OCTET_HOST_DEVICE void add_group_norm_sums(int8_t stored, const GroupNormOperands& o, LayerNormSums& s) {
  const int64_t v = stored_value(stored, o.unsigned_in);
  s.sum += v;
  s.squares += v * v;
}
OCTET_HOST_DEVICE double group_norm_multiplier(int64_t sum, int64_t squares, const GroupNormOperands& o) {
  return layer_norm_multiplier(sum, squares, o.values(), o.epsilon, o.input_scale, o.output_scale);
}
// Channel c's stored output.
OCTET_HOST_DEVICE int8_t group_norm_stored(int8_t stored, int c, const GroupNormOperands& o, int64_t sum, double m) {
  const double low = double(o.lowest) - o.out_zero_point, high = 127.0 - o.out_zero_point;
  const double gain = m * o.affine[c];  // group_norm_gain's product
  const double level =
      ::rint(::fma(double(o.values() * stored_value(stored, o.unsigned_in) - sum), gain, o.affine[o.channels + c]));
  return static_cast<int8_t>(static_cast<int32_t>(level < low ? low : level > high ? high : level));
}

// LocalResponseNorm (graph/ops/local_response_norm.h): output byte e's window
// of channels summed anew from the stored values (the values less the
// input's zero point), its level rint(value m(S)) with m from `multipliers`,
// the host's local_response_multipliers by S, stored less the output's zero point.
struct LocalResponseOperands {
  int channels, stored_c, size;
  bool unsigned_in;
  int32_t out_zero_point;
};
OCTET_HOST_DEVICE void local_response_element(const int8_t* x, const LocalResponseOperands& o,
                                              const double* multipliers, int64_t e, int8_t* y) {
  const int64_t pixel = e / o.stored_c;
  const int c = static_cast<int>(e - pixel * o.stored_c);
  if (c >= o.channels) {
    y[e] = 0;
    return;
  }
  const int8_t* in = x + pixel * o.stored_c;
  const int first = c - (o.size - 1) / 2 > 0 ? c - (o.size - 1) / 2 : 0;
  const int last = c + o.size / 2 < o.channels ? c + o.size / 2 : o.channels - 1;
  int64_t squares = 0;
  for (int k = first; k <= last; ++k) {
    const int64_t v = stored_value(in[k], o.unsigned_in);
    squares += v * v;
  }
  const double level = ::rint(double(stored_value(in[c], o.unsigned_in)) * multipliers[squares]);
  const double low = -128.0 - o.out_zero_point, high = 127.0 - o.out_zero_point;
  y[e] = static_cast<int8_t>(static_cast<int32_t>(level < low ? low : level > high ? high : level));
}

// ShortcutA (He et al.'s option A): every second pixel of every second row,
// with `pad` zero channels before the input's `c` real ones (of `in_stored_c`)
// and zeros after them up to `out_stored_c`.
struct ShortcutAShape {
  int h, w, c, in_stored_c, pad, out_stored_c;
  OCTET_HOST_DEVICE int out_h() const { return (h + 1) / 2; }
  OCTET_HOST_DEVICE int out_w() const { return (w + 1) / 2; }
};
OCTET_HOST_DEVICE void shortcut_a_element(const int8_t* x, const ShortcutAShape& s, int64_t e, int8_t* y) {
  const int64_t pixel = e / s.out_stored_c;
  const int c = static_cast<int>(e - pixel * s.out_stored_c) - s.pad;
  const int ox = static_cast<int>(pixel % s.out_w());
  const int64_t rows = pixel / s.out_w();
  const int oy = static_cast<int>(rows % s.out_h());
  const int64_t b = rows / s.out_h();
  y[e] = c >= 0 && c < s.c ? x[((b * s.h + 2 * oy) * s.w + 2 * ox) * s.in_stored_c + c] : int8_t{0};
}

}  // namespace octet::cuda
