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

// Each kernel's weights are made once per model by its paired_taps from
// `taps`, [kernel * kernel_w][channels rounded up to kEpilogueBlock], int32,
// zero in the padding lanes: two taps at a time for each block of channels.
// `e` has the layer's own bias (the activations are read as they are) and,
// for vnni::depthwise_conv2d, its vectors (PaddedEpilogue::add_vnni_vectors,
// depth kernel * kernel_w); g.in_c == g.out_c. The AVX-512 kernel's are square.
namespace vnni {
// Pairs of a kernel row's taps; blocks of 16 channels, the last one padded with zeros.
std::vector<int16_t> paired_taps(const int32_t* taps, int kernel, int64_t channels);
void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int16_t* pairs, const EpilogueTables& e,
                      int8_t* output);
}
// Pairs of taps in order; blocks of 16 channels, the last one padded with zero
// weights (the 3x3 and 5x5 kernels read a partial block's from `taps` itself).
namespace avx2 {
std::vector<int16_t> paired_taps(const int32_t* taps, int64_t tap_count, int64_t channels);
void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const int16_t* pairs,
                      const EpilogueTables& e, int8_t* output);
}

}  // namespace octet::cpu
