#include "runtime/cuda/quantize_input.cuh"

#include "runtime/cuda/programmatic_launch.cuh"
#include "runtime/cuda/quantize_input_kernel.h"

namespace octet::cuda {

namespace {

// The network's first kernels, launched plainly; each lets the conv after it start
// beside its last blocks where that one is launched programmatically (it waits for this one).
template <int Pixels>
__global__ void quantize_input_kernel(const float* __restrict__ nchw, const InputShape s, float scale,
                                      int8_t* __restrict__ nhwc) {
  grid_dependency_launch_next();
  const int64_t item = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item < s.items()) quantize_input_item<Pixels>(nchw, s, scale, item, nhwc);
}

__global__ void space_to_depth_input_kernel(const float* __restrict__ nchw, const SpaceToDepthInput s, float scale,
                                            int8_t* __restrict__ stored) {
  grid_dependency_launch_next();
  const int64_t item = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item < s.items()) space_to_depth_input_item(nchw, s, scale, item, stored);
}

__global__ void patch_input_kernel(const float* __restrict__ nchw, const PatchInput s, float scale,
                                   int8_t* __restrict__ stored) {
  grid_dependency_launch_next();
  const int64_t item = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item < s.items()) patch_input_item(nchw, s, scale, item, stored);
}

struct Launch {
  const float* nchw;
  const InputShape& s;
  float scale;
  int8_t* nhwc;
  cudaStream_t stream;
  template <int Pixels>
  void run() const {
    quantize_input_kernel<Pixels><<<elementwise_grid(s.items()), kBlockSize, 0, stream>>>(nchw, s, scale, nhwc);
  }
};

}  // namespace

void quantize_input(const float* nchw, int64_t batch, int channels, int height, int width, int padded_c, float scale,
                    int8_t* nhwc, cudaStream_t stream) {
  const InputShape s{batch, int64_t(height) * width, channels, padded_c};
  check(channels > 0 && padded_c >= channels && padded_c % 4 == 0 &&
            s.batch * s.plane * padded_c <= kMaxElementwiseCount,
        "cuda quantize_input: cannot handle " + std::to_string(batch) + " images of " + std::to_string(channels) + "x" +
            std::to_string(height) + "x" + std::to_string(width));
  check(reinterpret_cast<uintptr_t>(nchw) % 16 == 0, "cuda quantize_input: the input is not 16-byte aligned");
  if (s.items() == 0) return;
  visit_input_variant(s, Launch{nchw, s, scale, nhwc, stream});
  CUDA_CHECK_LAUNCH();
}

void quantize_folded_input(const float* nchw, int64_t batch, const ImageFold& fold, float scale, int8_t* stored,
                           cudaStream_t stream) {
  const int64_t items = batch * fold.stored_h() * fold.stored_w();
  check(fold.channels > 0 && fold.channels <= kSourceBytes && fold.stored_c() <= 64 && items <= kMaxElementwiseCount,
        "cuda quantize_input: cannot fold " + std::to_string(batch) + " images of " + std::to_string(fold.channels) +
            "x" + std::to_string(fold.height) + "x" + std::to_string(fold.width));
  if (items == 0) return;
  if (fold.kind == ImageFold::kSpaceToDepth)
    space_to_depth_input_kernel<<<elementwise_grid(items), kBlockSize, 0, stream>>>(
        nchw, fold.space_to_depth_input(batch), scale, stored);
  else
    patch_input_kernel<<<elementwise_grid(items), kBlockSize, 0, stream>>>(nchw, fold.patch_input(batch), scale,
                                                                          stored);
  CUDA_CHECK_LAUNCH();
}

}  // namespace octet::cuda
