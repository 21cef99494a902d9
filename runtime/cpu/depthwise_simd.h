// The SIMD depthwise convolutions (one output channel per input channel):
// AVX-512 (depthwise_vnni.cpp) and AVX2 (depthwise_avx2.cpp). Those files are
// compiled with their instruction sets, so call each only when
// kernel_path_supported says the CPU has it (ops/conv2d_grouped.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/cpu/conv_epilogue.h"
#include "runtime/cpu/kernels.h"

namespace octet::cpu {

// Both take `taps` as [kernel * kernel][channels rounded up to
// kEpilogueBlock], int32, zero in the padding lanes, and `e` with the layer's
// own bias (the activations are read as they are); g.in_c == g.out_c.
namespace vnni {
void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const EpilogueTables& e,
                      int8_t* output);
}
// The AVX2 kernel takes `pairs` too, made once by paired_taps from `taps`:
// its weights of two taps at a time for each whole block of 16 channels.
namespace avx2 {
std::vector<int16_t> paired_taps(const int32_t* taps, int64_t tap_count, int64_t channels);
void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const int16_t* pairs,
                      const EpilogueTables& e, int8_t* output);
}

}  // namespace octet::cpu
