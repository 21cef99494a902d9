// Pooling over NHWC values stored as stored_value.h says, at the zero points
// given (shared by every CUDA backend; the kernels' work in pool_kernel.h).
// `c` is the stored (padded) channel count.
#pragma once

#include "common/tensor.h"
#include "runtime/cuda/common.cuh"
#include "runtime/cuda/pool_kernel.h"
#include "runtime/cuda/programmatic_launch.cuh"

namespace octet::cuda {

// Pool node n's window (graph.h's pool_rows and pool_columns; an average pool's exclude_padding).
void max_pool(const int8_t* in, int64_t batch, const ActShape& in_shape, int c, const ActShape& out_shape,
              const Node& n, int32_t zero_point, int8_t* out, KernelStream stream);
// The int32 sum of each window, requantized with the multiplier of its count
// (`multipliers`: NodeQuant's, one or one per count; at most kMostPoolMultipliers).
void avg_pool(const int8_t* in, int64_t batch, const ActShape& in_shape, int c, const ActShape& out_shape,
              const Node& n, const Int32Tensor& multipliers, int32_t shift, int32_t in_zero_point,
              int32_t out_zero_point, int8_t* out, KernelStream stream);
// The int32 sum over each channel's whole plane, requantized; out is [batch][c].
void global_avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int32_t multiplier, int32_t shift,
                     int32_t in_zero_point, int32_t out_zero_point, int8_t* out, KernelStream stream);

}  // namespace octet::cuda
