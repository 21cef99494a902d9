// AVX2 blends of bilinear upsampling (bilinear_simd.h). With a shift: rows
// 16 values at a time in int16; pixels 16 channels at a time, each channel's
// two blended values and their weights multiplied and summed by one vpmaddwd,
// rounded and shifted as requantize_by_shift does, saturated to int8 by the
// packs (its clamp). With a division: rows and pixels 8 values at a time in
// int32, each quotient guessed in float and corrected by its remainder
// (divide8). A row's or pixel's last values go through a zero-padded copy.
//
// This file is compiled with AVX2 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include <immintrin.h>

#include <cstring>

#include "runtime/cpu/bilinear_simd.h"

namespace octet::cpu::avx2 {

namespace {
constexpr int64_t kLanes = 16;

__m256i blend16(const int8_t* upper, const int8_t* lower, __m256i upper_weight, __m256i lower_weight,
                __m256i zero_point) {
  const __m256i u = _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(upper))),
                                     zero_point);
  const __m256i l = _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(lower))),
                                     zero_point);
  return _mm256_add_epi16(_mm256_mullo_epi16(u, upper_weight), _mm256_mullo_epi16(l, lower_weight));
}

// A row blend, `Lanes` values (one vector of Out) at a time by `blend(upper, lower)`; the last ones through
// zero-padded copies.
template <typename Out, int64_t Lanes, typename Blend>
void blend_row(const int8_t* upper, const int8_t* lower, int64_t count, Out* v, Blend blend) {
  int64_t k = 0;
  for (; k + Lanes <= count; k += Lanes)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(v + k), blend(upper + k, lower + k));
  if (k == count) return;
  int8_t u[Lanes] = {}, l[Lanes] = {};
  Out out[Lanes];
  std::memcpy(u, upper + k, static_cast<size_t>(count - k));
  std::memcpy(l, lower + k, static_cast<size_t>(count - k));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), blend(u, l));
  std::memcpy(v + k, out, sizeof(Out) * static_cast<size_t>(count - k));
}

void blend_rows(const int8_t* upper, const int8_t* lower, int64_t count, int32_t upper_weight, int32_t lower_weight,
                int32_t zero_point, int16_t* v) {
  const __m256i wu = _mm256_set1_epi16(static_cast<int16_t>(upper_weight));
  const __m256i wl = _mm256_set1_epi16(static_cast<int16_t>(lower_weight));
  const __m256i zero = _mm256_set1_epi16(static_cast<int16_t>(zero_point));
  blend_row<int16_t, kLanes>(upper, lower, count, v,
                             [&](const int8_t* u, const int8_t* l) { return blend16(u, l, wu, wl, zero); });
}

// 16 channels: requantize_by_shift(w_left * left + w_right * right) as int8.
__m128i pixel16(const int16_t* left, const int16_t* right, __m256i weights, __m256i half, __m128i shift,
                __m256i zero_point) {
  const __m256i l = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(left));
  const __m256i r = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(right));
  // Per 128-bit lane: channels 0-3 | 8-11 from unpacklo, 4-7 | 12-15 from unpackhi; packs puts them back in order.
  const __m256i low = _mm256_madd_epi16(_mm256_unpacklo_epi16(l, r), weights);
  const __m256i high = _mm256_madd_epi16(_mm256_unpackhi_epi16(l, r), weights);
  const __m256i q_low = _mm256_add_epi32(_mm256_sra_epi32(_mm256_add_epi32(low, half), shift), zero_point);
  const __m256i q_high = _mm256_add_epi32(_mm256_sra_epi32(_mm256_add_epi32(high, half), shift), zero_point);
  const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(q_low, q_high), _mm256_setzero_si256());
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(bytes, 0x08));  // qwords 0 and 2: channels 0-7, 8-15
}

void blend_pixels(const int16_t* v, const ColumnTaps* columns, int64_t count, int64_t channels, int32_t shift,
                  int32_t zero_point, int8_t* y) {
  const __m256i half = _mm256_set1_epi32(1 << (shift - 1)), zero = _mm256_set1_epi32(zero_point);
  const __m128i by = _mm_cvtsi32_si128(shift);
  const int64_t whole = channels / kLanes * kLanes;
  for (int64_t x = 0; x < count; ++x, y += channels) {
    const ColumnTaps& t = columns[x];
    const __m256i weights = _mm256_set1_epi32(static_cast<int32_t>((static_cast<uint32_t>(t.right_weight) << 16) |
                                                                   static_cast<uint16_t>(t.left_weight)));
    const int16_t* left = v + t.left;
    const int16_t* right = v + t.right;
    for (int64_t c = 0; c < whole; c += kLanes)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + c), pixel16(left + c, right + c, weights, half, by, zero));
    if (whole == channels) continue;
    int16_t l[kLanes] = {}, r[kLanes] = {};
    int8_t out[kLanes];
    std::memcpy(l, left + whole, sizeof(int16_t) * static_cast<size_t>(channels - whole));
    std::memcpy(r, right + whole, sizeof(int16_t) * static_cast<size_t>(channels - whole));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), pixel16(l, r, weights, half, by, zero));
    std::memcpy(y + whole, out, static_cast<size_t>(channels - whole));
  }
}
constexpr int64_t kWideLanes = 8;

