// Pooling over NHWC int8 (shared by both CUDA backends). `c` is the stored
// (padded) channel count: padding channels hold zeros and pool to zeros.
// Windows have no padding, as in the graph: out = (in - kernel) / stride + 1.
#pragma once

#include "runtime/cuda/common.cuh"

namespace octet::cuda {

void max_pool(const int8_t* in, int64_t batch, int h, int w, int c, int kernel, int stride, int8_t* out,
              cudaStream_t stream);
// The int32 sum of each window, requantized with (multiplier, shift).
void avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int kernel, int stride, int32_t multiplier,
              int32_t shift, int8_t* out, cudaStream_t stream);
// The int32 sum over each channel's whole plane, requantized; out is [batch][c].
void global_avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int32_t multiplier, int32_t shift,
                     int8_t* out, cudaStream_t stream);

}  // namespace octet::cuda
