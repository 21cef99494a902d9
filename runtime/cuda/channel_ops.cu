#include "runtime/cuda/channel_ops.cuh"

#include <type_traits>

namespace octet::cuda {

namespace {

void check_count(const char* op, int64_t count) {
  check(count >= 0 && count <= kMaxElementwiseCount,
        std::string("cuda ") + op + ": bad element count " + std::to_string(count));
}

// One thread per element e < count, running `element(e)`.
template <typename Element>
__global__ void elementwise_kernel(int64_t count, Element element) {
  grid_dependency_sync();  // launched programmatically, the kernel before may still run
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < count) element(e);
}

template <typename Element>
void launch(const char* op, int64_t count, Element element, KernelStream stream) {
  check_count(op, count);
  if (count == 0) return;
  launch_kernel(elementwise_kernel<Element>, elementwise_grid(count), kBlockSize, 0, stream, count, element);
  CUDA_CHECK_LAUNCH();
}

// A vector read in one load instruction (copied member by member, its bytes
// would be W loads), through the read-only cache: no kernel here writes what it reads.
template <int W>
__device__ __forceinline__ ByteVector<W> load_vector(const ByteVector<W>* at) {
  using Word = std::conditional_t<W == 16, uint4, unsigned int>;
  static_assert(sizeof(Word) == W, "one load per vector");
  const Word word = __ldg(reinterpret_cast<const Word*>(at));
  ByteVector<W> v;
  memcpy(v.b, &word, W);
  return v;
}

// Activation over `vectors` W-byte vectors, its table in shared memory.
template <int W>
__global__ void table_kernel(const ByteVector<W>* x, const int8_t* table, int64_t vectors, int channels, int stored_c,
                             ByteVector<W>* y) {
  grid_dependency_sync();
  __shared__ int8_t shared_table[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) shared_table[i] = table[i];
  __syncthreads();
  const int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < vectors) y[v] = table_vector(load_vector(x + v), shared_table, static_cast<int>(v * W % stored_c), channels);
}

// PRelu over `vectors` W-byte vectors: a channel's table is 256 bytes, too many
// for shared memory across a wide layer; they stay in global memory (cached).
template <int W>
__global__ void channel_table_kernel(const ByteVector<W>* x, const int8_t* tables, int64_t vectors, int channels,
                                     int stored_c, ByteVector<W>* y) {
  grid_dependency_sync();
  const int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < vectors)
    y[v] = channel_table_vector(load_vector(x + v), tables, static_cast<int>(v * W % stored_c), channels);
}

// LayerNorm over `pixels` pixels, `lanes` threads each (a power of two up to
// 32, so that a group never straddles a warp): every thread of a warp takes
// part in the shuffles, those past the last pixel with nothing to add.
template <int W>
__global__ void layer_norm_kernel(const int8_t* x, int64_t pixels, LayerNormOperands o, int lanes, int8_t* y) {
  grid_dependency_sync();
  const int64_t thread = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t p = thread / lanes;
  const int lane = static_cast<int>(thread % lanes), vectors = o.stored_c / W;
  const bool active = p < pixels;
  const ByteVector<W>* in = reinterpret_cast<const ByteVector<W>*>(x + (active ? p : 0) * o.stored_c);
  LayerNormSums s;
  if (active)
    for (int v = lane; v < vectors; v += lanes) add_layer_norm_sums(load_vector(in + v), o, s);
  for (int d = lanes / 2; d > 0; d /= 2) {
    s.sum += __shfl_xor_sync(0xffffffffu, s.sum, d);
    s.squares += __shfl_xor_sync(0xffffffffu, s.squares, d);
  }
  if (!active) return;
  const double m = layer_norm_multiplier(s.sum, s.squares, o.channels, o.epsilon, o.input_scale, o.output_scale);
  ByteVector<W>* out = reinterpret_cast<ByteVector<W>*>(y + p * o.stored_c);
  for (int v = lane; v < vectors; v += lanes) out[v] = layer_norm_vector(load_vector(in + v), v * W, o, s.sum, m);
}

