// Four int8 values as one 32-bit word, as the CUDA kernels store them. Plain
// C++ with host+device functions (no CUDA header), so that kernels can also be
// compiled for the CPU (tests/cuda/cuda_on_cpu.h).
#pragma once

#include <cstdint>

#include "common/requantize.h"

namespace octet::cuda {

// Four int8 values (in [-128, 127]) as one little-endian word, element 0 at the lowest address.
OCTET_HOST_DEVICE uint32_t pack_int8x4(int32_t v0, int32_t v1, int32_t v2, int32_t v3) {
  return (static_cast<uint32_t>(v0) & 0xFFu) | ((static_cast<uint32_t>(v1) & 0xFFu) << 8) |
         ((static_cast<uint32_t>(v2) & 0xFFu) << 16) | ((static_cast<uint32_t>(v3) & 0xFFu) << 24);
}

}  // namespace octet::cuda
