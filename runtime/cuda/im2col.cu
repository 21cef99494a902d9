#include "runtime/cuda/im2col.cuh"

#include <cstdint>

namespace octet::cuda {

namespace {

// One thread per 4-byte word of `cols`; in_c is a multiple of 4, so a word is
// 4 channels of one input pixel.
__global__ void im2col_kernel(const ConvShape s, const int8_t* __restrict__ input, int32_t* __restrict__ cols,
                              int64_t words) {
  grid_dependency_sync();  // launched programmatically, the kernel before may still run
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= words) return;
  const int64_t row_words = s.depth() / 4;
  const int64_t m = i / row_words;
  const int k = static_cast<int>(4 * (i % row_words));
  const int tap = k / s.in_c;
  const int c = k - tap * s.in_c;
  const int ky = tap / s.kernel;
  const int kx = tap - ky * s.kernel;
  const int ox = static_cast<int>(m % s.out_w);
  const int oy = static_cast<int>((m / s.out_w) % s.out_h);
  const int64_t n = m / (int64_t(s.out_w) * s.out_h);
  const int iy = oy * s.stride - s.padding + ky;
  const int ix = ox * s.stride - s.padding + kx;
  int32_t word = 0;
  if (iy >= 0 && iy < s.in_h && ix >= 0 && ix < s.in_w)
    word = *reinterpret_cast<const int32_t*>(input + ((n * s.in_h + iy) * s.in_w + ix) * s.in_c + c);
  cols[i] = word;
}

void launch_im2col(const ConvShape& s, const int8_t* input, int8_t* cols, KernelStream stream) {
  const int64_t words = s.rows() * (s.depth() / 4);
  launch_kernel(im2col_kernel, elementwise_grid(words), kBlockSize, 0, stream, s, input,
                reinterpret_cast<int32_t*>(cols), words);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void im2col(const ConvShape& s, const int8_t* input, int8_t* cols, KernelStream stream) {
  check(s.rows() > 0 && s.in_c > 0 && s.in_c % 4 == 0 && s.kernel > 0 && s.stride > 0,
        "cuda im2col: input channels must be padded to a positive multiple of 4 (got " + std::to_string(s.in_c) + ")");
  check(s.rows() * (s.depth() / 4) <= kMaxElementwiseCount, "cuda im2col: the patch matrix is too large");
  check(reinterpret_cast<uintptr_t>(input) % 4 == 0 && reinterpret_cast<uintptr_t>(cols) % 4 == 0,
        "cuda im2col: buffers must be 4-byte aligned");
  launch_im2col(s, input, cols, stream);
}

}  // namespace octet::cuda
