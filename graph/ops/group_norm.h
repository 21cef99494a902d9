// The int8 form of the GroupNorm operator (graph/ops/group_norm.cpp), one
// function for every backend and the oracle, so they compute the same bits.
// (No AVX file includes this header: its inline function is baseline code.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/layer_norm.h"
#include "common/tensor.h"
#include "graph/ops/layer_norm.h"

namespace octet::ops {

// Most values one group holds, (C / groups) x H x W of one sample: the
// integer statistics of so many fit int64 (layer_norm_multiplier's
// count x squares - sum^2 below 2^60).
constexpr int64_t kMostGroupNormValues = int64_t{1} << 22;

// A group is normalised as LayerNorm normalises a pixel (layer_norm.h), its
// values in place of a pixel's channels: LayerNormLevels::channels is the
// group's count of values, and layer_norm_pixel of the exact sum and sum of
// squares of its stored levels less the input's zero point gives its offset
// and multiplier m. Channel c's affine (scale g_c, shift b_c; 1 and 0 without
// one) and a fused ReLU then give stored level x's output level
// clamp(rint(fma(count x - offset, m g_c, b_c s_out)) + z_out, lowest, 127):
// m g_c one product (group_norm_gain), b_c s_out another
// (GroupNormChannel::shift), one rounding of their sum; lowest is z_out with
// a ReLU, else -128. Without an affine that is rint((count x - offset) m).
struct GroupNormChannel {
  double scale = 1;  // g_c
  double shift = 0;  // b_c s_out: the shift in output levels
};
inline double group_norm_gain(const LayerNormPixel& group, const GroupNormChannel& c) { return group.m * c.scale; }
inline int8_t group_norm_level(int64_t x, const LayerNormLevels& p, const LayerNormPixel& group, double gain,
                               double shift, double lowest) {
  const double level = std::rint(std::fma(double(p.channels * x - group.offset), gain, shift));
  return static_cast<int8_t>(std::clamp(level + p.output_zero_point, lowest, 127.0));
}

// Each channel's affine in int8 (`scale`, `shift`: the node's affine, empty
// without one; s_out: its output scale).
std::vector<GroupNormChannel> group_norm_channels(int64_t channels, const FloatTensor& scale, const FloatTensor& shift,
                                                  double output_scale);

}  // namespace octet::ops