__m256i wide_blend8(const int8_t* upper, const int8_t* lower, __m256i upper_weight, __m256i lower_weight,
                    __m256i zero_point) {
  const __m256i u = _mm256_sub_epi32(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(upper))),
                                     zero_point);
  const __m256i l = _mm256_sub_epi32(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(lower))),
                                     zero_point);
  return _mm256_add_epi32(_mm256_mullo_epi32(u, upper_weight), _mm256_mullo_epi32(l, lower_weight));
}

void wide_rows(const int8_t* upper, const int8_t* lower, int64_t count, int32_t upper_weight, int32_t lower_weight,
               int32_t zero_point, int32_t* v) {
  const __m256i wu = _mm256_set1_epi32(upper_weight), wl = _mm256_set1_epi32(lower_weight);
  const __m256i zero = _mm256_set1_epi32(zero_point);
  blend_row<int32_t, kWideLanes>(upper, lower, count, v,
                                 [&](const int8_t* u, const int8_t* l) { return wide_blend8(u, l, wu, wl, zero); });
}

// The divisor of 8 weighted sums, and the float reciprocal that guesses their quotients.
struct Divisor {
  __m256i total, twice_total_less_one, minus_total;
  __m256 reciprocal;
  explicit Divisor(int32_t t)
      : total(_mm256_set1_epi32(t)), twice_total_less_one(_mm256_set1_epi32(t - 1)),
        minus_total(_mm256_set1_epi32(-t)), reciprocal(_mm256_set1_ps(1.0f / float(t))) {}
};

// 8 sums: requantize_by_division's floor(acc / total + 1/2) + zero_point, clamped to int8 by the caller's packs.
// The float quotient rounded to nearest is within 1 of it (|acc| <= 255 total: its relative error, about 3 x
// 2^-24, is below 1e-4 of a level); the remainder acc - q total, twice, against +-total says which way.
__m256i divide8(__m256i acc, const Divisor& d, __m256i zero_point) {
  __m256i q = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(acc), d.reciprocal));
  const __m256i r = _mm256_sub_epi32(acc, _mm256_mullo_epi32(q, d.total));
  const __m256i twice = _mm256_add_epi32(r, r);
  q = _mm256_sub_epi32(q, _mm256_cmpgt_epi32(twice, d.twice_total_less_one));  // 2r >= total: one more
  q = _mm256_add_epi32(q, _mm256_cmpgt_epi32(d.minus_total, twice));           // 2r < -total: one less
  return _mm256_add_epi32(q, zero_point);
}

// 8 channels: requantize_by_division(w_left * left + w_right * right, total) as int8, in the low 8 bytes.
__m128i divided_pixel8(const int32_t* left, const int32_t* right, __m256i left_weight, __m256i right_weight,
                       const Divisor& d, __m256i zero_point) {
  const __m256i acc =
      _mm256_add_epi32(_mm256_mullo_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(left)), left_weight),
                       _mm256_mullo_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(right)), right_weight));
  const __m256i q = divide8(acc, d, zero_point);
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  return _mm_packs_epi16(words, words);
}

void divided_pixels(const int32_t* v, const ColumnTaps* columns, int64_t count, int64_t channels, int32_t total,
                    int32_t zero_point, int8_t* y) {
  const Divisor d(total);
  const __m256i zero = _mm256_set1_epi32(zero_point);
  const int64_t whole = channels / kWideLanes * kWideLanes;
  for (int64_t x = 0; x < count; ++x, y += channels) {
    const ColumnTaps& t = columns[x];
    const __m256i wl = _mm256_set1_epi32(t.left_weight), wr = _mm256_set1_epi32(t.right_weight);
    const int32_t* left = v + t.left;
    const int32_t* right = v + t.right;
    for (int64_t c = 0; c < whole; c += kWideLanes)
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + c), divided_pixel8(left + c, right + c, wl, wr, d, zero));
    if (whole == channels) continue;
    int32_t l[kWideLanes] = {}, r[kWideLanes] = {};
    int8_t out[16];
    std::memcpy(l, left + whole, sizeof(int32_t) * static_cast<size_t>(channels - whole));
    std::memcpy(r, right + whole, sizeof(int32_t) * static_cast<size_t>(channels - whole));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), divided_pixel8(l, r, wl, wr, d, zero));
    std::memcpy(y + whole, out, static_cast<size_t>(channels - whole));
  }
}
}  // namespace

const BilinearBlends bilinear_blends = {blend_rows, blend_pixels};
const BilinearDivisions bilinear_divisions = {wide_rows, divided_pixels};

}  // namespace octet::cpu::avx2
