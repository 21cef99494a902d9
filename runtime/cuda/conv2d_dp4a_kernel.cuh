// The cuda-dp4a convolution kernel (conv2d_dp4a.cu launches it). Compiled by
// nvcc for the GPU, and for the CPU by tests/cuda/cuda_on_cpu.h, which
// stands in for CUDA's keywords and built-ins before including this file.
#pragma once

#include <cstdint>

#include "runtime/cuda/conv_shape.h"
#include "runtime/cuda/int8x4.h"
#include "runtime/cuda/stored_value.h"
#if defined(__CUDACC__)
#include "runtime/cuda/programmatic_launch.cuh"
#endif

namespace octet::cuda {

constexpr int kDp4aThreads = 256;
constexpr int kDp4aStepWords = 8;  // K advances 8 dp4a words (32 bytes) per shared-memory step
constexpr int kDp4aStepBytes = 4 * kDp4aStepWords;
constexpr int kDp4aTilePad = 4;  // shared row padding: the tile stores hit 32 different banks

// The A (activation) tile's bytes in a block's dynamic shared memory, then
// the B tile's.
OCTET_HOST_DEVICE constexpr int dp4a_a_tile_bytes(int bm) {
  return kDp4aStepWords * (bm + kDp4aTilePad) * int(sizeof(int32_t));
}
OCTET_HOST_DEVICE constexpr int dp4a_shared_bytes(int bm, int bn) {
  return dp4a_a_tile_bytes(bm) + kDp4aStepWords * (bn + kDp4aTilePad) * int(sizeof(int32_t));
}

// A block computes BM output pixels x BN output channels; each of its 256
// threads owns 4 pixels (rows thread_row + BM/4 * i) x 4 adjacent channels.
// kUnsignedInput: the input is stored as uint8 (stored_value.h).
template <int BM, int BN, bool kUnsignedInput>
static __global__ void __launch_bounds__(kDp4aThreads)
    conv2d_dp4a_kernel(const ConvShape s, const int8_t* __restrict__ input, const int8_t* __restrict__ weights,
                       const RequantEpilogue e, int8_t* __restrict__ output) {
  static_assert(BM * BN == 16 * kDp4aThreads, "each thread computes 4 x 4 outputs");
  static_assert(BM % 32 == 0 && BN % 4 == 0, "tile loads assume 32 rows per pass and 4-channel groups");
  static_assert(dp4a_a_tile_bytes(BM) % 16 == 0, "the B tile's rows are read as 16-byte int4 vectors");
  constexpr int kLoadRows = BM / 32;  // A-tile rows a thread loads: 256 threads cover 32 rows x 8 words per pass
  grid_dependency_wait();  // launched programmatically, the kernel before may still run
  grid_dependency_launch_next();
  extern __shared__ __align__(16) int8_t shared[];
  auto a_tile = reinterpret_cast<int32_t (*)[BM + kDp4aTilePad]>(shared);
  auto b_tile = reinterpret_cast<int32_t (*)[BN + kDp4aTilePad]>(shared + dp4a_a_tile_bytes(BM));

  const int tid = threadIdx.x;
  const int64_t rows = s.rows();
  const int depth = static_cast<int>(s.depth());
  const int64_t row0 = int64_t(blockIdx.x) * BM;
  const int col0 = blockIdx.y * BN;

  // This thread loads word `load_word` of tile rows load_row + 32 i. For each
  // such output pixel: where its image starts in `input` (-1 past the last
  // row) and the top-left input pixel of its receptive field.
  const int load_word = tid % kDp4aStepWords;
  const int load_row = tid / kDp4aStepWords;
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

  for (int k0 = 0; k0 < depth; k0 += kDp4aStepBytes) {
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
    for (int idx = tid; idx < BN * kDp4aStepWords; idx += kDp4aThreads) {
      const int col = col0 + idx / kDp4aStepWords;
      const int kb = k0 + 4 * (idx % kDp4aStepWords);
      int32_t word = 0;
      if (col < s.out_c && kb < depth) word = *reinterpret_cast<const int32_t*>(weights + int64_t(col) * depth + kb);
      b_tile[idx % kDp4aStepWords][idx / kDp4aStepWords] = word;
    }
    __syncthreads();
#pragma unroll
    for (int w = 0; w < kDp4aStepWords; ++w) {
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
    *reinterpret_cast<uint32_t*>(output + at) = word_through_table(pack_int8x4(out(0), out(1), out(2), out(3)), col, e);
  }
}

}  // namespace octet::cuda
