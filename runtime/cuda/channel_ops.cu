#include "runtime/cuda/channel_ops.cuh"

namespace octet::cuda {

namespace {

// One thread per element e < count, running `element(e)`.
template <typename Element>
__global__ void elementwise_kernel(int64_t count, Element element) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) element(e);
}

template <typename Element>
void launch(const char* op, int64_t count, Element element, cudaStream_t stream) {
  check(count >= 0 && count <= kMaxElementwiseCount,
        std::string("cuda ") + op + ": bad element count " + std::to_string(count));
  if (count == 0) return;
  elementwise_kernel<<<elementwise_grid(count), kBlockSize, 0, stream>>>(count, element);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void concat_input(const int8_t* x, int64_t pixels, int in_stored_c, int channels, int first, int out_stored_c,
                  int32_t multiplier, int32_t shift, int32_t in_zero_point, int32_t out_zero_point, int8_t* y,
                  cudaStream_t stream) {
  launch(
      "concat", pixels * channels,
      [=] __device__(int64_t e) {
        concat_element(x, in_stored_c, channels, first, out_stored_c, multiplier, shift, in_zero_point,
                       out_zero_point, e, y);
      },
      stream);
}

void zero_channels(int8_t* y, int64_t pixels, int from, int stored_c, cudaStream_t stream) {
  launch(
      "zero_channels", pixels * (stored_c - from),
      [=] __device__(int64_t e) { zero_channels_element(from, stored_c, e, y); }, stream);
}

void mul(const int8_t* x, const int8_t* z, bool broadcast, int64_t batch, int64_t pixels, int stored_c,
         int32_t multiplier, int32_t shift, BinaryZeroPoints zero_points, int8_t* y, cudaStream_t stream) {
  launch(
      "mul", batch * pixels * stored_c,
      [=] __device__(int64_t e) {
        mul_element(x, z, broadcast, pixels, stored_c, multiplier, shift, zero_points, e, y);
      },
      stream);
}

void channel_slice(const int8_t* x, int64_t pixels, int in_stored_c, int offset, int channels, int out_stored_c,
                   int8_t* y, cudaStream_t stream) {
  launch(
      "channel_slice", pixels * out_stored_c,
      [=] __device__(int64_t e) { slice_element(x, in_stored_c, offset, channels, out_stored_c, e, y); }, stream);
}

void channel_shuffle(const int8_t* x, int64_t pixels, int channels, int groups, int stored_c, int8_t* y,
                     cudaStream_t stream) {
  launch(
      "channel_shuffle", pixels * stored_c,
      [=] __device__(int64_t e) { shuffle_element(x, channels, groups, stored_c, e, y); }, stream);
}

void activation(const int8_t* x, const int8_t* table, int64_t pixels, int channels, int stored_c, int8_t* y,
                cudaStream_t stream) {
  launch(
      "activation", pixels * stored_c, [=] __device__(int64_t e) { table_element(x, table, channels, stored_c, e, y); },
      stream);
}

void channel_tables(const int8_t* x, const int8_t* tables, int64_t pixels, int channels, int stored_c, int8_t* y,
                    cudaStream_t stream) {
  launch(
      "channel_tables", pixels * stored_c,
      [=] __device__(int64_t e) { channel_table_element(x, tables, channels, stored_c, e, y); }, stream);
}

void pad2d(const int8_t* x, int64_t batch, const PadShape& s, int8_t* y, cudaStream_t stream) {
  launch(
      "pad2d", batch * s.out_h * s.out_w * s.stored_c, [=] __device__(int64_t e) { pad_element(x, s, e, y); },
      stream);
}

void layer_norm(const int8_t* x, int64_t pixels, const LayerNormOperands& o, int8_t* y, cudaStream_t stream) {
  launch("layer_norm", pixels, [=] __device__(int64_t p) { layer_norm_pixel(x, o, p, y); }, stream);
}

}  // namespace octet::cuda
