// AVX2 byte lookups (lookup_simd.h), 32 bytes per step: the index (byte +
// 128) split into nibbles; each sixteenth k of the table (its entries 16k to
// 16k + 15, in both 128-bit lanes) looked up by the low nibble with vpshufb,
// whose index's top bit zeroes the byte wherever the high nibble is not k;
// the sixteen results ORed. A row's last bytes (fewer than 32) one at a time.
//
// This file is compiled with AVX2 flags: everything in it is called only
// after the run-time CPU check.
#include <immintrin.h>

#include "runtime/cpu/lookup_simd.h"

namespace octet::cpu::avx2 {

namespace {
struct Sixteenths {
  __m256i part[16];
};

__m256i lookup(__m256i bytes, const Sixteenths& t) {
  const __m256i nibble = _mm256_set1_epi8(0x0F), top = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i index = _mm256_xor_si256(bytes, top);
  const __m256i low = _mm256_and_si256(index, nibble), high = _mm256_and_si256(_mm256_srli_epi16(index, 4), nibble);
  __m256i result = _mm256_setzero_si256();
  for (int k = 0; k < 16; ++k) {
    const __m256i other = _mm256_andnot_si256(_mm256_cmpeq_epi8(high, _mm256_set1_epi8(static_cast<char>(k))), top);
    result = _mm256_or_si256(result, _mm256_shuffle_epi8(t.part[k], _mm256_or_si256(low, other)));
  }
  return result;
}
}  // namespace

void lookup_rows(const int8_t* src, int64_t rows, int64_t row_bytes, const int8_t* table, int8_t* dst,
                 int64_t dst_stride) {
  Sixteenths t;
  for (int k = 0; k < 16; ++k)
    t.part[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k)));
  for (int64_t r = 0; r < rows; ++r, src += row_bytes, dst += dst_stride) {
    int64_t i = 0;
    for (; i + 32 <= row_bytes; i += 32)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                          lookup(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)), t));
    for (; i < row_bytes; ++i) dst[i] = table[src[i] + 128];
  }
}

}  // namespace octet::cpu::avx2
