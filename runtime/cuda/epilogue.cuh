// After the cuBLASLt GEMM: its int32 accumulators through the same
// requantization as the dp4a kernels, or bias only for the logits.
#pragma once

#include "runtime/cuda/common.cuh"
#include "runtime/cuda/programmatic_launch.cuh"

namespace octet::cuda {

// acc: int32 [rows][out_c] (out_c padded) -> y: int8 [rows][out_c].
void requantize_accumulators(const int32_t* acc, int64_t rows, int out_c, const RequantEpilogue& e, int8_t* y,
                             KernelStream stream);

// logits[row][o] = acc[row][o] + bias[o] for o < classes; acc rows have acc_c >= classes entries.
void logits_from_accumulators(const int32_t* acc, int64_t rows, int acc_c, int classes, const int32_t* bias,
                              int32_t* logits, KernelStream stream);

}  // namespace octet::cuda
