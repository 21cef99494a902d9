#include "runtime/cuda/pool.cuh"

namespace octet::cuda {

namespace {

struct PoolShape {
  int h, w, c, kernel, stride, padding, out_h, out_w;
};

// One output's window along one dimension inside the input, [begin, end): as
// graph/ops/pool2d.h's pool_span, the padding adding nothing.
__device__ __forceinline__ int2 window_span(int out_index, int size, const PoolShape& s) {
  const int start = out_index * s.stride - s.padding;
  return make_int2(max(start, 0), min(min(start + s.kernel, size + s.padding), size));
}

// The window of output word i = ((n * out_h + oy) * out_w + ox) * (c / 4) + word
// (4 stored channels, c a multiple of 4): calls visit(4 values as one word)
// for each of its pixels inside the image.
template <typename Visit>
__device__ __forceinline__ void for_each_in_window(const int8_t* __restrict__ in, const PoolShape& s, int64_t i,
                                                   Visit visit) {
  const int words = s.c / 4;
  const int ch = static_cast<int>(i % words) * 4;
  const int64_t pixel = i / words;
  const int ox = static_cast<int>(pixel % s.out_w);
  const int64_t rows = pixel / s.out_w;
  const int oy = static_cast<int>(rows % s.out_h);
  const int64_t n = rows / s.out_h;
  const int2 ys = window_span(oy, s.h, s), xs = window_span(ox, s.w, s);
  for (int iy = ys.x; iy < ys.y; ++iy) {
    const int8_t* row = in + (n * s.h + iy) * int64_t(s.w) * s.c + ch;
    for (int ix = xs.x; ix < xs.y; ++ix) visit(*reinterpret_cast<const uint32_t*>(row + int64_t(ix) * s.c));
  }
}

// One thread per 4 stored channels of an output pixel.
__global__ void max_pool_kernel(const int8_t* __restrict__ in, const PoolShape s, int64_t count,
                                int8_t* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  uint32_t best = 0x80808080u;  // -128 in each byte
  for_each_in_window(in, s, i, [&](uint32_t v) { best = __vmaxs4(best, v); });
  reinterpret_cast<uint32_t*>(out)[i] = best;
}

__global__ void avg_pool_kernel(const int8_t* __restrict__ in, const PoolShape s, int64_t count, int32_t multiplier,
                                int32_t shift, int8_t* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  int32_t sum[4] = {0, 0, 0, 0};
  for_each_in_window(in, s, i, [&](uint32_t v) {
    for (int j = 0; j < 4; ++j) sum[j] += static_cast<int8_t>(v >> (8 * j));
  });
  int32_t q[4];
  for (int j = 0; j < 4; ++j) q[j] = ::octet::requantize(sum[j], multiplier, 0, 0, shift, -128);
  reinterpret_cast<uint32_t*>(out)[i] = pack_int8x4(q[0], q[1], q[2], q[3]);
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

PoolShape pool_shape(const char* op, int64_t batch, const ActShape& in, int c, const ActShape& out, int kernel,
                     int stride, int padding) {
  check(batch > 0 && c > 0 && c % 4 == 0 && kernel > 0 && stride > 0 && padding >= 0 && 2 * padding <= kernel &&
            kernel <= in.h + 2 * padding && kernel <= in.w + 2 * padding && out.h > 0 && out.w > 0,
        std::string("cuda ") + op + ": cannot pool " + std::to_string(in.h) + "x" + std::to_string(in.w) +
            " with kernel " + std::to_string(kernel) + ", stride " + std::to_string(stride) + ", padding " +
            std::to_string(padding));
  const PoolShape s{in.h, in.w, c, kernel, stride, padding, out.h, out.w};
  check(batch * s.out_h * s.out_w * c / 4 <= kMaxElementwiseCount, std::string("cuda ") + op + ": too many outputs");
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

void max_pool(const int8_t* in, int64_t batch, const ActShape& in_shape, int c, const ActShape& out_shape, int kernel,
              int stride, int padding, int8_t* out, cudaStream_t stream) {
  const PoolShape s = pool_shape("max_pool", batch, in_shape, c, out_shape, kernel, stride, padding);
  launch_max_pool(in, s, batch * s.out_h * s.out_w * c / 4, out, stream);
}

void avg_pool(const int8_t* in, int64_t batch, const ActShape& in_shape, int c, const ActShape& out_shape, int kernel,
              int stride, int padding, int32_t multiplier, int32_t shift, int8_t* out, cudaStream_t stream) {
  const PoolShape s = pool_shape("avg_pool", batch, in_shape, c, out_shape, kernel, stride, padding);
  launch_avg_pool(in, s, batch * s.out_h * s.out_w * c / 4, multiplier, shift, out, stream);
}

void global_avg_pool(const int8_t* in, int64_t batch, int h, int w, int c, int32_t multiplier, int32_t shift,
                     int8_t* out, cudaStream_t stream) {
  check(batch > 0 && h > 0 && w > 0 && c > 0 && batch * c <= kMaxElementwiseCount,
        "cuda global_avg_pool: bad shape " + std::to_string(batch) + "x" + std::to_string(h) + "x" + std::to_string(w) +
            "x" + std::to_string(c));
  launch_global_avg_pool(in, batch * c, int64_t(h) * w, c, multiplier, shift, out, stream);
}

}  // namespace octet::cuda
