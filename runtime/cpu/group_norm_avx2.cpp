// AVX2 GroupNorm's output levels (group_norm_simd.h): 16 values of a pixel at
// a time, 4 in each double vector: d = count x - offset (x count exact, then
// one exact subtraction of integers below 2^53), fma(d, gain, shift) clamped
// to [lowest, 127] less the output zero point (integer bounds: the clamp
// commutes with the rounding), converted with the default rounding (half to
// even, as rint), and packed to int8 around the zero point (int8_outputs), so
// the bits are ops::group_norm_level's.
//
// This file is compiled with AVX2 and FMA flags; everything in it has
// internal linkage or is called only after the run-time CPU check.
#include <immintrin.h>

#include "runtime/cpu/epilogue_avx2.h"  // int8_outputs
#include "runtime/cpu/group_norm_simd.h"

namespace octet::cpu::avx2 {

namespace {
struct LevelVectors {
  __m256d count, low, high;
};

// The levels less the output zero point of the 8 values at x, their channels' terms at offset, gain and shift.
__m256i levels(const int8_t* x, const LevelVectors& l, const double* offset, const double* gain, const double* shift) {
  const __m256i v = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x)));
  const auto half = [&](__m128i h, int k) {
    const __m256d d = _mm256_sub_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(h), l.count), _mm256_loadu_pd(offset + 4 * k));
    const __m256d level = _mm256_fmadd_pd(d, _mm256_loadu_pd(gain + 4 * k), _mm256_loadu_pd(shift + 4 * k));
    return _mm256_cvtpd_epi32(_mm256_min_pd(_mm256_max_pd(level, l.low), l.high));
  };
  return _mm256_set_m128i(half(_mm256_extracti128_si256(v, 1), 1), half(_mm256_castsi256_si128(v), 0));
}
}  // namespace

void group_norm_pixels(const int8_t* x, int64_t pixels, int64_t C, const GroupNormTerms& t, int8_t* y) {
  const LevelVectors l{_mm256_set1_pd(t.count), _mm256_set1_pd(t.lowest - t.output_zero_point),
                       _mm256_set1_pd(127.0 - t.output_zero_point)};
  const Int8Range range(t.output_zero_point, static_cast<int32_t>(t.lowest), 127);
  for (int64_t p = 0; p < pixels; ++p, x += C, y += C)
    for (int64_t c = 0; c < C; c += 16) {
      const __m256i q0 = levels(x + c, l, t.offset + c, t.gain + c, t.shift + c);
      const __m256i q1 = levels(x + c + 8, l, t.offset + c + 8, t.gain + c + 8, t.shift + c + 8);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + c), int8_outputs(q0, q1, range));
    }
}

}  // namespace octet::cpu::avx2
