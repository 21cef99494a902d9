// AVX-512 LayerNorm: a pixel's statistics from its values widened to int16
// less the zero point (vpmaddwd pairs them into int32 sums and sums of
// squares); common/layer_norm.h's multiplier of 8 pixels at once, each step
// the same IEEE operation in double lanes; then 64 levels at a time: d_c in
// double by one exact fma, its product with m converted with the default
// rounding (half to even, as rint), and the int32 levels packed to int8 around
// the zero point with saturation, as the convs' epilogue does (int8_outputs),
// so the bits are the oracle's. That needs |d_c m| < 2^31, which holds where
// s_out sqrt(C) < 2^30 (|d_c| <= sqrt(C - 1) sqrt(V), Samuelson's
// inequality); other layers clamp in double first, 16 levels at a time.
//
// This file is compiled with AVX-512 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include "runtime/cpu/layer_norm_simd.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"  // GCC bug 105593, as in conv_vnni.cpp
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cmath>

#include "runtime/cpu/epilogue_avx512.h"  // lane_mask, int8_outputs
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu::vnni {

namespace {
// Fewer values run on the calling thread: waking the other costs about what they do.
constexpr int64_t kMinParallelValues = int64_t{1} << 16;
// Pixels whose multipliers are computed together: one per double lane.
constexpr int kGroup = 8;

uint32_t lanes32(int64_t n) { return n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1; }

// The exact sum and sum of squares of a pixel's values less the zero point.
void statistics(const int8_t* x, int64_t C, __m512i zero, int64_t& sum, int64_t& squares) {
  const __m512i ones = _mm512_set1_epi16(1);
  __m512i sums = _mm512_setzero_si512(), square_sums = _mm512_setzero_si512();
  for (int64_t c = 0; c < C; c += 32) {
    const __mmask32 mask = lanes32(C - c);
    const __m512i v = _mm512_maskz_sub_epi16(mask, _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(mask, x + c)), zero);
    sums = _mm512_add_epi32(sums, _mm512_madd_epi16(v, ones));
    square_sums = _mm512_add_epi32(square_sums, _mm512_madd_epi16(v, v));
  }
  sum = _mm512_reduce_add_epi32(sums);
  squares = _mm512_reduce_add_epi32(square_sums);
}

// layer_norm_multiplier of 8 pixels: C squares - sum^2 in int64, then the
// guard's fma, the square root and the quotient, each one IEEE operation as there.
__m512d multipliers(const int64_t (&sum)[kGroup], const int64_t (&squares)[kGroup], const ops::LayerNormLevels& p) {
  const __m512i s = _mm512_loadu_si512(sum), q = _mm512_loadu_si512(squares);
  const __m512i variance =
      _mm512_sub_epi64(_mm512_mullo_epi64(_mm512_set1_epi64(p.channels), q), _mm512_mullo_epi64(s, s));
  const __m512d guard = _mm512_set1_pd(p.epsilon * double(p.channels) * double(p.channels));
  const __m512d scale_squared = _mm512_set1_pd(p.input_scale * p.input_scale);
  const __m512d root = _mm512_sqrt_pd(_mm512_fmadd_pd(guard, scale_squared, _mm512_cvtepi64_pd(variance)));
  const __mmask8 constant = _mm512_cmpeq_epi64_mask(variance, _mm512_setzero_si512());  // every d_c is 0
  return _mm512_maskz_div_pd(static_cast<__mmask8>(~constant), _mm512_set1_pd(p.output_scale), root);
}

// Whether every layer_norm_level of the layer fits int32 (the file comment).
bool levels_fit_int32(const ops::LayerNormLevels& p) {
  return p.output_scale * std::sqrt(double(p.channels)) < double(1 << 30);
}

// A layer's operands as vectors, made once per call.
struct LayerVectors {
  __m512i input_zero;             // 32 int16 lanes
  __m512d channels, low, high;    // C, and [lo, hi] less the output zero point
  __m512i output_zero;            // 16 int32 lanes
  Int8Range range;                // for int8_outputs: the output zero point, [-128, 127]
  bool packed;                    // levels_fit_int32: normalize_packed serves
  explicit LayerVectors(const ops::LayerNormLevels& p)
      : input_zero(_mm512_set1_epi16(static_cast<int16_t>(p.input_zero_point))),
        channels(_mm512_set1_pd(double(p.channels))),
        low(_mm512_set1_pd(-128.0 - p.output_zero_point)),
        high(_mm512_set1_pd(127.0 - p.output_zero_point)),
        output_zero(_mm512_set1_epi32(p.output_zero_point)),
        range(p.output_zero_point, -128, 127),
        packed(levels_fit_int32(p)) {}
};

// The int32 levels of the 16 values x[0, 16) of `mask` (the others read as
// 0): d m in double lanes, d = C x - offset (exact in one fma), clamped to
// [lo, hi] less the zero point where Clamp, converted rounding half to even.
template <bool Clamp>
__m512i rounded_levels(const int8_t* x, __mmask16 mask, const LayerVectors& l, __m512d offset, __m512d m) {
  const __m512i v = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, x));
  const auto half = [&](__m256i h) {
    __m512d level = _mm512_mul_pd(_mm512_fmsub_pd(_mm512_cvtepi32_pd(h), l.channels, offset), m);
    if constexpr (Clamp) level = _mm512_min_pd(_mm512_max_pd(level, l.low), l.high);
    return _mm512_cvtpd_epi32(level);
  };
  return _mm512_inserti64x4(_mm512_castsi256_si512(half(_mm512_castsi512_si256(v))),
                            half(_mm512_extracti64x4_epi64(v, 1)), 1);
}

