// The SIMD forms of GroupNorm: AVX-512 (group_norm_vnni.cpp) and AVX2's
// output levels (group_norm_avx2.cpp). Those files are compiled with their
// instruction sets, so call each only where the CPU has them (ops/group_norm.cpp
// dispatches).
#pragma once

#include <cstdint>

#include "graph/ops/layer_norm.h"

namespace octet::cpu {

namespace avx2 {
// One sample's terms of ops::group_norm_level, per channel (offset: its
// group's; gain: m g_c; shift: b_c s_out), and the group's count of values,
// the output zero point and the lowest output level.
struct GroupNormTerms {
  const double *offset, *gain, *shift;
  double count, lowest;
  int32_t output_zero_point;
};
// ops::group_norm_level of `pixels` NHWC pixels of C values (a multiple of 16) of one sample.
void group_norm_pixels(const int8_t* x, int64_t pixels, int64_t C, const GroupNormTerms& t, int8_t* y);
}  // namespace avx2

namespace vnni {

struct GroupNormShape {
  int64_t batch, pixels, channels, groups;  // NHWC samples of pixels x channels int8 values
};
// Values past the channels that the kernel reads of the shifts (whole vectors).
constexpr int64_t kGroupNormShiftPadding = 64;
// Each channel's affine (ops::GroupNormChannel's scale and shift, [channels]
// each; the shifts readable kGroupNormShiftPadding past them) and the lowest
// output level (the output zero point with a fused ReLU, else -128).
struct GroupNormAffine {
  const double *scales, *shifts;
  double lowest;
};
// GroupNorm's levels (ops::group_norm_level's bits); p.channels is a group's count of values.
void group_norm(const int8_t* x, const GroupNormShape& s, const ops::LayerNormLevels& p, const GroupNormAffine& a,
                int8_t* y);
}  // namespace vnni

}  // namespace octet::cpu
