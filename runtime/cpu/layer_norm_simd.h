// The SIMD forms of LayerNorm: AVX-512 (layer_norm_vnni.cpp) and AVX2
// (layer_norm_avx2.cpp). Those files are compiled with their instruction
// sets, so call each only where kernel_path_supported says the CPU has them
// (ops/layer_norm.cpp dispatches).
#pragma once

#include <cstdint>

#include "graph/ops/layer_norm.h"

namespace octet::cpu {

// Channels up to which the SIMD forms' int32 statistics cannot overflow
// (C x 255^2 < 2^31); more go to the portable kernel.
constexpr int64_t kMostVectorLayerNormChannels = 16384;

namespace vnni {
// ops::layer_norm_levels of `pixels` NHWC pixels of p.channels int8 values each.
void layer_norm(const int8_t* x, int64_t pixels, const ops::LayerNormLevels& p, int8_t* y);
}
namespace avx2 {
// The same, p.channels a multiple of 16.
void layer_norm(const int8_t* x, int64_t pixels, const ops::LayerNormLevels& p, int8_t* y);
}

}  // namespace octet::cpu
