#include <algorithm>
#include <climits>

#include "runtime/cuda/pool_linear.cuh"
#include "runtime/cuda/pool_linear_kernel.cuh"

namespace octet::cuda {

namespace {

// Blocks that fill a large GPU (an H200 has 132 multiprocessors).
constexpr int64_t kPoolLogitsBlocks = 128;
// The weight bytes all blocks may read (the L2 cache serves them).
constexpr int64_t kPoolLogitsWeightReads = int64_t{32} << 20;

// Images per block: as few as keep the weights read within
// kPoolLogitsWeightReads (ResNet-50's 2 MB of fc weights: 8), and no fewer
// than leave kPoolLogitsBlocks tiles (CIFAR ResNets at batch 256: 1).
int images_per_block(int64_t batch, int classes, int c) {
  int images = 1;
  while (images < kPoolLogitsImages && (ceil_div(batch, images) * classes * c > kPoolLogitsWeightReads ||
                                        ceil_div(batch, images * 2) >= kPoolLogitsBlocks))
    images *= 2;
  return images;
}

// Class chunks per tile of images: enough blocks to fill a large GPU while
// pooling each image as few times as that allows.
int class_chunks(int64_t tiles, int classes) {
  return static_cast<int>(std::min<int64_t>(ceil_div(kPoolLogitsBlocks, tiles), ceil_div(classes, kPoolLogitsWarps)));
}

void launch_global_avg_pool_logits(const int8_t* in, int64_t batch, int plane, int c, int32_t pool_multiplier,
                                   int32_t pool_shift, int32_t in_zero_point, int32_t pool_zero_point,
                                   const int8_t* weights, int classes, const int32_t* bias, int32_t* logits,
                                   KernelStream stream) {
  const int images = images_per_block(batch, classes, c);
  const int64_t tiles = ceil_div(batch, images);
  const int classes_per_block = static_cast<int>(ceil_div(classes, class_chunks(tiles, classes)));
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(ceil_div(classes, classes_per_block)));
  launch_kernel(global_avg_pool_logits_kernel, grid, kPoolLogitsThreads, size_t(images) * c, stream, in,
                static_cast<int>(batch), plane, c, pool_multiplier, pool_shift, in_zero_point, pool_zero_point, weights,
                classes, images, classes_per_block, bias, logits);
}

}  // namespace

void global_avg_pool_logits(const int8_t* in, int64_t batch, int h, int w, int c, int32_t pool_multiplier,
                            int32_t pool_shift, int32_t in_zero_point, int32_t pool_zero_point, const int8_t* weights,
                            int classes, const int32_t* bias, int32_t* logits, KernelStream stream) {
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
