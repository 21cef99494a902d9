#include <climits>

#include "runtime/cuda/pool_linear.cuh"
#include "runtime/cuda/pool_linear_kernel.cuh"

namespace octet::cuda {

namespace {

void launch_global_avg_pool_logits(const int8_t* in, int64_t batch, int plane, int c, int32_t pool_multiplier,
                                   int32_t pool_shift, const int8_t* weights, int classes, const int32_t* bias,
                                   int32_t* logits, cudaStream_t stream) {
  global_avg_pool_logits_kernel<<<static_cast<unsigned>(batch), kPoolLogitsThreads, c, stream>>>(
      in, plane, c, pool_multiplier, pool_shift, weights, classes, bias, logits);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void global_avg_pool_logits(const int8_t* in, int64_t batch, int h, int w, int c, int32_t pool_multiplier,
                            int32_t pool_shift, const int8_t* weights, int classes, const int32_t* bias,
                            int32_t* logits, cudaStream_t stream) {
  check(batch > 0 && batch <= INT_MAX && h > 0 && w > 0 && c > 0 && c % 4 == 0 && c <= kPoolLogitsMaxChannels &&
            classes > 0 && int64_t(h) * w * c <= INT_MAX,
        "cuda global_avg_pool_logits: cannot handle " + std::to_string(batch) + " images of " + std::to_string(h) +
            "x" + std::to_string(w) + "x" + std::to_string(c) + " (at most " + std::to_string(kPoolLogitsMaxChannels) +
            " channels, a multiple of 4)");
  check(reinterpret_cast<uintptr_t>(weights) % 4 == 0, "cuda global_avg_pool_logits: weights must be 4-byte aligned");
  launch_global_avg_pool_logits(in, batch, h * w, c, pool_multiplier, pool_shift, weights, classes, bias, logits,
                                stream);
}

}  // namespace octet::cuda
