// The int8 form of the LayerNorm operator (graph/ops/layer_norm.cpp), one
// function for every backend and the oracle, so they compute the same bits.
#pragma once

#include <cstdint>

namespace octet::ops {

// Most channels a layer norm normalises: their integer sums then fit int64.
constexpr int64_t kMaxLayerNormChannels = int64_t{1} << 20;

// What one pixel's int8 normalisation reads besides its values.
struct LayerNormLevels {
  int64_t channels;
  double input_scale;     // the input's levels per unit (NodeQuant::scale)
  double output_scale;    // the output's
  int32_t input_zero_point, output_zero_point;
  double epsilon;
};

// One pixel's normalisation from the exact integer statistics of its values
// less the input's zero point (sum, and sum of squares): the value of stored
// level x_c is d_c / sqrt(V + epsilon C^2 s_in^2), d_c = C x_c - offset, V =
// C squares - sum^2 (s_in: levels per unit), and its output level
// clamp(layer_norm_level(d_c, m) + z_out, -128, 127): round half to even of
// d_c m, m = layer_norm_multiplier (common/layer_norm.h, which every kernel
// shares, the CUDA one too).
struct LayerNormPixel {
  int64_t offset;  // sum + C z_in
  double m;
};
LayerNormPixel layer_norm_pixel(int64_t sum, int64_t squares, const LayerNormLevels& p);

// The `channels` output levels of one pixel's stored levels `x` (stride 1;
// int8, or int16 where wide): layer_norm_pixel, one value at a time.
template <typename T>
void layer_norm_levels(const T* x, const LayerNormLevels& p, int8_t* y);

}  // namespace octet::ops
