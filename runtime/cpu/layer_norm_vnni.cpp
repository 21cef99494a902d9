// AVX-512 LayerNorm: a pixel's statistics from its values widened to int16
// less the zero point (vpmaddwd pairs them into int32 sums and sums of
// squares), ops::layer_norm_pixel's multiplier, then 16 levels at a time in
// double lanes: the same IEEE product and round-to-even as the oracle's
// scalar loop, clamped, converted and narrowed, so the bits are its bits.
//
// This file is compiled with AVX-512 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include "runtime/cpu/layer_norm_simd.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"  // GCC bug 105593, as in conv_vnni.cpp
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "runtime/cpu/epilogue_avx512.h"  // lane_mask
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu::vnni {

namespace {
// Fewer values run on the calling thread: waking the other costs about what they do.
constexpr int64_t kMinParallelValues = int64_t{1} << 16;

uint32_t lanes32(int64_t n) { return n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1; }

// The output levels of 8 values d in double lanes: clamp(roundeven(d m)) + z_out as int32.
__m256i levels(__m256i d, __m512d m, __m512d low, __m512d high) {
  const __m512d scaled = _mm512_mul_pd(_mm512_cvtepi32_pd(d), m);
  const __m512d rounded = _mm512_roundscale_pd(scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm512_cvtpd_epi32(_mm512_min_pd(_mm512_max_pd(rounded, low), high));
}

void pixel(const int8_t* x, const ops::LayerNormLevels& p, int8_t* y) {
  const int64_t C = p.channels;
  const __m512i zero = _mm512_set1_epi16(static_cast<int16_t>(p.input_zero_point)), ones = _mm512_set1_epi16(1);
  __m512i sums = _mm512_setzero_si512(), squares = _mm512_setzero_si512();
  for (int64_t c = 0; c < C; c += 32) {
    const __mmask32 mask = lanes32(C - c);
    const __m512i v = _mm512_maskz_sub_epi16(mask, _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(mask, x + c)), zero);
    sums = _mm512_add_epi32(sums, _mm512_madd_epi16(v, ones));
    squares = _mm512_add_epi32(squares, _mm512_madd_epi16(v, v));
  }
  const ops::LayerNormPixel px =
      ops::layer_norm_pixel(_mm512_reduce_add_epi32(sums), _mm512_reduce_add_epi32(squares), p);
  const __m512i channels = _mm512_set1_epi32(static_cast<int32_t>(C));
  const __m512i offset = _mm512_set1_epi32(static_cast<int32_t>(px.offset));
  const __m512i out_zero = _mm512_set1_epi32(p.output_zero_point);
  const __m512d m = _mm512_set1_pd(px.m), low = _mm512_set1_pd(-128.0 - p.output_zero_point),
                high = _mm512_set1_pd(127.0 - p.output_zero_point);
  for (int64_t c = 0; c < C; c += 16) {
    const __mmask16 mask = lane_mask(C - c);
    const __m512i d = _mm512_sub_epi32(
        _mm512_mullo_epi32(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, x + c)), channels), offset);
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(levels(_mm512_castsi512_si256(d), m, low, high)),
                                         levels(_mm512_extracti64x4_epi64(d, 1), m, low, high), 1);
    _mm_mask_storeu_epi8(y + c, mask, _mm512_cvtepi32_epi8(_mm512_add_epi32(q, out_zero)));
  }
}
}  // namespace

void layer_norm(const int8_t* x, int64_t pixels, const ops::LayerNormLevels& p, int8_t* y) {
  const int64_t C = p.channels;
  parallel_for(pixels, pixels * C >= kMinParallelValues, [&](int64_t i) { pixel(x + i * C, p, y + i * C); });
}

}  // namespace octet::cpu::vnni
