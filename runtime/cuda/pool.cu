#include "runtime/cuda/pool.cuh"

namespace octet::cuda {

namespace {

struct PoolShape {
  int h, w, c, kernel, stride, out_h, out_w;
};

// The window of output element i = ((n * out_h + oy) * out_w + ox) * c + ch:
// calls visit(value) for each of its kernel x kernel inputs.
template <typename Visit>
__device__ __forceinline__ void for_each_in_window(const int8_t* __restrict__ in, const PoolShape& s, int64_t i,
                                                   Visit visit) {
  const int ch = static_cast<int>(i % s.c);
  const int ox = static_cast<int>((i / s.c) % s.out_w);
  const int oy = static_cast<int>((i / (int64_t(s.c) * s.out_w)) % s.out_h);
  const int64_t n = i / (int64_t(s.c) * s.out_w * s.out_h);
  for (int ky = 0; ky < s.kernel; ++ky) {
    const int8_t* row = in + ((n * s.h + oy * s.stride + ky) * s.w + ox * s.stride) * s.c + ch;
    for (int kx = 0; kx < s.kernel; ++kx) visit(row[int64_t(kx) * s.c]);
  }
}

__global__ void max_pool_kernel(const int8_t* __restrict__ in, const PoolShape s, int64_t count,
                                int8_t* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  int32_t best = -128;
  for_each_in_window(in, s, i, [&](int8_t v) { best = max(best, int32_t(v)); });
  out[i] = static_cast<int8_t>(best);
}

__global__ void avg_pool_kernel(const int8_t* __restrict__ in, const PoolShape s, int64_t count, int32_t multiplier,
                                int32_t shift, int8_t* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  int32_t sum = 0;
  for_each_in_window(in, s, i, [&](int8_t v) { sum += v; });
  out[i] = static_cast<int8_t>(::octet::requantize(sum, multiplier, 0, 0, shift, -128));
}

// One thread per (image, channel); adjacent threads read adjacent channels.
__global__ void global_avg_pool_kernel(const int8_t* __restrict__ in, int64_t count, int64_t plane, int c,
                                       int32_t multiplier, int32_t shift, int8_t* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int64_t n = i / c;
  const int ch = static_cast<int>(i % c);
  const int8_t* x = in + n * plane * c + ch;
  int32_t sum = 0;
  for (int64_t p = 0; p < plane; ++p) sum += x[p * c];
  out[i] = static_cast<int8_t>(::octet::requantize(sum, multiplier, 0, 0, shift, -128));
}

PoolShape pool_shape(const char* op, int64_t batch, int h, int w, int c, int kernel, int stride) {
  check(batch > 0 && c > 0 && kernel > 0 && stride > 0 && kernel <= h && kernel <= w,
        std::string("cuda ") + op + ": cannot pool " + std::to_string(h) + "x" + std::to_string(w) + " with kernel " +
            std::to_string(kernel) + ", stride " + std::to_string(stride));
  const PoolShape s{h, w, c, kernel, stride, (h - kernel) / stride + 1, (w - kernel) / stride + 1};
  check(batch * s.out_h * s.out_w * c <= kMaxElementwiseCount, std::string("cuda ") + op + ": too many outputs");
  return s;
}

void launch_max_pool(const int8_t* in, const PoolShape& s, int64_t count, int8_t* out, cudaStream_t stream) {
  max_pool_kernel<<<elementwise_grid(count), kBlockSize, 0, stream>>>(in, s, count, out);
  CUDA_CHECK_LAUNCH();
}

void launch_avg_pool(const int8_t* in, const PoolShape& s, int64_t count, int32_t multiplier, int32_t shift,
                     int8_t* out, cudaStream_t stream) {
  avg_pool_kernel<<<elementwise_grid(count), kBlockSize, 0, stream>>>(in, s, count, multiplier, shift, out);
  CUDA_CHECK_LAUNCH();
}

void launch_global_avg_pool(const int8_t* in, int64_t count, int64_t plane, int c, int32_t multiplier, int32_t shift,
                            int8_t* out, cudaStream_t stream) {
  global_avg_pool_kernel<<<elementwise_grid(count), kBlockSize, 0, stream>>>(in, count, plane, c, multiplier, shift,
                                                                             out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void max_pool(const int8_t* in, int64_t batch, int h, int w, int c, int kernel, int stride, int8_t* out,
              cudaStream_t stream) {
  const PoolShape s = pool_shape("max_pool", batch, h, w, c, kernel, stride);
  launch_max_pool(in, s, batch * s.out_h * s.out_w * c, out, stream);
}

void avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int kernel, int stride, int32_t multiplier,
              int32_t shift, int8_t* out, cudaStream_t stream) {
  const PoolShape s = pool_shape("avg_pool", batch, h, w, c, kernel, stride);
  launch_avg_pool(in, s, batch * s.out_h * s.out_w * c, multiplier, shift, out, stream);
}

void global_avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int32_t multiplier, int32_t shift,
                     int8_t* out, cudaStream_t stream) {
  check(batch > 0 && h > 0 && w > 0 && c > 0 && batch * c <= kMaxElementwiseCount,
        "cuda global_avg_pool: bad shape " + std::to_string(batch) + "x" + std::to_string(h) + "x" + std::to_string(w) +
            "x" + std::to_string(c));
  launch_global_avg_pool(in, batch * c, int64_t(h) * w, c, multiplier, shift, out, stream);
}

}  // namespace octet::cuda
