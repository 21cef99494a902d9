#include "runtime/cuda/conv2d_dp4a.cuh"

#include <climits>
#include <cstdint>

#include "runtime/cuda/stored_value.h"

namespace octet::cuda {

namespace {

constexpr int kConvThreads = 256;
constexpr int kStepWords = 8;  // K advances 8 dp4a words (32 bytes) per shared-memory step
constexpr int kStepBytes = 4 * kStepWords;
constexpr int kTilePad = 4;  // shared row padding: the tile stores hit 32 different banks

// A block computes BM output pixels x BN output channels; each of its 256
// threads owns 4 pixels (rows thread_row + BM/4 * i) x 4 adjacent channels.
// kUnsignedInput: the input is stored as uint8 (stored_value.h).
template <int BM, int BN, bool kUnsignedInput>
__global__ void __launch_bounds__(kConvThreads)
    conv2d_dp4a_kernel(const ConvShape s, const int8_t* __restrict__ input, const int8_t* __restrict__ weights,
                       const RequantEpilogue e, int8_t* __restrict__ output) {
  static_assert(BM * BN == 16 * kConvThreads, "each thread computes 4 x 4 outputs");
  static_assert(BM % 32 == 0 && BN % 4 == 0, "tile loads assume 32 rows per pass and 4-channel groups");
  constexpr int kLoadRows = BM / 32;  // A-tile rows a thread loads: 256 threads cover 32 rows x 8 words per pass
  __shared__ int32_t a_tile[kStepWords][BM + kTilePad];
  __shared__ __align__(16) int32_t b_tile[kStepWords][BN + kTilePad];

  const int tid = threadIdx.x;
  const int64_t rows = s.rows();
  const int depth = static_cast<int>(s.depth());
  const int64_t row0 = int64_t(blockIdx.x) * BM;
  const int col0 = blockIdx.y * BN;

  // This thread loads word `load_word` of tile rows load_row + 32 i. For each
  // such output pixel: where its image starts in `input` (-1 past the last
  // row) and the top-left input pixel of its receptive field.
  const int load_word = tid % kStepWords;
  const int load_row = tid / kStepWords;
  int64_t image_offset[kLoadRows];
  int origin_y[kLoadRows], origin_x[kLoadRows];
#pragma unroll
  for (int i = 0; i < kLoadRows; ++i) {
    const int64_t m = row0 + load_row + 32 * i;
    const int ox = static_cast<int>(m % s.out_w);
    const int oy = static_cast<int>((m / s.out_w) % s.out_h);
    const int64_t n = m / (int64_t(s.out_w) * s.out_h);
    image_offset[i] = m < rows ? n * s.in_h * s.in_w * s.in_c : -1;
    origin_y[i] = oy * s.stride - s.padding;
    origin_x[i] = ox * s.stride - s.padding;
  }

  const int thread_col = tid % (BN / 4);
  const int thread_row = tid / (BN / 4);  // < BM / 4 because BM * BN = 4096
  int32_t acc[4][4] = {};

  for (int k0 = 0; k0 < depth; k0 += kStepBytes) {
    // A tile. Byte k of a patch is channel c of tap (ky, kx); in_c is a
    // multiple of 4, so a word is 4 channels of one input pixel.
    const int k = k0 + 4 * load_word;
    const int tap = k / s.in_c;
    const int c = k - tap * s.in_c;
    const int ky = tap / s.kernel;
    const int kx = tap - ky * s.kernel;
#pragma unroll
    for (int i = 0; i < kLoadRows; ++i) {
      const int iy = origin_y[i] + ky, ix = origin_x[i] + kx;
      int32_t word = 0;  // zero padding, and past the end of K or of the rows
      if (image_offset[i] >= 0 && k < depth && iy >= 0 && iy < s.in_h && ix >= 0 && ix < s.in_w)
        word = *reinterpret_cast<const int32_t*>(input + image_offset[i] + (int64_t(iy) * s.in_w + ix) * s.in_c + c);
      a_tile[load_word][load_row + 32 * i] = word;
    }
    // B tile: word idx % 8 of weight row col0 + idx / 8.
    for (int idx = tid; idx < BN * kStepWords; idx += kConvThreads) {
      const int col = col0 + idx / kStepWords;
      const int kb = k0 + 4 * (idx % kStepWords);
      int32_t word = 0;
      if (col < s.out_c && kb < depth) word = *reinterpret_cast<const int32_t*>(weights + int64_t(col) * depth + kb);
      b_tile[idx % kStepWords][idx / kStepWords] = word;
    }
    __syncthreads();
#pragma unroll
    for (int w = 0; w < kStepWords; ++w) {
      const int4 b = *reinterpret_cast<const int4*>(&b_tile[w][4 * thread_col]);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int32_t a = a_tile[w][thread_row + (BM / 4) * i];
        const auto dot = [&](int32_t weight, int32_t c) {
          return kUnsignedInput ? dp4a_unsigned_signed(a, weight, c) : __dp4a(a, weight, c);
        };
        acc[i][0] = dot(b.x, acc[i][0]);
        acc[i][1] = dot(b.y, acc[i][1]);
        acc[i][2] = dot(b.z, acc[i][2]);
        acc[i][3] = dot(b.w, acc[i][3]);
      }
    }
    __syncthreads();  // the next step overwrites the tiles
  }

