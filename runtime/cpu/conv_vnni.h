// The AVX-512 VNNI convolution kernels (conv_vnni.cpp). That file is compiled
// with AVX-512 flags, so call these only when
// kernel_path_supported(KernelPath::Avx512Vnni); conv2d.cpp dispatches.
//
// vpdpbusd multiplies unsigned by signed bytes, so the kernels read the
// activations plus 128 (x ^ 0x80), pad with the input's zero point plus 128,
// and the epilogue subtracts activation_offset(g) * (sum of the channel's
// weights), folded into the bias. A wide input's int16 values are read as
// they are (vpdpwssd), padded with its zero point. The integers that reach the
// requantization are those of the reference path, and the requantization is
// octet::requantize's in 64-bit vector lanes, so the outputs are identical.
#pragma once

#include <cstdint>

#include "runtime/cpu/conv_epilogue.h"
#include "runtime/cpu/kernels.h"

namespace octet::cpu::vnni {

constexpr int kBlock = 16;  // output channels per block of PackedWeights::blocked

// What the kernels' padded image holds for a real 0: the input's zero point
// plus 128 (a wide input's is its zero point: its values are read as they are).
inline uint32_t activation_offset(const ConvGeometry& g) {
  return static_cast<uint32_t>(g.input_bits > 8 ? g.input_zero_point : 128 + g.input_zero_point);
}

// Bytes of the scratch buffer conv2d needs for `g` (the padded input image).
int64_t workspace_bytes(const ConvGeometry& g);

// `blocked` is PackedWeights::blocked; `e`'s bias is bias - activation_offset(g) * row_sum,
// and it has its vectors (PaddedEpilogue::add_vnni_vectors, depth g.depth());
// `workspace` holds workspace_bytes(g) bytes. Exactly one of `output` (int8,
// requantized; int16 where e.bits > 8) and `logits` (int32 accumulators +
// bias) is non-null.
void conv2d(const ConvGeometry& g, const int8_t* input, const int8_t* blocked, const EpilogueTables& e,
            uint8_t* workspace, int8_t* output, int32_t* logits);
// A wide input (g.input_bits > 8, int16 values) on PackedWeights::blocked_wide.
void conv2d(const ConvGeometry& g, const int16_t* input, const int16_t* blocked_wide, const EpilogueTables& e,
            uint8_t* workspace, int8_t* output, int32_t* logits);

}  // namespace octet::cpu::vnni
