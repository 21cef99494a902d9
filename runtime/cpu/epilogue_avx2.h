// The requantizing epilogue of the AVX2 kernels (conv_avx2.cpp,
// depthwise_avx2.cpp): octet::requantize of 8 int32 accumulators in vector
// lanes, so the outputs are those of the reference path. Include it only from
// files compiled with AVX2 flags; everything here has internal linkage, so no
// AVX2 code can reach a caller built for an older baseline through the linker.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "runtime/cpu/conv_epilogue.h"

namespace octet::cpu::avx2 {
namespace {

constexpr int kLanes = 8;  // int32 channels per vector

// The epilogue operands of 8 channels, made once per group of lines. The
// 64-bit lanes of [0] hold the even channels, of [1] the odd ones: the
// dwords that _mm256_mul_epi32 multiplies. requantize is computed in one of
// two ways (narrow_is_exact says which):
// - narrow: q = ((acc + bias) << left) * multiplier + (skip << left) *
//   skip_multiplier + rounding, its high 32 bits (>> 32), then >> right in
//   32-bit lanes, where left = max(32 - shift, 0) and right = max(shift -
//   32, 0), so the total right shift is shift + left and the rounding is
//   2^(shift - 1 + left). Floor of floor is floor, so this is requantize's
//   value whenever the left shifts do not overflow.
// - wide: the sum with rounding 2^(shift - 1), then >> shift in 64-bit lanes
//   and the clamp there. AVX2 has no 64-bit arithmetic shift: a negative x
//   is shifted as ~(~x >>> shift).
// Either way the skip is read less its zero point and the output's zero
// point is added after the shift; the narrow form clamps to [lo - zero
// point, hi - zero point] before adding it, as the AVX-512 one does (a
// 32-bit q near 2^31 plus the zero point would wrap; narrow_is_exact's
// bounds keep |q| below 2^31 - 2^23, so this is the safe order, not a fix).
struct ChannelVectors {
  bool narrow = true;
  bool shifts_left = false;  // some channel's left is not 0 (most shifts are 32 or more)
  __m256i bias;                                                      // 8 x int32
  __m256i multiplier[2], rounding[2], skip_multiplier[2], shift[2];  // 64-bit lanes
  __m256i left, right;                                               // 8 x int32
  __m256i zero_point, skip_zero_point;                               // 8 x int32
  __m256i zero_point64;                                              // 64-bit lanes

  ChannelVectors() = default;
  ChannelVectors(const EpilogueTables& e, int64_t channel, bool narrow_exact) : narrow(narrow_exact) {
    bias = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e.bias + channel));
    zero_point = _mm256_set1_epi32(e.zero_point);
    skip_zero_point = _mm256_set1_epi32(e.skip_zero_point);
    zero_point64 = _mm256_set1_epi64x(e.zero_point);
    alignas(32) int64_t m[8] = {}, r[8] = {}, sm[8] = {}, sh[8] = {};
    alignas(32) int32_t l[8] = {}, rt[8] = {};
    for (int k = 0; k < 8 && e.multiplier; ++k) {  // none for the int32 output
      const int64_t c = channel + k, lane = (k % 2) * 4 + k / 2;
      const int64_t s = e.shift[c], pre = narrow && s < 32 ? 32 - s : 0;
      m[lane] = e.multiplier[c];
      r[lane] = int64_t{1} << (s - 1 + pre);
      if (e.skip) sm[lane] = e.skip_multiplier[c];
      sh[lane] = s;
      l[k] = static_cast<int32_t>(pre);
      shifts_left = shifts_left || pre != 0;
      rt[k] = static_cast<int32_t>(s + pre - 32);
    }
    for (int h = 0; h < 2; ++h) {
      multiplier[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(m + 4 * h));
      rounding[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(r + 4 * h));
      skip_multiplier[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(sm + 4 * h));
      shift[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(sh + 4 * h));
    }
    left = _mm256_load_si256(reinterpret_cast<const __m256i*>(l));
    right = _mm256_load_si256(reinterpret_cast<const __m256i*>(rt));
  }
};

