// The AVX-512 VNNI convolution kernels (conv_vnni.cpp). That file is compiled
// with AVX-512 flags, so call these only when
// kernel_path_supported(KernelPath::Avx512Vnni); kernels.cpp dispatches.
//
// vpdpbusd multiplies unsigned by signed bytes, so the kernels read the
// activations plus 128 (x ^ 0x80) and the epilogue subtracts 128 * (sum of the
// channel's weights), folded into the bias. The integers that reach the
// requantization are those of the reference path, and the requantization is
// octet::requantize's in 64-bit vector lanes, so the outputs are identical.
#pragma once

#include <cstdint>

#include "runtime/cpu/kernels.h"

namespace octet::cpu::vnni {

constexpr int kBlock = 16;  // output channels per block of PackedWeights::blocked

// Per-output-channel epilogue, padded to whole blocks of 16 channels.
struct EpilogueTables {
  const int32_t* bias = nullptr;  // bias - 128 * row_sum
  // requantize's operands widened to 64-bit lanes; null for conv2d_int32.
  const int64_t* multiplier = nullptr;
  const int64_t* rounding = nullptr;  // 2^(shift - 1)
  const int64_t* shift = nullptr;
  const int64_t* skip_multiplier = nullptr;  // with a fused residual
  const int8_t* skip = nullptr;              // NHWC, same shape as the output
  bool relu = false;
};

// Bytes of the scratch buffer conv2d needs for `g` (the padded input image).
int64_t workspace_bytes(const ConvGeometry& g);

// `blocked` is PackedWeights::blocked; `workspace` holds workspace_bytes(g)
// bytes. Exactly one of `output` (int8, requantized) and `logits` (int32
// accumulators + bias) is non-null.
void conv2d(const ConvGeometry& g, const int8_t* input, const int8_t* blocked, const EpilogueTables& e,
            uint8_t* workspace, int8_t* output, int32_t* logits);

}  // namespace octet::cpu::vnni
