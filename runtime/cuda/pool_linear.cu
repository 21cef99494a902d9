#include <climits>

#include "runtime/cuda/pool_linear.cuh"

namespace octet::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxChannels = 4096;  // the pooled vector lives in shared memory

// One block per image: each thread pools channels c, c + kThreads, ... (adjacent
// threads read adjacent bytes), then each warp computes classes warp, warp + 8, ...
__global__ void __launch_bounds__(kThreads)
    global_avg_pool_logits_kernel(const int8_t* __restrict__ in, int plane, int c, int32_t pool_multiplier,
                                  int32_t pool_shift, const int8_t* __restrict__ weights, int classes,
                                  const int32_t* __restrict__ bias, int32_t* __restrict__ logits) {
  __shared__ __align__(16) int8_t pooled[kMaxChannels];
  const int64_t n = blockIdx.x;
  const int8_t* x = in + n * plane * c;
  for (int ch = threadIdx.x; ch < c; ch += kThreads) {
    int32_t sum = 0;
    for (int p = 0; p < plane; ++p) sum += x[int64_t(p) * c + ch];
    pooled[ch] = static_cast<int8_t>(::octet::requantize(sum, pool_multiplier, 0, 0, pool_shift, -128));
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int32_t* a = reinterpret_cast<const int32_t*>(pooled);
  for (int o = warp; o < classes; o += kThreads / 32) {
    const int32_t* b = reinterpret_cast<const int32_t*>(weights + int64_t(o) * c);
    int32_t acc = 0;
    for (int k = lane; k < c / 4; k += 32) acc = __dp4a(a[k], b[k], acc);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, offset);
    if (lane == 0) logits[n * classes + o] = acc + bias[o];
  }
}

void launch_global_avg_pool_logits(const int8_t* in, int64_t batch, int plane, int c, int32_t pool_multiplier,
                                   int32_t pool_shift, const int8_t* weights, int classes, const int32_t* bias,
                                   int32_t* logits, cudaStream_t stream) {
  global_avg_pool_logits_kernel<<<static_cast<unsigned>(batch), kThreads, 0, stream>>>(
      in, plane, c, pool_multiplier, pool_shift, weights, classes, bias, logits);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void global_avg_pool_logits(const int8_t* in, int64_t batch, int h, int w, int c, int32_t pool_multiplier,
                            int32_t pool_shift, const int8_t* weights, int classes, const int32_t* bias,
                            int32_t* logits, cudaStream_t stream) {
  check(batch > 0 && batch <= INT_MAX && h > 0 && w > 0 && c > 0 && c % 4 == 0 && c <= kMaxChannels && classes > 0 &&
            int64_t(h) * w * c <= INT_MAX,
        "cuda global_avg_pool_logits: cannot handle " + std::to_string(batch) + " images of " + std::to_string(h) +
            "x" + std::to_string(w) + "x" + std::to_string(c) + " (at most " + std::to_string(kMaxChannels) +
            " channels, a multiple of 4)");
  check(reinterpret_cast<uintptr_t>(weights) % 4 == 0, "cuda global_avg_pool_logits: weights must be 4-byte aligned");
  launch_global_avg_pool_logits(in, batch, h * w, c, pool_multiplier, pool_shift, weights, classes, bias, logits,
                                stream);
}

}  // namespace octet::cuda
