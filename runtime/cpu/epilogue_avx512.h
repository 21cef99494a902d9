// The requantizing epilogue of the AVX-512 kernels (conv_vnni.cpp,
// depthwise_vnni.cpp): octet::requantize of 16 int32 accumulators in 64-bit
// vector lanes, so the outputs are those of the reference path. Include it
// only from files compiled with AVX-512 flags; everything here has internal
// linkage, so no AVX-512 code can reach a baseline caller through the linker.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "runtime/cpu/conv_epilogue.h"

namespace octet::cpu::vnni {
namespace {

inline __mmask16 lane_mask(int64_t lanes) {
  return lanes >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << lanes) - 1);
}

// The 16 bytes at p, or those of `mask`'s lanes (the others 0), and the
// same for a store. Masked byte loads and stores cost several times a whole
// one on the Zen 5 build machine (a fused residual's masked read took two
// thirds of ResNet-50's layer1 conv3 at batch 32), so whole blocks take plain ones.
inline __m128i load_bytes(__mmask16 mask, const int8_t* p) {
  return mask == 0xFFFF ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)) : _mm_maskz_loadu_epi8(mask, p);
}
inline void store_bytes(__mmask16 mask, int8_t* p, __m128i v) {
  if (mask == 0xFFFF)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
  else
    _mm_mask_storeu_epi8(p, mask, v);
}

// The epilogue operands of 16 channels in registers, loaded once per
// register block (int8 stores may alias anything, so the compiler would
// reload them after every row).
struct ChannelVectors {
  __m512i bias, multiplier[2], rounding[2], shift[2], skip_multiplier[2];
  __m512i zero_point, skip_zero_point;  // 64-bit lanes

  ChannelVectors(const EpilogueTables& e, int64_t channel) {
    bias = _mm512_loadu_si512(e.bias + channel);
    if (!e.multiplier) return;  // int32 output: the bias alone
    zero_point = _mm512_set1_epi64(e.zero_point);
    skip_zero_point = _mm512_set1_epi64(e.skip_zero_point);
    for (int h = 0; h < 2; ++h) {
      multiplier[h] = _mm512_loadu_si512(e.multiplier + channel + 8 * h);
      rounding[h] = _mm512_loadu_si512(e.rounding + channel + 8 * h);
      shift[h] = _mm512_loadu_si512(e.shift + channel + 8 * h);
      if (e.skip) skip_multiplier[h] = _mm512_loadu_si512(e.skip_multiplier + channel + 8 * h);
    }
  }
};

// The residual's 16 values of `mask`'s lanes as int32: int8, or int16 where
// `wide` (EpilogueTables::skip_bits).
inline __m512i skip_lanes(const int8_t* skip, bool wide, __mmask16 mask) {
  if (!wide) return _mm512_cvtepi8_epi32(load_bytes(mask, skip));
  const auto* words = reinterpret_cast<const int16_t*>(skip);
  return _mm512_cvtepi16_epi32(mask == 0xFFFF ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(words))
                                              : _mm256_maskz_loadu_epi16(mask, words));
}

// octet::requantize of 16 accumulators: ((acc * multiplier + (skip - skip
// zero point) * skip_multiplier + rounding) >> shift) + zero point in 64-bit
// lanes, narrowed to int32 with saturation and raised to at least `lo`;
// `skip`: the residual's values (skip_lanes), or null.
inline __m512i requantize_lanes(__m512i acc, const ChannelVectors& v, const __m512i* skip, __m512i lo) {
  acc = _mm512_add_epi32(acc, v.bias);
  __m512i x[2] = {_mm512_cvtepi32_epi64(_mm512_castsi512_si256(acc)),
                  _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(acc, 1))};
  for (int h = 0; h < 2; ++h) {
    x[h] = _mm512_add_epi64(_mm512_mul_epi32(x[h], v.multiplier[h]), v.rounding[h]);
    if (skip) {
      const __m256i half = h == 0 ? _mm512_castsi512_si256(*skip) : _mm512_extracti64x4_epi64(*skip, 1);
      const __m512i sk = _mm512_sub_epi64(_mm512_cvtepi32_epi64(half), v.skip_zero_point);
      x[h] = _mm512_add_epi64(x[h], _mm512_mul_epi32(sk, v.skip_multiplier[h]));
    }
    x[h] = _mm512_add_epi64(_mm512_srav_epi64(x[h], v.shift[h]), v.zero_point);
  }
  const __m512i q =
      _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtsepi64_epi32(x[0])), _mm512_cvtsepi64_epi32(x[1]), 1);
  return _mm512_max_epi32(q, lo);
}

// The 16 requantized values clamped to [lo, 127] (the saturating narrowing
// to int8 clamps above); the skip int16 where `wide_skip`.
inline void store_int8(__m512i acc, const ChannelVectors& v, const int8_t* skip, __m512i lo, __mmask16 mask,
                       int8_t* out, bool wide_skip = false) {
  const __m512i s = skip ? skip_lanes(skip, wide_skip, mask) : _mm512_setzero_si512();
  store_bytes(mask, out, _mm512_cvtsepi32_epi8(requantize_lanes(acc, v, skip ? &s : nullptr, lo)));
}

// A wide output's (int16, EpilogueTables::bits) 16 values, clamped to [lo, hi].
inline void store_int16(__m512i acc, const ChannelVectors& v, const int8_t* skip, bool wide_skip, __m512i lo,
                        __m512i hi, __mmask16 mask, int16_t* out) {
  const __m512i s = skip ? skip_lanes(skip, wide_skip, mask) : _mm512_setzero_si512();
  const __m256i words = _mm512_cvtsepi32_epi16(_mm512_min_epi32(requantize_lanes(acc, v, skip ? &s : nullptr, lo), hi));
  if (mask == 0xFFFF)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), words);
  else
    _mm256_mask_storeu_epi16(out, mask, words);
}

}  // namespace
}  // namespace octet::cpu::vnni
