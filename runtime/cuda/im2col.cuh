// Patch rows of a convolution for the cuBLASLt GEMM.
#pragma once

#include "runtime/cuda/common.cuh"
#include "runtime/cuda/programmatic_launch.cuh"

namespace octet::cuda {

// cols[m][k] for every output pixel m (rows()) and k < depth() in (ky, kx, c)
// order over the padded channels; zero where the window leaves the image.
void im2col(const ConvShape& s, const int8_t* input, int8_t* cols, KernelStream stream);

}  // namespace octet::cuda