// `lanes` (1 to 8) values of type T from `from`, the rest 0, not reading past them.
// All 8 in one vector load: a copy into a zeroed vector would go through the
// stack, whose 16-byte reload of an 8-byte store cannot be forwarded (a stall
// on every residual read).
template <typename T>
inline __m128i load_lanes(const T* from, int64_t lanes) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2, "int8 or int16 lanes");
  if (lanes == kLanes)
    return sizeof(T) == 1 ? _mm_loadl_epi64(reinterpret_cast<const __m128i*>(from))
                          : _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
  __m128i x = _mm_setzero_si128();
  std::memcpy(&x, from, static_cast<size_t>(lanes) * sizeof(T));
  return x;
}

// The 64-bit sums ((acc + bias) << left) * multiplier + rounding (+ (skip <<
// left) * skip_multiplier) of the even ([0]) and odd ([1]) channels, from
// `biased`, acc + bias.
inline void sums64(__m256i biased, const ChannelVectors& v, const __m256i* skip, __m256i (&x)[2]) {
  const __m256i a = v.shifts_left ? _mm256_sllv_epi32(biased, v.left) : biased;
  x[0] = _mm256_add_epi64(_mm256_mul_epi32(a, v.multiplier[0]), v.rounding[0]);
  x[1] = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), v.multiplier[1]), v.rounding[1]);
  if (skip) {
    const __m256i s = v.shifts_left ? _mm256_sllv_epi32(*skip, v.left) : *skip;
    x[0] = _mm256_add_epi64(x[0], _mm256_mul_epi32(s, v.skip_multiplier[0]));
    x[1] = _mm256_add_epi64(x[1], _mm256_mul_epi32(_mm256_srli_epi64(s, 32), v.skip_multiplier[1]));
  }
}

// The narrow form's value less the output's zero point, before the clamp.
inline __m256i narrow_value(const __m256i (&x)[2], const ChannelVectors& v) {
  return _mm256_srav_epi32(_mm256_blend_epi32(_mm256_srli_epi64(x[0], 32), x[1], 0xAA), v.right);
}

// octet::requantize of 8 accumulators plus their bias, clamped to [lo, hi]
// (ChannelVectors says how), as 8 int32; `skip`: the residual's 8 values
// less their zero point, or null.
inline __m256i requantize_biased(__m256i biased, const ChannelVectors& v, const __m256i* skip, int32_t lo, int32_t hi) {
  __m256i x[2];
  sums64(biased, v, skip, x);
  if (v.narrow) {
    const __m256i low = _mm256_sub_epi32(_mm256_set1_epi32(lo), v.zero_point);
    const __m256i high = _mm256_sub_epi32(_mm256_set1_epi32(hi), v.zero_point);
    return _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(narrow_value(x, v), low), high), v.zero_point);
  }
  const __m256i zero = _mm256_setzero_si256(), lo64 = _mm256_set1_epi64x(lo), hi64 = _mm256_set1_epi64x(hi);
  for (int h = 0; h < 2; ++h) {
    const __m256i negative = _mm256_cmpgt_epi64(zero, x[h]);
    x[h] = _mm256_xor_si256(_mm256_srlv_epi64(_mm256_xor_si256(x[h], negative), v.shift[h]), negative);
    x[h] = _mm256_add_epi64(x[h], v.zero_point64);
    x[h] = _mm256_blendv_epi8(x[h], hi64, _mm256_cmpgt_epi64(x[h], hi64));
    x[h] = _mm256_blendv_epi8(x[h], lo64, _mm256_cmpgt_epi64(lo64, x[h]));
  }
  return _mm256_blend_epi32(x[0], _mm256_slli_epi64(x[1], 32), 0xAA);
}

// The same of accumulators without their bias.
inline __m256i requantize_lanes(__m256i acc, const ChannelVectors& v, const __m256i* skip, int32_t lo, int32_t hi) {
  return requantize_biased(_mm256_add_epi32(acc, v.bias), v, skip, lo, hi);
}

// requantize's value of accumulators plus their bias, less the output's zero
// point: before the clamp in the narrow form, clamped to [lo, hi] in the
// wide one (int8_outputs clamps it).
inline __m256i scaled_biased(__m256i biased, const ChannelVectors& v, const __m256i* skip, int32_t lo, int32_t hi) {
  if (!v.narrow) return _mm256_sub_epi32(requantize_biased(biased, v, skip, lo, hi), v.zero_point);
  __m256i x[2];
  sums64(biased, v, skip, x);
  return narrow_value(x, v);
}

