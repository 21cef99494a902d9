#include "runtime/cuda/eltwise.cuh"

#include "runtime/cuda/stored_value.h"

namespace octet::cuda {

namespace {

__global__ void add_kernel(const int8_t* __restrict__ a, bool unsigned_a, const int8_t* __restrict__ b,
                           bool unsigned_b, int64_t count, int32_t multiplier_a, int32_t multiplier_b, int32_t shift,
                           StoredRange range, int8_t* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  out[i] = static_cast<int8_t>(requantize_stored(stored_value(a[i], unsigned_a), multiplier_a,
                                                 stored_value(b[i], unsigned_b), multiplier_b, shift, range));
}

// An unsigned value is never below its real 0: copied.
__global__ void relu_kernel(const int8_t* __restrict__ in, bool unsigned_in, int64_t count, int8_t* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  out[i] = unsigned_in || in[i] > 0 ? in[i] : int8_t{0};
}

void launch_add(const int8_t* a, bool unsigned_a, const int8_t* b, bool unsigned_b, int64_t count,
                int32_t multiplier_a, int32_t multiplier_b, int32_t shift, StoredRange range, int8_t* out,
                cudaStream_t stream) {
  add_kernel<<<elementwise_grid(count), kBlockSize, 0, stream>>>(a, unsigned_a, b, unsigned_b, count, multiplier_a,
                                                                 multiplier_b, shift, range, out);
  CUDA_CHECK_LAUNCH();
}

void launch_relu(const int8_t* in, bool unsigned_in, int64_t count, int8_t* out, cudaStream_t stream) {
  relu_kernel<<<elementwise_grid(count), kBlockSize, 0, stream>>>(in, unsigned_in, count, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void add(const int8_t* a, const int8_t* b, int64_t count, int32_t multiplier_a, int32_t multiplier_b, int32_t shift,
         bool relu, BinaryZeroPoints zero_points, int8_t* out, cudaStream_t stream) {
  check(count > 0 && count <= kMaxElementwiseCount, "cuda add: bad element count " + std::to_string(count));
  launch_add(a, stored_unsigned(zero_points.a), b, stored_unsigned(zero_points.b), count, multiplier_a, multiplier_b,
             shift, stored_range(relu, zero_points.out), out, stream);
}

void relu(const int8_t* in, int64_t count, int32_t zero_point, int8_t* out, cudaStream_t stream) {
  check(count > 0 && count <= kMaxElementwiseCount, "cuda relu: bad element count " + std::to_string(count));
  launch_relu(in, stored_unsigned(zero_point), count, out, stream);
}

}  // namespace octet::cuda
