// The AVX-512 form of GroupNorm (group_norm_vnni.cpp). That file is compiled
// with AVX-512 flags, so call it only where kernel_path_supported says the CPU
// has them (ops/group_norm.cpp dispatches).
#pragma once

#include <cstdint>

#include "graph/ops/layer_norm.h"

namespace octet::cpu::vnni {

// GroupNorm's levels (ops::group_norm_level's bits) of `batch` NHWC samples of
// `pixels` pixels of `channels` int8 values, in `groups` groups; p.channels is
// a group's count of values.
void group_norm(const int8_t* x, int64_t batch, int64_t pixels, int64_t channels, int64_t groups,
                const ops::LayerNormLevels& p, int8_t* y);

}  // namespace octet::cpu::vnni
