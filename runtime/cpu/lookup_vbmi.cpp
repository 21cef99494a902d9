// AVX-512 VBMI byte lookups (lookup_simd.h). This file is compiled with
// AVX-512 VBMI flags: everything in it is called only after the run-time CPU
// check.
#include "runtime/cpu/lookup_simd.h"

#include <immintrin.h>

namespace octet::cpu {

namespace vbmi {

void lookup_rows(const int8_t* src, int64_t rows, int64_t row_bytes, const int8_t* table, int8_t* dst,
                 int64_t dst_stride) {
  // Entries 0-127 in (t0, t1), 128-255 in (t2, t3); the index is the byte + 128 (its top bit flipped).
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  auto lookup = [&](__m512i bytes) {
    const __m512i index = _mm512_xor_si512(bytes, flip);
    const __m512i low = _mm512_permutex2var_epi8(t0, index, t1), high = _mm512_permutex2var_epi8(t2, index, t3);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low, high);
  };
  for (int64_t r = 0; r < rows; ++r, src += row_bytes, dst += dst_stride) {
    int64_t i = 0;
    for (; i + 64 <= row_bytes; i += 64) _mm512_storeu_si512(dst + i, lookup(_mm512_loadu_si512(src + i)));
    if (i < row_bytes) {
      const __mmask64 tail = _bzhi_u64(~uint64_t{0}, static_cast<unsigned>(row_bytes - i));
      _mm512_mask_storeu_epi8(dst + i, tail, lookup(_mm512_maskz_loadu_epi8(tail, src + i)));
    }
  }
}

}  // namespace vbmi
}  // namespace octet::cpu
