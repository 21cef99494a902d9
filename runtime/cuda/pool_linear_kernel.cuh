// The network tail's kernel (pool_linear.cuh launches it): global average
// pool, then the output linear layer's int32 logits. Compiled by nvcc for the
// GPU, and for the CPU by tests/cuda/cuda_on_cpu.h, which stands in for CUDA's
// keywords, built-ins and grid dependency control before including this file.
#pragma once

#include <cstdint>

#include "runtime/cuda/stored_value.h"
#if defined(__CUDACC__)
#include "runtime/cuda/programmatic_launch.cuh"
#endif

namespace octet::cuda {

constexpr int kPoolLogitsThreads = 256;
constexpr int kPoolLogitsWarps = kPoolLogitsThreads / 32;
constexpr int kPoolLogitsMaxChannels = 4096;
// The most images a block takes: each weight word read serves that many
// images (one block per image read all of ResNet-50's 2 MB of fc weights once
// per image), where fewer blocks would leave the GPU idle.
constexpr int kPoolLogitsImages = 8;

// Block (x, y) pools images [x * images_per_block, ...) (at most
// kPoolLogitsImages) into dynamic shared memory (images_per_block * c
// bytes; threads take 4 adjacent channels each,
// adjacent threads adjacent words), then each warp computes classes
// y * classes_per_block + warp, + kPoolLogitsWarps, ... for all of them: one
// weight word per lane and step, multiplied by every image's pooled word.
// Values stored as stored_value.h says: the input at in_zero_point, the pooled
// ones at pool_zero_point. (static: one copy per file that launches it.)
static __global__ void __launch_bounds__(kPoolLogitsThreads)
    global_avg_pool_logits_kernel(const int8_t* __restrict__ in, int batch, int plane, int c, int32_t pool_multiplier,
                                  int32_t pool_shift, int32_t in_zero_point, int32_t pool_zero_point,
                                  const int8_t* __restrict__ weights, int classes, int images_per_block,
                                  int classes_per_block, const int32_t* __restrict__ bias,
                                  int32_t* __restrict__ logits) {
  extern __shared__ __align__(16) int8_t shared[];  // [images_per_block][c]
  grid_dependency_wait();  // launched programmatically, the kernel before may still run
  grid_dependency_launch_next();
  const int first_image = static_cast<int>(blockIdx.x) * images_per_block;
  const int images = batch - first_image < images_per_block ? batch - first_image : images_per_block;
  const int words = c / 4;
  const bool unsigned_in = stored_unsigned(in_zero_point), unsigned_pool = stored_unsigned(pool_zero_point);
  const StoredRange pool_range = stored_range(false, pool_zero_point);
  for (int column = threadIdx.x; column < images * words; column += kPoolLogitsThreads) {
    const int image = column / words, word = column % words;
    const uint32_t* x = reinterpret_cast<const uint32_t*>(in + int64_t(first_image + image) * plane * c) + word;
    int32_t sum[4] = {0, 0, 0, 0};
#pragma unroll 4
    for (int p = 0; p < plane; ++p) {
      const uint32_t v = x[int64_t(p) * words];
#pragma unroll
      for (int i = 0; i < 4; ++i) sum[i] += stored_value(v, i, unsigned_in);
    }
    const auto mean = [&](int i) { return requantize_stored(sum[i], pool_multiplier, 0, 0, pool_shift, pool_range); };
    reinterpret_cast<uint32_t*>(shared)[column] = pack_int8x4(mean(0), mean(1), mean(2), mean(3));
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int32_t* pooled = reinterpret_cast<const int32_t*>(shared);
  const int first_class = static_cast<int>(blockIdx.y) * classes_per_block;
  const int end_class = classes - first_class < classes_per_block ? classes : first_class + classes_per_block;
  for (int o = first_class + warp; o < end_class; o += kPoolLogitsWarps) {
    const int32_t* w = reinterpret_cast<const int32_t*>(weights + int64_t(o) * c);
    int32_t acc[kPoolLogitsImages] = {};
#pragma unroll 4
    for (int k = lane; k < words; k += 32) {
      const int32_t weight = w[k];
#pragma unroll
      for (int i = 0; i < kPoolLogitsImages; ++i)
        if (i < images)
          acc[i] = unsigned_pool ? dp4a_unsigned_signed(pooled[i * words + k], weight, acc[i])
                                 : __dp4a(pooled[i * words + k], weight, acc[i]);
    }
#pragma unroll
    for (int i = 0; i < kPoolLogitsImages; ++i) {
      if (i >= images) break;  // the same for the whole warp
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) acc[i] += __shfl_xor_sync(0xFFFFFFFFu, acc[i], offset);
      if (lane == 0) logits[int64_t(first_image + i) * classes + o] = acc[i] + bias[o];
    }
  }
}

}  // namespace octet::cuda
