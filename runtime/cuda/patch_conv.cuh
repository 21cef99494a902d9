// cuda-imma's first conv over a patches-folded image, computed straight from
// the float image in one kernel (patch_conv_kernel.h): the engine times it
// against quantizing the patches and the implicit GEMM's conv over them, and
// keeps the faster.
#pragma once

#include "runtime/cuda/common.cuh"
#include "runtime/cuda/patch_conv_kernel.h"

namespace octet::cuda {

// `weights`: the conv's folded rows as cuda-imma packs them ([out_c][row_bytes]);
// `out`: NHWC, s.out_c stored channels, 8-bit (e.bits 8, a residual of 8 bits).
void patch_conv(const PatchConvShape& s, const float* nchw, float scale, const int8_t* weights,
                const RequantEpilogue& e, int8_t* out, cudaStream_t stream);

}  // namespace octet::cuda
