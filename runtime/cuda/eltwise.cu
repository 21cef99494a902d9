#include "runtime/cuda/eltwise.cuh"

namespace octet::cuda {

namespace {

__global__ void add_kernel(const int8_t* __restrict__ a, const int8_t* __restrict__ b, int64_t count,
                           int32_t multiplier_a, int32_t multiplier_b, int32_t shift, int32_t lo,
                           int8_t* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  out[i] = static_cast<int8_t>(::octet::requantize(a[i], multiplier_a, b[i], multiplier_b, shift, lo));
}

__global__ void relu_kernel(const int8_t* __restrict__ in, int64_t count, int8_t* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  out[i] = in[i] > 0 ? in[i] : int8_t{0};
}

void launch_add(const int8_t* a, const int8_t* b, int64_t count, int32_t multiplier_a, int32_t multiplier_b,
                int32_t shift, int32_t lo, int8_t* out, cudaStream_t stream) {
  add_kernel<<<elementwise_grid(count), kBlockSize, 0, stream>>>(a, b, count, multiplier_a, multiplier_b, shift, lo,
                                                                 out);
  CUDA_CHECK_LAUNCH();
}

void launch_relu(const int8_t* in, int64_t count, int8_t* out, cudaStream_t stream) {
  relu_kernel<<<elementwise_grid(count), kBlockSize, 0, stream>>>(in, count, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void add(const int8_t* a, const int8_t* b, int64_t count, int32_t multiplier_a, int32_t multiplier_b, int32_t shift,
         bool relu, int8_t* out, cudaStream_t stream) {
  check(count > 0 && count <= kMaxElementwiseCount, "cuda add: bad element count " + std::to_string(count));
  launch_add(a, b, count, multiplier_a, multiplier_b, shift, relu ? 0 : -128, out, stream);
}

void relu(const int8_t* in, int64_t count, int8_t* out, cudaStream_t stream) {
  check(count > 0 && count <= kMaxElementwiseCount, "cuda relu: bad element count " + std::to_string(count));
  launch_relu(in, count, out, stream);
}

}  // namespace octet::cuda
