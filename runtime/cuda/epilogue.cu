#include "runtime/cuda/epilogue.cuh"

#include <cstdint>

#include "runtime/cuda/stored_value.h"

namespace octet::cuda {

namespace {

// One thread per 4 adjacent channels (out_c is a multiple of 4).
__global__ void requantize_accumulators_kernel(const int32_t* __restrict__ acc, int64_t groups, int out_c,
                                               const RequantEpilogue e, int8_t* __restrict__ y) {
  grid_dependency_sync();  // launched programmatically, the kernel before may still run
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= groups) return;
  const int64_t at = 4 * i;
  const int c = static_cast<int>(at % out_c);
  const int4 a = *reinterpret_cast<const int4*>(acc + at);
  *reinterpret_cast<uint32_t*>(y + at) =
      word_through_table(pack_int8x4(requantize_stored_output(a.x, c, at, e),
                                     requantize_stored_output(a.y, c + 1, at + 1, e),
                                     requantize_stored_output(a.z, c + 2, at + 2, e),
                                     requantize_stored_output(a.w, c + 3, at + 3, e)),
                         c, e);
}

__global__ void logits_kernel(const int32_t* __restrict__ acc, int64_t count, int acc_c, int classes,
                              const int32_t* __restrict__ bias, int32_t* __restrict__ logits) {
  grid_dependency_sync();  // launched programmatically, the kernel before may still run
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int64_t row = i / classes;
  const int o = static_cast<int>(i % classes);
  logits[i] = acc[row * acc_c + o] + bias[o];
}

void launch_requantize_accumulators(const int32_t* acc, int64_t groups, int out_c, const RequantEpilogue& e, int8_t* y,
                                    KernelStream stream) {
  launch_kernel(requantize_accumulators_kernel, elementwise_grid(groups), kBlockSize, 0, stream, acc, groups, out_c, e,
                y);
  CUDA_CHECK_LAUNCH();
}

void launch_logits(const int32_t* acc, int64_t count, int acc_c, int classes, const int32_t* bias, int32_t* logits,
                   KernelStream stream) {
  launch_kernel(logits_kernel, elementwise_grid(count), kBlockSize, 0, stream, acc, count, acc_c, classes, bias,
                logits);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void requantize_accumulators(const int32_t* acc, int64_t rows, int out_c, const RequantEpilogue& e, int8_t* y,
                             KernelStream stream) {
  check(rows > 0 && out_c > 0 && out_c % 4 == 0,
        "cuda requantize: output channels " + std::to_string(out_c) + " are not padded to a positive multiple of 4");
  check(reinterpret_cast<uintptr_t>(acc) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 4 == 0,
        "cuda requantize: the accumulators must be 16-byte aligned and the output 4-byte aligned");
  const int64_t groups = rows * out_c / 4;
  check(groups <= kMaxElementwiseCount, "cuda requantize: too many outputs");
  launch_requantize_accumulators(acc, groups, out_c, e, y, stream);
}

void logits_from_accumulators(const int32_t* acc, int64_t rows, int acc_c, int classes, const int32_t* bias,
                              int32_t* logits, KernelStream stream) {
  check(rows > 0 && classes > 0 && acc_c >= classes,
        "cuda logits: " + std::to_string(classes) + " classes from accumulator rows of " + std::to_string(acc_c));
  check(rows * classes <= kMaxElementwiseCount, "cuda logits: too many outputs");
  launch_logits(acc, rows * classes, acc_c, classes, bias, logits, stream);
}

}  // namespace octet::cuda
