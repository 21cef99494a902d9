// The per-output-channel epilogue operands of the SIMD conv kernels
// (conv_vnni.cpp, conv_avx2.cpp): octet::requantize's operands widened to
// 64-bit lanes, padded to whole blocks of kEpilogueBlock channels so a
// kernel loads whole vectors (padding lanes compute harmless values that are
// never stored). conv2d.cpp makes them per call.
#pragma once

#include <cstdint>

namespace octet::cpu {

constexpr int kEpilogueBlock = 16;  // a multiple of every kernel's block of output channels

struct EpilogueTables {
  const int32_t* bias = nullptr;  // the layer's bias, less what the kernel's activation offset adds
  // Null for conv2d_int32 (the bias alone).
  const int64_t* multiplier = nullptr;
  const int64_t* rounding = nullptr;  // 2^(shift - 1)
  const int64_t* shift = nullptr;
  const int64_t* skip_multiplier = nullptr;  // with a fused residual
  const int8_t* skip = nullptr;              // NHWC, same shape as the output
  bool relu = false;
};

}  // namespace octet::cpu
