#include "runtime/cuda/linear_dp4a.cuh"

#include <climits>

#include "runtime/cuda/stored_value.h"

namespace octet::cuda {

namespace {

constexpr int kWarpsPerBlock = 8;

// The dot product of two rows of `words` int32 words (a's bytes uint8 where
// `unsigned_a`), summed over the warp; every lane returns the total. int32
// sums wrap, so the order does not change it.
__device__ __forceinline__ int32_t warp_dot(const int32_t* __restrict__ a, bool unsigned_a,
                                            const int32_t* __restrict__ b, int64_t words) {
  int32_t acc = 0;
  for (int64_t k = threadIdx.x % 32; k < words; k += 32)
    acc = unsigned_a ? dp4a_unsigned_signed(a[k], b[k], acc) : __dp4a(a[k], b[k], acc);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, offset);
  return acc;
}

// Warp `index` computes output (row, o) = (index / out_c, index % out_c).
__global__ void linear_dp4a_kernel(const int8_t* __restrict__ x, bool unsigned_x, const int8_t* __restrict__ w,
                                   int64_t outputs, int64_t depth, int out_c, const RequantEpilogue e,
                                   int8_t* __restrict__ y) {
  const int64_t index = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (index >= outputs) return;  // the whole warp leaves together
  const int64_t row = index / out_c;
  const int o = static_cast<int>(index % out_c);
  const int64_t words = depth / 4;
  const int32_t acc = warp_dot(reinterpret_cast<const int32_t*>(x + row * depth), unsigned_x,
                               reinterpret_cast<const int32_t*>(w + int64_t(o) * depth), words);
  if (threadIdx.x % 32 == 0) y[index] = static_cast<int8_t>(requantize_stored_output(acc, o, index, e));
}

__global__ void linear_dp4a_logits_kernel(const int8_t* __restrict__ x, bool unsigned_x, const int8_t* __restrict__ w,
                                          int64_t outputs, int64_t depth, int classes,
                                          const int32_t* __restrict__ bias, int32_t* __restrict__ logits) {
  const int64_t index = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (index >= outputs) return;
  const int64_t row = index / classes;
  const int o = static_cast<int>(index % classes);
  const int32_t acc = warp_dot(reinterpret_cast<const int32_t*>(x + row * depth), unsigned_x,
                               reinterpret_cast<const int32_t*>(w + int64_t(o) * depth), depth / 4);
  if (threadIdx.x % 32 == 0) logits[index] = acc + bias[o];
}

dim3 warp_grid(int64_t outputs) { return dim3(static_cast<unsigned>(ceil_div(outputs, kWarpsPerBlock))); }

void launch_linear_dp4a(const int8_t* x, bool unsigned_x, const int8_t* w, int64_t rows, int64_t depth, int out_c,
                        const RequantEpilogue& e, int8_t* y, cudaStream_t stream) {
  const int64_t outputs = rows * out_c;
  linear_dp4a_kernel<<<warp_grid(outputs), 32 * kWarpsPerBlock, 0, stream>>>(x, unsigned_x, w, outputs, depth, out_c,
                                                                             e, y);
  CUDA_CHECK_LAUNCH();
}

void launch_linear_dp4a_logits(const int8_t* x, bool unsigned_x, const int8_t* w, int64_t rows, int64_t depth,
                               int classes, const int32_t* bias, int32_t* logits, cudaStream_t stream) {
  const int64_t outputs = rows * classes;
  linear_dp4a_logits_kernel<<<warp_grid(outputs), 32 * kWarpsPerBlock, 0, stream>>>(x, unsigned_x, w, outputs, depth,
                                                                                    classes, bias, logits);
  CUDA_CHECK_LAUNCH();
}

bool aligned4(const void* p) { return reinterpret_cast<uintptr_t>(p) % 4 == 0; }

void check_linear(const int8_t* x, const int8_t* w, const void* y, int64_t rows, int64_t depth, int out_c) {
  const std::string why = linear_dp4a_unsupported(rows, depth, out_c);
  check(why.empty(), "cuda-dp4a linear cannot run this shape: " + why);
  check(aligned4(x) && aligned4(w) && aligned4(y),
        "cuda-dp4a linear: input, weights and output must be 4-byte aligned");
}

}  // namespace

std::string linear_dp4a_unsupported(int64_t rows, int64_t depth, int out_c) {
  if (rows <= 0 || out_c <= 0)
    return "empty shape (" + std::to_string(rows) + " rows, " + std::to_string(out_c) + " outputs)";
  if (depth <= 0 || depth % 4 != 0) return "K = " + std::to_string(depth) + " is not a positive multiple of 4";
  if (ceil_div(rows * out_c, kWarpsPerBlock) > INT_MAX) return "too many outputs for the grid";
  return "";
}

void linear_dp4a(const int8_t* x, bool unsigned_x, const int8_t* w, int64_t rows, int64_t depth, int out_c,
                 const RequantEpilogue& e, int8_t* y, cudaStream_t stream) {
  check_linear(x, w, y, rows, depth, out_c);
  launch_linear_dp4a(x, unsigned_x, w, rows, depth, out_c, e, y, stream);
}

void linear_dp4a_logits(const int8_t* x, bool unsigned_x, const int8_t* w, int64_t rows, int64_t depth, int classes,
                        const int32_t* bias, int32_t* logits, cudaStream_t stream) {
  check_linear(x, w, logits, rows, depth, classes);
  launch_linear_dp4a_logits(x, unsigned_x, w, rows, depth, classes, bias, logits, stream);
}

}  // namespace octet::cuda
