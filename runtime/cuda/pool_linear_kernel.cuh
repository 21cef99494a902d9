// The network tail's kernel (pool_linear.cuh launches it): global average
// pool, then the output linear layer's int32 logits. Compiled by nvcc for the
// GPU, and for the CPU by tests/cuda/cuda_on_cpu.h, which stands in for CUDA's
// keywords and built-ins before including this file.
#pragma once

#include <cstdint>

#include "common/requantize.h"

namespace octet::cuda {

constexpr int kPoolLogitsThreads = 256;
constexpr int kPoolLogitsMaxChannels = 4096;  // the pooled vector lives in shared memory

// One block per image: each thread pools channels c, c + kPoolLogitsThreads, ... (adjacent
// threads read adjacent bytes) into `c` bytes of dynamic shared memory, then
// each warp computes classes warp, warp + 8, ... (static: one copy per file
// that launches it).
static __global__ void __launch_bounds__(kPoolLogitsThreads)
    global_avg_pool_logits_kernel(const int8_t* __restrict__ in, int plane, int c, int32_t pool_multiplier,
                                  int32_t pool_shift, const int8_t* __restrict__ weights, int classes,
                                  const int32_t* __restrict__ bias, int32_t* __restrict__ logits) {
  extern __shared__ __align__(16) int8_t shared[];  // c bytes
  int8_t* pooled = shared;
  const int64_t n = blockIdx.x;
  const int8_t* x = in + n * plane * c;
  for (int ch = threadIdx.x; ch < c; ch += kPoolLogitsThreads) {
    int32_t sum = 0;
    for (int p = 0; p < plane; ++p) sum += x[int64_t(p) * c + ch];
    pooled[ch] = static_cast<int8_t>(::octet::requantize(sum, pool_multiplier, 0, 0, pool_shift, -128));
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int32_t* a = reinterpret_cast<const int32_t*>(pooled);
  for (int o = warp; o < classes; o += kPoolLogitsThreads / 32) {
    const int32_t* b = reinterpret_cast<const int32_t*>(weights + int64_t(o) * c);
    int32_t acc = 0;
    for (int k = lane; k < c / 4; k += 32) acc = __dp4a(a[k], b[k], acc);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, offset);
    if (lane == 0) logits[n * classes + o] = acc + bias[o];
  }
}

}  // namespace octet::cuda
