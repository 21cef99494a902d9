// The description of an int8 convolution that the CUDA backends' dense
// kernels take (cuda-dp4a's, cuda-cublaslt's im2col). Plain C++: kernel
// headers that tests/cuda/cuda_on_cpu.h compiles for the CPU include it.
#pragma once

#include <cstdint>

#include "common/requantize.h"  // OCTET_HOST_DEVICE

namespace octet::cuda {

// A convolution over NHWC int8 with padded channels; a linear layer is the
// 1x1 case over a 1x1 image whose "channels" are the flattened input.
struct ConvShape {
  int64_t batch = 0;
  int in_h = 1, in_w = 1, in_c = 0;     // in_c: padded (a multiple of 4)
  int out_h = 1, out_w = 1, out_c = 0;  // out_c: padded (a multiple of 4)
  int kernel = 1, stride = 1, padding = 0;
  OCTET_HOST_DEVICE int64_t rows() const { return batch * out_h * out_w; }             // GEMM M
  OCTET_HOST_DEVICE int64_t depth() const { return int64_t(kernel) * kernel * in_c; }  // GEMM K, a multiple of 4
  // The input rows are the patches (no im2col needed).
  bool is_pointwise() const { return kernel == 1 && stride == 1 && padding == 0; }
};

}  // namespace octet::cuda
