// AVX-512 lookups of a table per channel (PRelu's): 16 channels of a pixel at
// a time, each widened to an int32 index into its own channel's table and
// gathered (the tables differ by lane, so the VBMI byte lookup of an
// activation's one table does not serve).
//
// This file is compiled with AVX-512 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include "runtime/cpu/prelu_simd.h"

#include <immintrin.h>

namespace octet::cpu::vnni {

void channel_lookup(const int8_t* x, int64_t pixels, int64_t channels, const int8_t* tables, int8_t* y) {
  // Lane j of a block of 16 channels from c: (c + j) * 256, plus 128 for the level's offset.
  const __m512i first = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                                                              12, 13, 14, 15),
                                                            _mm512_set1_epi32(256)),
                                         _mm512_set1_epi32(128));
  const __m512i step = _mm512_set1_epi32(16 * 256);
  const int64_t whole = channels / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (channels - whole)) - 1);
  for (int64_t p = 0; p < pixels; ++p) {
    const int8_t* in = x + p * channels;
    int8_t* out = y + p * channels;
    __m512i base = first;
    for (int64_t c = 0; c < whole; c += 16, base = _mm512_add_epi32(base, step)) {
      const __m512i index = _mm512_add_epi32(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + c))), base);
      const __m512i levels = _mm512_i32gather_epi32(index, tables, 1);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), _mm512_cvtepi32_epi8(levels));
    }
    if (tail == 0) continue;
    const __m512i index = _mm512_add_epi32(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(tail, in + whole)), base);
    const __m512i levels = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), tail, index, tables, 1);
    _mm512_mask_cvtepi32_storeu_epi8(out + whole, tail, levels);
  }
}

}  // namespace octet::cpu::vnni
