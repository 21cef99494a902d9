#include "runtime/cuda/eltwise.cuh"

#include "runtime/cuda/eltwise_kernel.h"

namespace octet::cuda {

namespace {

__global__ void add_kernel(const int8_t* __restrict__ a, const int8_t* __restrict__ b, int64_t count,
                           const AddOperands o, int8_t* __restrict__ out) {
  grid_dependency_sync();  // launched programmatically, the kernel before may still run
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) add_element(a, b, o, e, out);
}

__global__ void relu_kernel(const int8_t* __restrict__ in, bool unsigned_in, int64_t count, int8_t* __restrict__ out) {
  grid_dependency_sync();
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) relu_element(in, unsigned_in, e, out);
}

void launch_add(const int8_t* a, const int8_t* b, int64_t count, const AddOperands& o, int8_t* out,
                KernelStream stream) {
  launch_kernel(add_kernel, elementwise_grid(count), kBlockSize, 0, stream, a, b, count, o, out);
  CUDA_CHECK_LAUNCH();
}

void launch_relu(const int8_t* in, bool unsigned_in, int64_t count, int8_t* out, KernelStream stream) {
  launch_kernel(relu_kernel, elementwise_grid(count), kBlockSize, 0, stream, in, unsigned_in, count, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void add(const int8_t* a, const int8_t* b, int64_t count, int32_t multiplier_a, int32_t multiplier_b, int32_t shift,
         bool relu, BinaryZeroPoints zero_points, int8_t* out, KernelStream stream) {
  check(count > 0 && count <= kMaxElementwiseCount, "cuda add: bad element count " + std::to_string(count));
  const AddOperands o{stored_unsigned(zero_points.a), stored_unsigned(zero_points.b), multiplier_a, multiplier_b, shift,
                     stored_range(relu, zero_points.out)};
  launch_add(a, b, count, o, out, stream);
}

void relu(const int8_t* in, int64_t count, int32_t zero_point, int8_t* out, KernelStream stream) {
  check(count > 0 && count <= kMaxElementwiseCount, "cuda relu: bad element count " + std::to_string(count));
  launch_relu(in, stored_unsigned(zero_point), count, out, stream);
}

}  // namespace octet::cuda
