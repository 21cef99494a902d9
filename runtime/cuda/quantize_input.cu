#include "runtime/cuda/quantize_input.cuh"

namespace octet::cuda {

namespace {

// One thread per output byte (n, pixel, channel).
__global__ void quantize_input_kernel(const float* __restrict__ nchw, int64_t count, int channels, int64_t plane,
                                      int padded_c, float scale, int8_t* __restrict__ nhwc) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int c = static_cast<int>(i % padded_c);
  const int64_t pixel = (i / padded_c) % plane;
  const int64_t n = i / (padded_c * plane);
  nhwc[i] = c < channels ? ::octet::quantize_input(nchw[(n * channels + c) * plane + pixel], scale) : int8_t{0};
}

void launch_quantize_input(const float* nchw, int64_t count, int channels, int64_t plane, int padded_c, float scale,
                           int8_t* nhwc, cudaStream_t stream) {
  quantize_input_kernel<<<elementwise_grid(count), kBlockSize, 0, stream>>>(nchw, count, channels, plane, padded_c,
                                                                            scale, nhwc);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void quantize_input(const float* nchw, int64_t batch, int channels, int height, int width, int padded_c, float scale,
                    int8_t* nhwc, cudaStream_t stream) {
  const int64_t plane = int64_t(height) * width;
  const int64_t count = batch * plane * padded_c;
  check(channels > 0 && padded_c >= channels && count <= kMaxElementwiseCount,
        "cuda quantize_input: cannot handle " + std::to_string(batch) + " images of " + std::to_string(channels) + "x" +
            std::to_string(height) + "x" + std::to_string(width));
  if (count == 0) return;
  launch_quantize_input(nchw, count, channels, plane, padded_c, scale, nhwc, stream);
}

}  // namespace octet::cuda
