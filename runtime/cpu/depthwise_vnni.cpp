// AVX-512 depthwise convolution. Activations are NHWC, so a pixel's channels
// are adjacent and so are a tap's weights (taps-major): each output pixel
// takes 16 channels at a time, widens their int8 inputs to int32 and
// multiply-adds them with the tap's weights (vpmulld: one channel's products
// never meet another's, so vpdpbusd's sums of four do not apply), and the
// epilogue requantizes the 16 in registers (epilogue_avx512.h). Taps outside
// the image are skipped, as zero padding adds nothing. The reference kernel
// (ops/conv2d_grouped.cpp) spent most of its time requantizing one channel
// at a time.
//
// This file is compiled with AVX-512 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include "runtime/cpu/depthwise_simd.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593, as in conv_vnni.cpp
#endif
#include <immintrin.h>

#include "runtime/cpu/epilogue_avx512.h"

namespace octet::cpu::vnni {

namespace {
// Output pixels per unit of work shared among threads.
constexpr int64_t kPixelsPerTask = 64;
// Smaller layers (multiply-adds) run on the calling thread (conv_vnni.cpp's reason).
constexpr int64_t kMinParallelMacs = int64_t{1} << 22;
}  // namespace

void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const EpilogueTables& e,
                      int8_t* output) {
  const int64_t channels = g.out_c, pixels = g.rows(), k = g.kernel;
  const int64_t padded = (channels + kEpilogueBlock - 1) / kEpilogueBlock * kEpilogueBlock;
  const __m512i lo = _mm512_set1_epi32(e.relu ? 0 : -128);
  const int64_t tasks = (pixels + kPixelsPerTask - 1) / kPixelsPerTask;
#pragma omp parallel for schedule(static) if (pixels * channels * k * k >= kMinParallelMacs)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t end = pixels < (task + 1) * kPixelsPerTask ? pixels : (task + 1) * kPixelsPerTask;
    for (int64_t m = task * kPixelsPerTask; m < end; ++m) {
      const int64_t ox = m % g.out_w, oy = (m / g.out_w) % g.out_h, b = m / (int64_t(g.out_w) * g.out_h);
      for (int64_t channel = 0; channel < channels; channel += kEpilogueBlock) {
        const __mmask16 mask = lane_mask(channels - channel);
        __m512i acc = _mm512_setzero_si512();
        for (int64_t ky = 0; ky < k; ++ky) {
          const int64_t iy = oy * g.stride - g.padding + ky * g.dilation;
          if (iy < 0 || iy >= g.in_h) continue;
          for (int64_t kx = 0; kx < k; ++kx) {
            const int64_t ix = ox * g.stride - g.padding + kx * g.dilation;
            if (ix < 0 || ix >= g.in_w) continue;
            const int8_t* pixel = input + ((b * g.in_h + iy) * g.in_w + ix) * channels + channel;
            const __m512i x = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, pixel));
            const __m512i w = _mm512_loadu_si512(taps + (ky * k + kx) * padded + channel);
            acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(x, w));
          }
        }
        const int64_t at = m * channels + channel;
        store_int8(acc, ChannelVectors(e, channel), e.skip ? e.skip + at : nullptr, lo, mask, output + at);
      }
    }
  }
}

}  // namespace octet::cpu::vnni
