// AVX-512 depthwise convolution. Activations are NHWC, so a pixel's channels
// are adjacent and so are a tap's weights (taps-major): each output pixel
// takes 16 channels at a time, widens their int8 inputs to int32 and
// multiply-adds them with the tap's weights (vpmulld: one channel's products
// never meet another's, so vpdpbusd's sums of four do not apply), and the
// epilogue requantizes the 16 in registers (epilogue_avx512.h). A task's
// pixels are taken one block of 16 channels at a time, so that the block's
// epilogue operands are loaded once per task, not once per pixel (most of a
// 1x1 depthwise conv's time, as DenseNet's batch norms import). Taps outside
// the image are skipped: each input is read less its zero point, so padding
// (a real 0) adds nothing. The reference kernel
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

#include "runtime/cpu/depthwise_walk.h"
#include "runtime/cpu/epilogue_avx512.h"

namespace octet::cpu::vnni {

void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const EpilogueTables& e,
                      int8_t* output) {
  const int64_t channels = g.out_c;
  const int64_t padded = (channels + kEpilogueBlock - 1) / kEpilogueBlock * kEpilogueBlock;
  const __m512i lo = _mm512_set1_epi32(e.lo), zero = _mm512_set1_epi32(g.input_zero_point);
  for_each_pixel_task(g, [&](int64_t first, int64_t end) {
    for (int64_t channel = 0; channel < channels; channel += kEpilogueBlock) {
      const __mmask16 mask = lane_mask(channels - channel);
      const ChannelVectors v(e, channel);
      OutputPixel pixel(g, first);
      for (int64_t m = first; m < end; ++m, pixel.next(g)) {
        __m512i acc = _mm512_setzero_si512();
        for_each_inner_tap(g, pixel, [&](int64_t offset, int64_t tap) {
          const __m512i x =
              _mm512_sub_epi32(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, input + offset + channel)), zero);
          const __m512i w = _mm512_loadu_si512(taps + tap * padded + channel);
          acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(x, w));
        });
        const int64_t at = m * channels + channel;
        store_int8(acc, v, e.skip ? e.skip + at : nullptr, lo, mask, output + at);
      }
    }
  });
}

}  // namespace octet::cpu::vnni