// Levels x[0, n) (16 (J - 1) < n <= 16 J) to y, packed (int8_outputs).
template <int J>
void packed_levels(const int8_t* x, int64_t n, const LayerVectors& l, __m512d offset, __m512d m, int8_t* y) {
  __m512i q[J];
#pragma GCC unroll 4
  for (int j = 0; j < J; ++j) q[j] = rounded_levels<false>(x + 16 * j, lane_mask(n - 16 * j), l, offset, m);
  store_int8_outputs<J>(int8_outputs(q, l.range), n, y);
}

// One pixel's outputs from its multiplier and offset (layer_norm_pixel's),
// where levels_fit_int32.
void normalize_packed(const int8_t* x, int64_t C, const LayerVectors& l, double m, int64_t offset, int8_t* y) {
  const __m512d offsets = _mm512_set1_pd(double(offset)), ms = _mm512_set1_pd(m);
  int64_t c = 0;
  for (; c + 64 <= C; c += 64) packed_levels<4>(x + c, 64, l, offsets, ms, y + c);
  const int64_t n = C - c;
  if (n > 48) packed_levels<4>(x + c, n, l, offsets, ms, y + c);
  else if (n > 32) packed_levels<3>(x + c, n, l, offsets, ms, y + c);
  else if (n > 16) packed_levels<2>(x + c, n, l, offsets, ms, y + c);
  else if (n > 0) packed_levels<1>(x + c, n, l, offsets, ms, y + c);
}

// The same clamped in double first, for any layer.
void normalize(const int8_t* x, int64_t C, const LayerVectors& l, double m, int64_t offset, int8_t* y) {
  const __m512d offsets = _mm512_set1_pd(double(offset)), ms = _mm512_set1_pd(m);
  for (int64_t c = 0; c < C; c += 16) {
    const __mmask16 mask = lane_mask(C - c);
    const __m512i q = rounded_levels<true>(x + c, mask, l, offsets, ms);
    _mm_mask_storeu_epi8(y + c, mask, _mm512_cvtepi32_epi8(_mm512_add_epi32(q, l.output_zero)));
  }
}

// Pixels [first, first + count), count <= kGroup.
void group(const int8_t* x, int64_t first, int64_t count, const ops::LayerNormLevels& p, const LayerVectors& l,
           int8_t* y) {
  const int64_t C = p.channels;
  int64_t sum[kGroup] = {}, squares[kGroup] = {};
  for (int64_t i = 0; i < count; ++i) statistics(x + (first + i) * C, C, l.input_zero, sum[i], squares[i]);
  double m[kGroup];
  _mm512_storeu_pd(m, multipliers(sum, squares, p));
  const auto pixel = l.packed ? normalize_packed : normalize;
  for (int64_t i = 0; i < count; ++i)
    pixel(x + (first + i) * C, C, l, m[i], sum[i] + C * p.input_zero_point, y + (first + i) * C);
}
}  // namespace

void layer_norm(const int8_t* x, int64_t pixels, const ops::LayerNormLevels& p, int8_t* y) {
  const LayerVectors l(p);
  const int64_t groups = (pixels + kGroup - 1) / kGroup;
  parallel_for(groups, pixels * p.channels >= kMinParallelValues, [&](int64_t g) {
    const int64_t first = g * kGroup;
    group(x, first, pixels - first < kGroup ? pixels - first : kGroup, p, l, y);
  });
}

}  // namespace octet::cpu::vnni
