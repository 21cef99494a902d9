// Implicit-GEMM int8 convolution with __dp4a: output pixels x output channels
// tiles, the receptive fields read straight from the NHWC input (no im2col
// buffer), and the requantizing epilogue (bias, residual, ReLU) fused.
#pragma once

#include <string>

#include "runtime/cuda/common.cuh"
#include "runtime/cuda/programmatic_launch.cuh"

namespace octet::cuda {

// Why the kernel cannot run this shape, or "" when it can.
std::string conv2d_dp4a_unsupported(const ConvShape& s);

// `weights`: [out_c][kernel][kernel][in_c] (padded channels, zero padding rows);
// `output`: NHWC [rows][out_c]; input and output stored as stored_value.h
// says (`unsigned_input`: the input's zero point is -128).
void conv2d_dp4a(const ConvShape& s, const int8_t* input, bool unsigned_input, const int8_t* weights,
                 const RequantEpilogue& e, int8_t* output, KernelStream stream);

}  // namespace octet::cuda
