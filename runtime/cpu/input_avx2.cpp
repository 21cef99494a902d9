// AVX2 rounding of the input (input_avx2.h): rint(x * scale) by vroundps
// (round half to even, as rintf in the default rounding mode), NaN to 0, then
// clamped to [-128, 127], exactly quantize_input's steps. This file is
// compiled with AVX2 flags and calls nothing shared with other files.
#include "runtime/cpu/input_avx2.h"

#include <immintrin.h>

#include <cstring>

namespace octet::cpu::avx2 {

namespace {
__m128i round8(const float* src, __m256 scale) {
  const __m256 lo = _mm256_set1_ps(-128.0f), hi = _mm256_set1_ps(127.0f);
  __m256 r = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(src), scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  r = _mm256_and_ps(r, _mm256_cmp_ps(r, r, _CMP_ORD_Q));  // NaN -> 0
  const __m256i q = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(r, lo), hi));
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  return _mm_packs_epi16(words, words);
}
}  // namespace

void quantize_run(const float* src, int64_t n, float scale, int8_t* dst) {
  const __m256 s = _mm256_set1_ps(scale);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + i), round8(src + i, s));
  if (i == n) return;
  float tail[8] = {};
  std::memcpy(tail, src + i, static_cast<size_t>(n - i) * sizeof(float));
  int8_t bytes[16];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes), round8(tail, s));
  std::memcpy(dst + i, bytes, static_cast<size_t>(n - i));
}

}  // namespace octet::cpu::avx2
