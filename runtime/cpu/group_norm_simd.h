// The AVX-512 form of GroupNorm (group_norm_vnni.cpp). That file is compiled
// with AVX-512 flags, so call it only where kernel_path_supported says the CPU
// has them (ops/group_norm.cpp dispatches).
#pragma once

#include <cstdint>

#include "graph/ops/layer_norm.h"

namespace octet::cpu::vnni {

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

}  // namespace octet::cpu::vnni
