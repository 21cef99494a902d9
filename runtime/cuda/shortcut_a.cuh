// He et al. option A shortcut over NHWC int8: stride-2 subsample and `pad`
// zero channels on each side. Shared by both CUDA backends.
#pragma once

#include "runtime/cuda/common.cuh"
#include "runtime/cuda/programmatic_launch.cuh"

namespace octet::cuda {

// `in`: [batch][h][w][in_stride] holding `c` real channels; `out`:
// [batch][(h+1)/2][(w+1)/2][out_stride] with channels pad .. pad+c-1 copied
// and every other channel (padding included) zero.
void shortcut_a(const int8_t* in, int64_t batch, int h, int w, int c, int in_stride, int pad, int out_stride,
                int8_t* out, KernelStream stream);

}  // namespace octet::cuda
