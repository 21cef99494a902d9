// Grouped, depthwise and dilated convolutions over NHWC int8, every CUDA
// backend's (conv2d_grouped_kernel.h: one thread per 4 output channels of a
// pixel), with the requantizing epilogue (bias, residual, ReLU) fused.
#pragma once

#include <string>

#include "runtime/cuda/common.cuh"
#include "runtime/cuda/conv2d_grouped_kernel.h"
#include "runtime/cuda/programmatic_launch.cuh"

namespace octet::cuda {

// Why the kernel cannot run this shape, or "" when it can.
std::string conv2d_grouped_unsupported(const GroupedConvShape& s);

// `weights`: as grouped_weight_offset lays them out; `output`: NHWC, s.out_stored_c channels.
void conv2d_grouped(const GroupedConvShape& s, const int8_t* input, const int8_t* weights, const RequantEpilogue& e,
                    int8_t* output, KernelStream stream);

}  // namespace octet::cuda
