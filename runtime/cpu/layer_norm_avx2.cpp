// AVX2 LayerNorm (layer_norm_simd.h), a pixel at a time: its statistics from
// its values widened to int16 less the zero point (vpmaddwd pairs them into
// int32 sums and sums of squares), its offset and multiplier m by
// ops::layer_norm_pixel, the oracle's own function; then 16 levels at a time
// in double lanes: d_c = C x - offset (exact), d_c m (one rounding, as
// layer_norm_level's product) clamped to [-128, 127] less the output zero
// point (integer bounds: the clamp commutes with the rounding), converted with
// the default rounding (half to even, as rint) and packed to int8 around the
// zero point (int8_outputs), so the bits are the oracle's.
//
// This file is compiled with AVX2 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include <immintrin.h>

#include "runtime/cpu/epilogue_avx2.h"  // int8_outputs
#include "runtime/cpu/layer_norm_simd.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu::avx2 {

namespace {
// Fewer values run on the calling thread: waking the other costs about what they do.
constexpr int64_t kMinParallelValues = int64_t{1} << 16;

int64_t lane_sum(__m256i v) {
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  int64_t sum = 0;
  for (int32_t lane : lanes) sum += lane;
  return sum;
}

// The exact sum and sum of squares of a pixel's C values (a multiple of 16) less the zero point.
ops::LayerNormPixel pixel_terms(const int8_t* x, const ops::LayerNormLevels& p, __m256i zero) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i sums = _mm256_setzero_si256(), square_sums = _mm256_setzero_si256();
  for (int64_t c = 0; c < p.channels; c += 16) {
    const __m256i v =
        _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + c))), zero);
    sums = _mm256_add_epi32(sums, _mm256_madd_epi16(v, ones));
    square_sums = _mm256_add_epi32(square_sums, _mm256_madd_epi16(v, v));
  }
  return ops::layer_norm_pixel(lane_sum(sums), lane_sum(square_sums), p);
}

struct LevelVectors {
  __m256d count, low, high;  // C, and [-128, 127] less the output zero point
};

// The levels less the output zero point of the 8 values at x.
__m256i levels(const int8_t* x, const LevelVectors& l, __m256d offset, __m256d m) {
  const __m256i v = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x)));
  const auto half = [&](__m128i h) {
    const __m256d d = _mm256_sub_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(h), l.count), offset);
    return _mm256_cvtpd_epi32(_mm256_min_pd(_mm256_max_pd(_mm256_mul_pd(d, m), l.low), l.high));
  };
  return _mm256_set_m128i(half(_mm256_extracti128_si256(v, 1)), half(_mm256_castsi256_si128(v)));
}
}  // namespace

void layer_norm(const int8_t* x, int64_t pixels, const ops::LayerNormLevels& p, int8_t* y) {
  const int64_t C = p.channels;
  const __m256i zero = _mm256_set1_epi16(static_cast<int16_t>(p.input_zero_point));
  const LevelVectors l{_mm256_set1_pd(double(C)), _mm256_set1_pd(-128.0 - p.output_zero_point),
                       _mm256_set1_pd(127.0 - p.output_zero_point)};
  const Int8Range range(p.output_zero_point, -128, 127);
  parallel_for(pixels, pixels * C >= kMinParallelValues, [&](int64_t i) {
    const int8_t* in = x + i * C;
    const ops::LayerNormPixel pixel = pixel_terms(in, p, zero);
    const __m256d offset = _mm256_set1_pd(double(pixel.offset)), m = _mm256_set1_pd(pixel.m);
    for (int64_t c = 0; c < C; c += 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i * C + c),
                       int8_outputs(levels(in + c, l, offset, m), levels(in + c + 8, l, offset, m), range));
  });
}

}  // namespace octet::cpu::avx2