// GroupNorm: a block per group of a sample (block b: sample b / groups,
// group b % groups); warp shuffles, then shared memory, add the threads' sums.
__global__ void group_norm_kernel(const int8_t* x, GroupNormOperands o, int groups, int8_t* y) {
  grid_dependency_sync();
  const int64_t sample = blockIdx.x / groups;
  const int group = static_cast<int>(blockIdx.x % groups);
  LayerNormSums s;
  for (int64_t k = threadIdx.x; k < o.values(); k += blockDim.x)
    add_group_norm_sums(x[group_norm_index(o, sample, group, k)], o, s);
  for (int d = 16; d > 0; d /= 2) {
    s.sum += __shfl_xor_sync(0xffffffffu, s.sum, d);
    s.squares += __shfl_xor_sync(0xffffffffu, s.squares, d);
  }
  __shared__ int64_t warp_sums[kBlockSize / 32], warp_squares[kBlockSize / 32], group_sum;
  __shared__ double group_m;
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s.sum, warp_squares[threadIdx.x / 32] = s.squares;
  __syncthreads();
  if (threadIdx.x == 0) {
    int64_t sum = 0, squares = 0;
    for (int w = 0; w < kBlockSize / 32; ++w) sum += warp_sums[w], squares += warp_squares[w];
    group_sum = sum;
    group_m = group_norm_multiplier(sum, squares, o);
  }
  __syncthreads();
  for (int64_t k = threadIdx.x; k < o.values(); k += blockDim.x) {
    const int64_t i = group_norm_index(o, sample, group, k);
    y[i] = group_norm_stored(x[i], group_norm_channel(o, group, k), o, group_sum, group_m);
  }
}

template <int W>
void launch_tables(bool per_channel, const int8_t* x, const int8_t* tables, int64_t pixels, int channels,
                   int stored_c, int8_t* y, KernelStream stream) {
  const int64_t vectors = pixels * (stored_c / W);
  check_count(per_channel ? "channel_tables" : "activation", vectors);
  if (vectors == 0) return;
  const auto* in = reinterpret_cast<const ByteVector<W>*>(x);
  auto* out = reinterpret_cast<ByteVector<W>*>(y);
  if (per_channel)
    launch_kernel(channel_table_kernel<W>, elementwise_grid(vectors), kBlockSize, 0, stream, in, tables, vectors,
                  channels, stored_c, out);
  else
    launch_kernel(table_kernel<W>, elementwise_grid(vectors), kBlockSize, 0, stream, in, tables, vectors, channels,
                  stored_c, out);
  CUDA_CHECK_LAUNCH();
}

