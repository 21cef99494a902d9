// Elementwise ops over whole stored buffers (padding channels included: zeros
// stay zeros). Shared by both CUDA backends.
#pragma once

#include "runtime/cuda/common.cuh"
#include "runtime/cuda/programmatic_launch.cuh"
#include "runtime/cuda/stored_value.h"

namespace octet::cuda {

// out = requantize(a, multiplier_a, b, multiplier_b, shift, the output's lowest
// (relu)), every value stored as stored_value.h says.
void add(const int8_t* a, const int8_t* b, int64_t count, int32_t multiplier_a, int32_t multiplier_b, int32_t shift,
         bool relu, BinaryZeroPoints zero_points, int8_t* out, KernelStream stream);
// Input and output at `zero_point`.
void relu(const int8_t* in, int64_t count, int32_t zero_point, int8_t* out, KernelStream stream);

}  // namespace octet::cuda
