// Int8 GEMM with __dp4a for linear layers: y[row][o] = x[row] . w[o] over K
// bytes, with the requantizing epilogue fused, or bias only for the logits.
// Linear layers have few rows (the batch), so one warp computes one output.
#pragma once

#include <string>

#include "runtime/cuda/common.cuh"
#include "runtime/cuda/programmatic_launch.cuh"

namespace octet::cuda {

// Why the kernel cannot run `rows` x `depth` inputs against `out_c` weight rows, or "".
std::string linear_dp4a_unsupported(int64_t rows, int64_t depth, int out_c);

// `x`: [rows][depth], `w`: [out_c][depth] (depth a multiple of 4, out_c
// padded); `y`: [rows][out_c]; x and y stored as stored_value.h says
// (`unsigned_x`: x's zero point is -128).
void linear_dp4a(const int8_t* x, bool unsigned_x, const int8_t* w, int64_t rows, int64_t depth, int out_c,
                 const RequantEpilogue& e, int8_t* y, KernelStream stream);

// The network's output: logits[row][o] = x[row] . w[o] + bias[o] for o < classes (no padding).
void linear_dp4a_logits(const int8_t* x, bool unsigned_x, const int8_t* w, int64_t rows, int64_t depth, int classes,
                        const int32_t* bias, int32_t* logits, KernelStream stream);

}  // namespace octet::cuda
