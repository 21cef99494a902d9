// The AVX2 convolution kernels (conv_avx2.cpp), for x86-64 CPUs without
// AVX-512 VNNI. That file is compiled with AVX2 flags, so call these only when
// kernel_path_supported(KernelPath::Avx2); conv2d.cpp dispatches.
//
// AVX2's int8 multiply-add (vpmaddubsw) saturates its int16 sums of two
// products, unless the unsigned operand stays below 128: the kernels use it
// when no input value is negative (a ReLU's output), and otherwise widen both
// operands to int16 and use vpmaddwd, which adds two int16 x int16 products
// into an int32 lane exactly. Either way the accumulators are the reference
// path's integers, and the requantization is octet::requantize's in 64-bit
// vector lanes, so the outputs are identical.
#pragma once

#include <cstdint>

#include "runtime/cpu/conv_epilogue.h"
#include "runtime/cpu/kernels.h"

namespace octet::cpu::avx2 {

constexpr int kBlock = 8;  // output channels per block of PackedWeights::blocked_pairs and blocked_quads

// Bytes of the scratch buffer conv2d needs for `g` (a padded int16 tile of the
// input per OpenMP thread).
int64_t workspace_bytes(const ConvGeometry& g);

// `blocked_pairs` and `blocked_quads` are PackedWeights's; `e`'s bias is the
// layer's; `workspace` holds workspace_bytes(g) bytes, 2-byte aligned. Exactly
// one of `output` (int8, requantized; int16 where e.bits > 8) and `logits`
// (int32 accumulators + bias) is non-null. A wide input (g.input_bits > 8) is int16.
void conv2d(const ConvGeometry& g, const int8_t* input, const int16_t* blocked_pairs, const int8_t* blocked_quads,
            const EpilogueTables& e, uint8_t* workspace, int8_t* output, int32_t* logits);

}  // namespace octet::cpu::avx2