template <int W>
void launch_layer_norm(const int8_t* x, int64_t pixels, const LayerNormOperands& o, int8_t* y, KernelStream stream) {
  const int lanes = layer_norm_lanes(o.stored_c / W);
  check_count("layer_norm", pixels * lanes);
  if (pixels == 0) return;
  launch_kernel(layer_norm_kernel<W>, elementwise_grid(pixels * lanes), kBlockSize, 0, stream, x, pixels, o, lanes,
                y);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void concat_input(const int8_t* x, int64_t pixels, int in_stored_c, int channels, int first, int out_stored_c,
                  int32_t multiplier, int32_t shift, int32_t in_zero_point, int32_t out_zero_point, int8_t* y,
                  KernelStream stream) {
  launch(
      "concat", pixels * channels,
      [=] __device__(int64_t e) {
        concat_element(x, in_stored_c, channels, first, out_stored_c, multiplier, shift, in_zero_point,
                       out_zero_point, e, y);
      },
      stream);
}

void group_norm(const int8_t* x, int64_t batch, int groups, const GroupNormOperands& o, int8_t* y,
                KernelStream stream) {
  check_count("group_norm", batch * groups);
  check(batch * groups <= INT32_MAX, "cuda group_norm: more than 2^31 groups in a batch");
  if (batch == 0) return;
  launch_kernel(group_norm_kernel, dim3(static_cast<unsigned>(batch * groups)), kBlockSize, 0, stream, x, o, groups, y);
  CUDA_CHECK_LAUNCH();
  if (o.channels < o.stored_c) zero_channels(y, batch * o.pixels, o.channels, o.stored_c, stream);
}

void local_response_norm(const int8_t* x, int64_t pixels, const LocalResponseOperands& o, const double* multipliers,
                         int8_t* y, KernelStream stream) {
  launch(
      "local_response_norm", pixels * o.stored_c,
      [=] __device__(int64_t e) { local_response_element(x, o, multipliers, e, y); }, stream);
}

void zero_channels(int8_t* y, int64_t pixels, int from, int stored_c, KernelStream stream) {
  launch(
      "zero_channels", pixels * (stored_c - from),
      [=] __device__(int64_t e) { zero_channels_element(from, stored_c, e, y); }, stream);
}

void mul(const int8_t* x, const int8_t* z, ops::MulGate gate, int64_t batch, int64_t pixels, int stored_c,
         int z_stored_c, int32_t multiplier, int32_t shift, BinaryZeroPoints zero_points, int8_t* y,
         KernelStream stream) {
  launch(
      "mul", batch * pixels * stored_c,
      [=] __device__(int64_t e) {
        mul_element(x, z, gate, pixels, stored_c, z_stored_c, multiplier, shift, zero_points, e, y);
      },
      stream);
}

void channel_reduce(const int8_t* x, int64_t pixels, const ChannelReduceOperands& o, int8_t* y,
                    KernelStream stream) {
  launch(
      o.max ? "channel_max" : "channel_mean", pixels * o.out_stored_c,
      [=] __device__(int64_t e) { channel_reduce_element(x, o, e, y); }, stream);
}

void channel_slice(const int8_t* x, int64_t pixels, int in_stored_c, int offset, int channels, int out_stored_c,
                   int8_t* y, KernelStream stream) {
  launch(
      "channel_slice", pixels * out_stored_c,
      [=] __device__(int64_t e) { slice_element(x, in_stored_c, offset, channels, out_stored_c, e, y); }, stream);
}

void channel_shuffle(const int8_t* x, int64_t pixels, int channels, int groups, int stored_c, int8_t* y,
                     KernelStream stream) {
  launch(
      "channel_shuffle", pixels * stored_c,
      [=] __device__(int64_t e) { shuffle_element(x, channels, groups, stored_c, e, y); }, stream);
}

void activation(const int8_t* x, const int8_t* table, int64_t pixels, int channels, int stored_c, int8_t* y,
                KernelStream stream) {
  visit_vector_bytes(stored_c, [&](auto w) {
    launch_tables<decltype(w)::value>(false, x, table, pixels, channels, stored_c, y, stream);
  });
}

void channel_tables(const int8_t* x, const int8_t* tables, int64_t pixels, int channels, int stored_c, int8_t* y,
                    KernelStream stream) {
  visit_vector_bytes(stored_c, [&](auto w) {
    launch_tables<decltype(w)::value>(true, x, tables, pixels, channels, stored_c, y, stream);
  });
}

void pad2d(const int8_t* x, int64_t batch, const PadShape& s, int8_t* y, KernelStream stream) {
  launch(
      "pad2d", batch * s.out_h * s.out_w * s.stored_c, [=] __device__(int64_t e) { pad_element(x, s, e, y); },
      stream);
}

void upsample(const int8_t* x, int64_t batch, const UpsampleShape& s, int8_t* y, KernelStream stream) {
  launch(
      "upsample", batch * s.in_h * s.down * s.in_w * s.across * s.stored_c,
      [=] __device__(int64_t e) { upsample_element(x, s, e, y); }, stream);
}

void layer_norm(const int8_t* x, int64_t pixels, const LayerNormOperands& o, int8_t* y, KernelStream stream) {
  visit_vector_bytes(o.stored_c, [&](auto w) { launch_layer_norm<decltype(w)::value>(x, pixels, o, y, stream); });
}

}  // namespace octet::cuda
