// Elementwise ops over whole int8 buffers (padding channels included: zeros
// stay zeros). Shared by both CUDA backends.
#pragma once

#include "runtime/cuda/common.cuh"

namespace octet::cuda {

// out = requantize(a, multiplier_a, b, multiplier_b, shift, relu ? 0 : -128).
void add(const int8_t* a, const int8_t* b, int64_t count, int32_t multiplier_a, int32_t multiplier_b, int32_t shift,
         bool relu, int8_t* out, cudaStream_t stream);
void relu(const int8_t* in, int64_t count, int8_t* out, cudaStream_t stream);

}  // namespace octet::cuda
