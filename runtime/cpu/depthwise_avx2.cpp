// AVX2 depthwise convolution. Threads share the output rows; each pixel
// finds the taps inside the image once, then takes 8 channels at a time:
// widens their int8 inputs to int32, multiply-adds them with the taps'
// weights (vpmulld) and requantizes the 8 in registers (epilogue_avx2.h),
// whose operands are made once per call. Kernels of 3x3 and 5x5 unroll the
// taps of pixels whose window lies inside the image.
//
// This file is compiled with AVX2 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include <immintrin.h>

#include <cstring>
#include <vector>

#include "runtime/cpu/depthwise_simd.h"
#include "runtime/cpu/depthwise_walk.h"
#include "runtime/cpu/epilogue_avx2.h"

namespace octet::cpu::avx2 {
namespace {

// 8 channels' int8 inputs as int32: all 8 in one load (Whole), or `lanes`
// of them without reading past the last.
template <bool Whole>
__attribute__((always_inline)) inline __m256i load_channels(const int8_t* x, int64_t lanes) {
  if (Whole) return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x)));
  int64_t bytes = 0;
  std::memcpy(&bytes, x, static_cast<size_t>(lanes));
  return _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes));
}

// One pixel's accumulators of 8 channels over its taps inside the image
// (kernel rows `rows`, columns `cols`). `x` is its tap (0, 0) as an offset
// into `input` (outside the image where the window is clipped), `w` the
// taps' weights of the 8 channels, `zero` the input's zero point (each
// input is read less it, so the skipped taps, a real 0, add nothing). K: the kernel size known when compiling
// (0: g.kernel), so whole windows unroll.
template <int K, bool Whole>
__attribute__((always_inline)) inline __m256i pixel_channels(const int8_t* input, int64_t x, const int32_t* w,
                                                             int64_t lanes, int k, InnerTaps rows, InnerTaps cols,
                                                             int64_t row_step, int64_t col_step, int64_t tap_step,
                                                             __m256i zero) {
  __m256i acc = _mm256_setzero_si256();
  auto tap = [&](int ky, int kx) {
    const __m256i v = _mm256_sub_epi32(load_channels<Whole>(input + (x + ky * row_step + kx * col_step), lanes), zero);
    const __m256i weight = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + (ky * k + kx) * tap_step));
    acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(v, weight));
  };
  if (K != 0 && rows.first == 0 && rows.end == K && cols.first == 0 && cols.end == K) {
    for (int ky = 0; ky < K; ++ky)
      for (int kx = 0; kx < K; ++kx) tap(ky, kx);
  } else {
    for (int ky = rows.first; ky < rows.end; ++ky)
      for (int kx = cols.first; kx < cols.end; ++kx) tap(ky, kx);
  }
  return acc;
}

template <int K>
void depthwise_rows(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const EpilogueTables& e,
                    int8_t* output) {
  const int k = K != 0 ? K : g.kernel;
  const int64_t channels = g.out_c;
  const int64_t padded = (channels + kEpilogueBlock - 1) / kEpilogueBlock * kEpilogueBlock;
  const int64_t col_step = int64_t(g.dilation) * channels, row_step = col_step * g.in_w;
  const int64_t whole_end = channels / kLanes * kLanes;
  const bool narrow = narrow_is_exact(int64_t(k) * k, channels, e);
  std::vector<ChannelVectors> blocks;
  for (int64_t channel = 0; channel < channels; channel += kLanes) blocks.emplace_back(e, channel, narrow);
  const int32_t lo = e.lo;
  const __m256i zero = _mm256_set1_epi32(g.input_zero_point);
  for_each_output_row(g, [&](int64_t b, int64_t oy) {
    const InnerTaps rows = inner_taps(oy, g.in_h, g);
    for (int64_t ox = 0; ox < g.out_w; ++ox) {
      const InnerTaps cols = inner_taps(ox, g.in_w, g);
      const int64_t x = ((b * g.in_h + oy * g.stride - g.padding) * g.in_w + ox * g.stride - g.padding) * channels;
      const int64_t at = ((b * g.out_h + oy) * g.out_w + ox) * channels;
      for (int64_t channel = 0; channel < whole_end; channel += kLanes) {
        const __m256i acc = pixel_channels<K, true>(input, x + channel, taps + channel, kLanes, k, rows, cols,
                                                     row_step, col_step, padded, zero);
        store_int8(acc, blocks[channel / kLanes], e.skip ? e.skip + at + channel : nullptr, lo, kLanes,
                   output + at + channel);
      }
      if (whole_end < channels) {
        const int64_t lanes = channels - whole_end;
        const __m256i acc = pixel_channels<K, false>(input, x + whole_end, taps + whole_end, lanes, k, rows, cols,
                                                      row_step, col_step, padded, zero);
        store_int8(acc, blocks.back(), e.skip ? e.skip + at + whole_end : nullptr, lo, lanes, output + at + whole_end);
      }
    }
  });
}

}  // namespace

void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const EpilogueTables& e,
                      int8_t* output) {
  if (g.kernel == 3) return depthwise_rows<3>(g, input, taps, e, output);
  if (g.kernel == 5) return depthwise_rows<5>(g, input, taps, e, output);
  depthwise_rows<0>(g, input, taps, e, output);
}

}  // namespace octet::cpu::avx2
