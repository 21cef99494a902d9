// The requantizing epilogue of a CUDA conv or linear layer: its parameters
// and the per-channel step through common/requantize.h. Plain C++ with
// host+device functions (no CUDA header), so that kernels can also be
// compiled for the CPU (tests/cuda_on_cpu.h).
#pragma once

#include <cstdint>

#include "common/requantize.h"

namespace octet::cuda {

// Per-output-channel requantization of a conv or linear layer; every array
// has out_c (padded) entries in device memory, the padding channels having
// bias 0, multiplier 0 and shift 1 so that they come out 0.
struct RequantEpilogue {
  const int32_t* bias = nullptr;
  const int32_t* multiplier = nullptr;
  const int32_t* shift = nullptr;
  const int32_t* skip_multiplier = nullptr;  // with `skip`
  const int8_t* skip = nullptr;              // fused residual: same layout as the output, or null
  bool relu = false;
};

// The int8 output of channel `c` at NHWC offset `at` (row * out_c + c) from its accumulator.
OCTET_HOST_DEVICE int32_t requantize_output(int32_t acc, int c, int64_t at, const RequantEpilogue& e) {
  const int32_t skip = e.skip ? e.skip[at] : 0;
  const int32_t skip_multiplier = e.skip ? e.skip_multiplier[c] : 0;
  return ::octet::requantize(acc + e.bias[c], e.multiplier[c], skip, skip_multiplier, e.shift[c], e.relu ? 0 : -128);
}

// Four int8 values (in [-128, 127]) as one little-endian word, element 0 at the lowest address.
OCTET_HOST_DEVICE uint32_t pack_int8x4(int32_t v0, int32_t v1, int32_t v2, int32_t v3) {
  return (static_cast<uint32_t>(v0) & 0xFFu) | ((static_cast<uint32_t>(v1) & 0xFFu) << 8) |
         ((static_cast<uint32_t>(v2) & 0xFFu) << 16) | ((static_cast<uint32_t>(v3) & 0xFFu) << 24);
}

}  // namespace octet::cuda
