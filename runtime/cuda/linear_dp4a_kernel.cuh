// cuda-dp4a's linear-layer kernels (linear_dp4a.cu launches them): one warp
// per output. Compiled by nvcc for the GPU, and for the CPU by
// tests/cuda/cuda_on_cpu.h, which stands in for CUDA's keywords and built-ins
// before including this file.
#pragma once

#include <cstdint>

#include "runtime/cuda/int8x4.h"
#include "runtime/cuda/stored_value.h"
#if defined(__CUDACC__)
#include "runtime/cuda/programmatic_launch.cuh"
#endif

namespace octet::cuda {

constexpr int kLinearWarpsPerBlock = 8;

// The dot product of two rows of `words` int32 words (a's bytes uint8 where
// `unsigned_a`), summed over the warp; every lane returns the total. int32
// sums wrap, so the order does not change it.
static __device__ __forceinline__ int32_t warp_dot(const int32_t* __restrict__ a, bool unsigned_a,
                                                   const int32_t* __restrict__ b, int64_t words) {
  int32_t acc = 0;
  for (int64_t k = threadIdx.x % 32; k < words; k += 32)
    acc = unsigned_a ? dp4a_unsigned_signed(a[k], b[k], acc) : __dp4a(a[k], b[k], acc);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, offset);
  return acc;
}

// Warp `index` computes output (row, o) = (index / out_c, index % out_c).
static __global__ void linear_dp4a_kernel(const int8_t* __restrict__ x, bool unsigned_x,
                                          const int8_t* __restrict__ w, int64_t outputs, int64_t depth, int out_c,
                                          const RequantEpilogue e, int8_t* __restrict__ y) {
  grid_dependency_wait();  // launched programmatically, the kernel before may still run
  grid_dependency_launch_next();
  const int64_t index = int64_t(blockIdx.x) * kLinearWarpsPerBlock + threadIdx.x / 32;
  if (index >= outputs) return;  // the whole warp leaves together
  const int64_t row = index / out_c;
  const int o = static_cast<int>(index % out_c);
  const int64_t words = depth / 4;
  const int32_t acc = warp_dot(reinterpret_cast<const int32_t*>(x + row * depth), unsigned_x,
                               reinterpret_cast<const int32_t*>(w + int64_t(o) * depth), words);
  if (threadIdx.x % 32 == 0)
    y[index] = static_cast<int8_t>(through_table(requantize_stored_output(acc, o, index, e), o, e));
}

static __global__ void linear_dp4a_logits_kernel(const int8_t* __restrict__ x, bool unsigned_x,
                                                 const int8_t* __restrict__ w, int64_t outputs, int64_t depth,
                                                 int classes, const int32_t* __restrict__ bias,
                                                 int32_t* __restrict__ logits) {
  grid_dependency_wait();
  grid_dependency_launch_next();
  const int64_t index = int64_t(blockIdx.x) * kLinearWarpsPerBlock + threadIdx.x / 32;
  if (index >= outputs) return;
  const int64_t row = index / classes;
  const int o = static_cast<int>(index % classes);
  const int32_t acc = warp_dot(reinterpret_cast<const int32_t*>(x + row * depth), unsigned_x,
                               reinterpret_cast<const int32_t*>(w + int64_t(o) * depth), depth / 4);
  if (threadIdx.x % 32 == 0) logits[index] = acc + bias[o];
}

}  // namespace octet::cuda
