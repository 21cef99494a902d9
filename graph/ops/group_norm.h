// The int8 form of the GroupNorm operator (graph/ops/group_norm.cpp), one
// function for every backend and the oracle, so they compute the same bits.
// (No AVX file includes this header: its inline function is baseline code.)
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/layer_norm.h"
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
// and multiplier. Stored level x's output level:
// clamp(rint((count x - offset) m) + z_out, -128, 127).
inline int8_t group_norm_level(int64_t x, const LayerNormLevels& p, const LayerNormPixel& group) {
  const double level = layer_norm_level(p.channels * x - group.offset, group.m);
  return static_cast<int8_t>(std::clamp(level + p.output_zero_point, -128.0, 127.0));
}

}  // namespace octet::ops
