// The network's tail in one kernel: global average pool, then the output
// linear layer's int32 logits, as the separate global_avg_pool (pool.cuh)
// and linear_dp4a_logits (linear_dp4a.cuh) kernels compute them, without
// the pooled vector going through global memory or a second launch.
#pragma once

#include "runtime/cuda/common.cuh"
#include "runtime/cuda/programmatic_launch.cuh"

namespace octet::cuda {

// `in`: [batch][h][w][c] (c stored channels, zeros in the padding), stored
// at in_zero_point as stored_value.h says; the pooled vector is
// requantize(window sum, pool_multiplier, pool_shift) at pool_zero_point;
// `w`: [classes][c] int8 (the linear's packed rows, depth c);
// logits[n][o] = pooled[n] . w[o] + bias[o] (pooled values centered).
void global_avg_pool_logits(const int8_t* in, int64_t batch, int h, int w, int c, int32_t pool_multiplier,
                            int32_t pool_shift, int32_t in_zero_point, int32_t pool_zero_point, const int8_t* weights,
                            int classes, const int32_t* bias, int32_t* logits, KernelStream stream);

}  // namespace octet::cuda
