#include "runtime/cuda/quantize_input.cuh"

namespace octet::cuda {

namespace {

// One thread per pixel: it reads the pixel's float channels (adjacent threads
// adjacent floats of each plane) and writes its padded_c bytes as words.
__global__ void quantize_input_kernel(const float* __restrict__ nchw, int64_t pixels, int channels, int64_t plane,
                                      int padded_c, float scale, int8_t* __restrict__ nhwc) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= pixels) return;
  const int64_t n = i / plane;
  const float* x = nchw + n * channels * plane + (i - n * plane);
  uint32_t* out = reinterpret_cast<uint32_t*>(nhwc + i * padded_c);
  for (int c = 0; c < padded_c; c += 4) {
    int32_t q[4];
    for (int j = 0; j < 4; ++j) q[j] = c + j < channels ? ::octet::quantize_input(x[(c + j) * plane], scale) : 0;
    out[c / 4] = pack_int8x4(q[0], q[1], q[2], q[3]);
  }
}

void launch_quantize_input(const float* nchw, int64_t pixels, int channels, int64_t plane, int padded_c, float scale,
                           int8_t* nhwc, cudaStream_t stream) {
  quantize_input_kernel<<<elementwise_grid(pixels), kBlockSize, 0, stream>>>(nchw, pixels, channels, plane, padded_c,
                                                                             scale, nhwc);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void quantize_input(const float* nchw, int64_t batch, int channels, int height, int width, int padded_c, float scale,
                    int8_t* nhwc, cudaStream_t stream) {
  const int64_t plane = int64_t(height) * width;
  const int64_t count = batch * plane * padded_c;
  check(channels > 0 && padded_c >= channels && padded_c % 4 == 0 && count <= kMaxElementwiseCount,
        "cuda quantize_input: cannot handle " + std::to_string(batch) + " images of " + std::to_string(channels) + "x" +
            std::to_string(height) + "x" + std::to_string(width));
  if (count == 0) return;
  launch_quantize_input(nchw, batch * plane, channels, plane, padded_c, scale, nhwc, stream);
}

}  // namespace octet::cuda
