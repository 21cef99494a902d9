#include <algorithm>
#include <climits>

#include "runtime/cuda/pool_linear.cuh"
#include "runtime/cuda/pool_linear_kernel.cuh"

namespace octet::cuda {

namespace {

// Class chunks per tile of images: enough blocks to fill a large GPU (about
// 128) while pooling each image as few times as that allows.
int class_chunks(int64_t tiles, int classes) {
  return static_cast<int>(std::min<int64_t>(ceil_div(128, tiles), ceil_div(classes, kPoolLogitsWarps)));
}

void launch_global_avg_pool_logits(const int8_t* in, int64_t batch, int plane, int c, int32_t pool_multiplier,
                                   int32_t pool_shift, int32_t in_zero_point, int32_t pool_zero_point,
                                   const int8_t* weights, int classes, const int32_t* bias, int32_t* logits,
                                   cudaStream_t stream) {
  const int64_t tiles = ceil_div(batch, kPoolLogitsImages);
  const int classes_per_block = static_cast<int>(ceil_div(classes, class_chunks(tiles, classes)));
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(ceil_div(classes, classes_per_block)));
  global_avg_pool_logits_kernel<<<grid, kPoolLogitsThreads, kPoolLogitsImages * c, stream>>>(
      in, static_cast<int>(batch), plane, c, pool_multiplier, pool_shift, in_zero_point, pool_zero_point, weights,
      classes, classes_per_block, bias, logits);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void global_avg_pool_logits(const int8_t* in, int64_t batch, int h, int w, int c, int32_t pool_multiplier,
                            int32_t pool_shift, int32_t in_zero_point, int32_t pool_zero_point, const int8_t* weights,
                            int classes, const int32_t* bias, int32_t* logits, cudaStream_t stream) {
  check(batch > 0 && batch <= INT_MAX && h > 0 && w > 0 && c > 0 && c % 4 == 0 && c <= kPoolLogitsMaxChannels &&
            classes > 0 && int64_t(h) * w * c <= INT_MAX,
        "cuda global_avg_pool_logits: cannot handle " + std::to_string(batch) + " images of " + std::to_string(h) +
            "x" + std::to_string(w) + "x" + std::to_string(c) + " (at most " + std::to_string(kPoolLogitsMaxChannels) +
            " channels, a multiple of 4)");
  check(reinterpret_cast<uintptr_t>(weights) % 4 == 0, "cuda global_avg_pool_logits: weights must be 4-byte aligned");
  launch_global_avg_pool_logits(in, batch, h * w, c, pool_multiplier, pool_shift, in_zero_point, pool_zero_point,
                                weights, classes, bias, logits, stream);
}

}  // namespace octet::cuda