// An int8 output's zero point as int16 lanes and [lo, hi] as int8 lanes (int8_outputs).
struct Int8Range {
  __m256i zero_point, low, high;
  Int8Range(int32_t zero, int32_t lo, int32_t hi)
      : zero_point(_mm256_set1_epi16(static_cast<int16_t>(zero))),
        low(_mm256_set1_epi8(static_cast<int8_t>(lo))),
        high(_mm256_set1_epi8(static_cast<int8_t>(hi))) {}
};

// Two blocks' scaled_biased (16 adjacent channels; q1 = q0 for one block) as
// their int8 outputs, in channel order: saturated to int16, the zero point
// added with saturation, saturated to int8, clamped to [lo, hi] (no
// saturation moves a value across [lo, hi], which lies in int8); two packs
// and a permutation instead of a clamp, an add and two packs per block.
inline __m128i int8_outputs(__m256i q0, __m256i q1, const Int8Range& r) {
  const __m256i words = _mm256_adds_epi16(_mm256_packs_epi32(q0, q1), r.zero_point);
  const __m256i bytes = _mm256_min_epi8(_mm256_max_epi8(_mm256_packs_epi16(words, words), r.low), r.high);
  // 128-bit lane h: dwords channels 4h..4h+3 of q0, then of q1 (then again).
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5)));
}

// The first `bytes` (1 to 16) of int8_outputs at out.
inline void store_int8_outputs(__m128i v, int64_t bytes, int8_t* out) {
  if (bytes == 16) return _mm_storeu_si128(reinterpret_cast<__m128i*>(out), v);
  if (bytes == 8) return _mm_storel_epi64(reinterpret_cast<__m128i*>(out), v);
  alignas(16) int8_t all[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(all), v);
  std::memcpy(out, all, static_cast<size_t>(bytes));
}

// The residual's 8 values (int8, or int16 where `wide`) less its zero point.
inline __m256i skip_lanes(const int8_t* skip, bool wide, int64_t lanes, const ChannelVectors& v) {
  const __m256i s = wide ? _mm256_cvtepi16_epi32(load_lanes(reinterpret_cast<const int16_t*>(skip), lanes))
                         : _mm256_cvtepi8_epi32(load_lanes(skip, lanes));
  return _mm256_sub_epi32(s, v.skip_zero_point);
}

// A wide output's (int16, EpilogueTables::bits) 8 values of `lanes` channels, clamped to [lo, hi].
inline void store_int16(__m256i acc, const ChannelVectors& v, const int8_t* skip, bool wide_skip, int32_t lo,
                        int32_t hi, int64_t lanes, int16_t* out) {
  const __m256i s = skip ? skip_lanes(skip, wide_skip, lanes, v) : __m256i();
  const __m256i q = requantize_lanes(acc, v, skip ? &s : nullptr, lo, hi);
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  if (lanes == kLanes)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), words);
  else
    std::memcpy(out, &words, static_cast<size_t>(lanes) * sizeof(int16_t));
}

// octet::requantize of 8 accumulators of `lanes` (1 to 8) channels, clamped
// to [lo, 127] (ChannelVectors says how); the skip int16 where `wide_skip`.
inline void store_int8(__m256i acc, const ChannelVectors& v, const int8_t* skip, int32_t lo, int64_t lanes,
                       int8_t* out, bool wide_skip = false) {
  const __m256i s = skip ? skip_lanes(skip, wide_skip, lanes, v) : __m256i();
  const __m256i q = requantize_lanes(acc, v, skip ? &s : nullptr, lo, 127);
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  const __m128i bytes = _mm_packs_epi16(words, words);
  if (lanes == kLanes) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), bytes);
  } else {
    const int64_t all = _mm_cvtsi128_si64(bytes);
    std::memcpy(out, &all, static_cast<size_t>(lanes));
  }
}

inline __m256i lane_mask(int64_t lanes) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lanes)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

}  // namespace
}  // namespace octet::cpu::avx2
