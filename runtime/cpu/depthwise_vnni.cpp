// AVX-512 depthwise convolution. Activations are NHWC, so a pixel's channels
// are adjacent and so are a tap's weights (taps-major). Threads share the
// output rows; a row is taken one block of 16 channels at a time, so that the
// block's taps' weights and its epilogue operands stay in registers while
// every pixel of the row reads them (the row's input rows stay in L1). Each
// pixel finds its taps inside the image once (kernels of 3x3 and 5x5 unroll
// whole windows), widens its 16 int8 inputs of a tap to int32 and
// multiply-adds them with the tap's weights (vpmulld: one channel's products
// never meet another's, so vpdpbusd's sums of four do not apply); the
// epilogue requantizes the 16 in registers (epilogue_avx512.h). Taps outside
// the image are skipped: each input is read less its zero point, so padding
// (a real 0) adds nothing. The reference kernel (ops/conv2d_grouped.cpp)
// spent most of its time requantizing one channel at a time.
//
// This file is compiled with AVX-512 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include "runtime/cpu/depthwise_simd.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593, as in conv_vnni.cpp
#endif
#include <immintrin.h>

#include <vector>

#include "runtime/cpu/depthwise_walk.h"
#include "runtime/cpu/epilogue_avx512.h"

namespace octet::cpu::vnni {
namespace {

constexpr int kLanes = 16;  // int32 channels per vector
struct Vector {  // std::vector<__m512i> would drop the type's alignment
  __m512i v;
};

// 16 channels' int8 inputs (the lanes of `mask`) as int32 less the zero point.
__attribute__((always_inline)) inline __m512i load_channels(const int8_t* x, __mmask16 mask, __m512i zero) {
  return _mm512_sub_epi32(_mm512_cvtepi8_epi32(load_bytes(mask, x)), zero);
}

// One output row's pixels for one block of channels. `x0` is pixel 0's tap
// (0, 0) as an offset into `input` (outside the image where the window is
// clipped); `w` the block's taps, one vector each. K: the kernel size known
// when compiling (0: g.kernel), so whole windows unroll and their weights
// stay in registers.
template <int K>
__attribute__((always_inline)) inline void row_block(const ConvGeometry& g, const int8_t* input, int64_t x0,
                                                     const __m512i* w, InnerTaps rows, const ChannelVectors& v,
                                                     const int8_t* skip, __m512i lo, __mmask16 mask, __m512i zero,
                                                     int8_t* out) {
  const int k = K != 0 ? K : g.kernel;
  const int64_t col_step = int64_t(g.dilation) * g.in_c, row_step = col_step * g.in_w;
  const int64_t pixel_step = int64_t(g.stride) * g.in_c;
  const bool whole_rows = rows.first == 0 && rows.end == k;
  for (int64_t ox = 0; ox < g.out_w; ++ox) {
    const InnerTaps cols = inner_taps(ox, g.in_w, g);
    const int64_t x = x0 + ox * pixel_step;
    __m512i acc = _mm512_setzero_si512();
    auto tap = [&](int ky, int kx) {
      const __m512i in = load_channels(input + (x + ky * row_step + kx * col_step), mask, zero);
      acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(in, w[ky * k + kx]));
    };
    if (K != 0 && whole_rows && cols.first == 0 && cols.end == K) {
      for (int ky = 0; ky < K; ++ky)
        for (int kx = 0; kx < K; ++kx) tap(ky, kx);
    } else {
      for (int ky = rows.first; ky < rows.end; ++ky)
        for (int kx = cols.first; kx < cols.end; ++kx) tap(ky, kx);
    }
    const int64_t at = ox * g.out_c;
    store_int8(acc, v, skip ? skip + at : nullptr, lo, mask, out + at);
  }
}

template <int K>
void depthwise_rows(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const EpilogueTables& e,
                    int8_t* output) {
  const int64_t channels = g.out_c, tap_count = int64_t(g.kernel) * g.kernel;
  const int64_t padded = (channels + kEpilogueBlock - 1) / kEpilogueBlock * kEpilogueBlock;
  const __m512i lo = _mm512_set1_epi32(e.lo), zero = _mm512_set1_epi32(g.input_zero_point);
  for_each_output_row(g, [&](int64_t b, int64_t oy) {
    const InnerTaps rows = inner_taps(oy, g.in_h, g);
    const int64_t x0 = ((b * g.in_h + oy * g.stride - g.padding) * g.in_w - g.padding) * channels;
    const int64_t row_at = (b * g.out_h + oy) * g.out_w * channels;
    __m512i known[K != 0 ? K * K : 1];  // a kernel size known when compiling: registers
    std::vector<Vector> any(K != 0 ? 0 : static_cast<size_t>(tap_count));
    __m512i* w = K != 0 ? known : &any[0].v;
    for (int64_t channel = 0; channel < channels; channel += kLanes) {
      const __mmask16 mask = lane_mask(channels - channel);
      const ChannelVectors v(e, channel);
      for (int64_t t = 0; t < tap_count; ++t) w[t] = _mm512_loadu_si512(taps + t * padded + channel);
      const int8_t* skip = e.skip ? e.skip + row_at + channel : nullptr;
      row_block<K>(g, input, x0 + channel, w, rows, v, skip, lo, mask, zero, output + row_at + channel);
    }
  });
}

}  // namespace

void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const EpilogueTables& e,
                      int8_t* output) {
  if (g.kernel == 1) return depthwise_rows<1>(g, input, taps, e, output);
  if (g.kernel == 3) return depthwise_rows<3>(g, input, taps, e, output);
  if (g.kernel == 5) return depthwise_rows<5>(g, input, taps, e, output);
  depthwise_rows<0>(g, input, taps, e, output);
}

}  // namespace octet::cpu::vnni