  const int col = col0 + 4 * thread_col;
  if (col >= s.out_c) return;  // out_c is a multiple of 4: col + 3 < out_c otherwise
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t m = row0 + thread_row + (BM / 4) * i;
    if (m >= rows) break;  // rows grow with i
    const int64_t at = m * s.out_c + col;
    const auto out = [&](int j) { return requantize_stored_output(acc[i][j], col + j, at + j, e); };
    *reinterpret_cast<uint32_t*>(output + at) = pack_int8x4(out(0), out(1), out(2), out(3));
  }
}

template <int BM, int BN>
void launch_conv2d_dp4a_tiles(const ConvShape& s, const int8_t* input, bool unsigned_input, const int8_t* weights,
                              const RequantEpilogue& e, int8_t* output, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(ceil_div(s.rows(), BM)), static_cast<unsigned>(ceil_div(s.out_c, BN)));
  if (unsigned_input)
    conv2d_dp4a_kernel<BM, BN, true><<<grid, kConvThreads, 0, stream>>>(s, input, weights, e, output);
  else
    conv2d_dp4a_kernel<BM, BN, false><<<grid, kConvThreads, 0, stream>>>(s, input, weights, e, output);
  CUDA_CHECK_LAUNCH();
}

// Narrow layers get taller tiles so that few threads idle on missing channels.
void launch_conv2d_dp4a(const ConvShape& s, const int8_t* input, bool unsigned_input, const int8_t* weights,
                        const RequantEpilogue& e, int8_t* output, cudaStream_t stream) {
  if (s.out_c <= 16)
    launch_conv2d_dp4a_tiles<256, 16>(s, input, unsigned_input, weights, e, output, stream);
  else if (s.out_c <= 32)
    launch_conv2d_dp4a_tiles<128, 32>(s, input, unsigned_input, weights, e, output, stream);
  else
    launch_conv2d_dp4a_tiles<64, 64>(s, input, unsigned_input, weights, e, output, stream);
}

bool aligned4(const void* p) { return reinterpret_cast<uintptr_t>(p) % 4 == 0; }

}  // namespace

std::string conv2d_dp4a_unsupported(const ConvShape& s) {
  if (s.batch <= 0 || s.out_h <= 0 || s.out_w <= 0 || s.in_h <= 0 || s.in_w <= 0)
    return "empty shape (batch " + std::to_string(s.batch) + ")";
  if (s.kernel <= 0 || s.stride <= 0 || s.padding < 0) return "bad kernel, stride or padding";
  if (s.in_c <= 0 || s.in_c % 4 != 0)
    return "input channels " + std::to_string(s.in_c) + " are not padded to a positive multiple of 4";
  if (s.out_c <= 0 || s.out_c % 4 != 0)
    return "output channels " + std::to_string(s.out_c) + " are not padded to a positive multiple of 4";
  if (s.depth() > INT_MAX - kStepBytes) return "K = " + std::to_string(s.depth()) + " does not fit 32-bit indexing";
  if (ceil_div(s.rows(), 64) > INT_MAX) return std::to_string(s.rows()) + " output pixels exceed the grid";
  if (ceil_div(s.out_c, 16) > 65535) return std::to_string(s.out_c) + " output channels exceed the grid";
  return "";
}

void conv2d_dp4a(const ConvShape& s, const int8_t* input, bool unsigned_input, const int8_t* weights,
                 const RequantEpilogue& e, int8_t* output, cudaStream_t stream) {
  const std::string why = conv2d_dp4a_unsupported(s);
  check(why.empty(), "cuda-dp4a conv2d cannot run this shape: " + why);
  check(aligned4(input) && aligned4(weights) && aligned4(output),
        "cuda-dp4a conv2d: input, weights and output must be 4-byte aligned");
  launch_conv2d_dp4a(s, input, unsigned_input, weights, e, output, stream);
}

}  // namespace octet::cuda
