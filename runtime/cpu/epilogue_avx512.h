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

// The epilogue operands of 16 channels, made once (epilogue_vnni.cpp); a kernel copies
// them into locals before storing (int8 stores may alias anything, so the
// compiler would reload them from memory after every row). requantize is
// computed in one of two ways
// (narrow_is_exact says which, as for the AVX2 epilogue):
// - narrow: the even and odd channels' ((acc + bias) << left) * multiplier
//   (+ (skip << left) * skip_multiplier) + rounding in 64-bit lanes, their
//   high 32 bits, then >> right in 32-bit lanes (left = max(32 - shift, 0),
//   right = shift + left - 32, rounding 2^(shift - 1 + left)): floor of
//   floor, requantize's value while the left shifts do not overflow;
// - wide: channels 0-7 and 8-15 in 64-bit lanes, >> shift there, then
//   narrowed to int32 with saturation.
// Either way the value before the output's zero point is clamped to [lo -
// zero point, hi - zero point], then the zero point is added: the same as
// clamping after, and no int32 sum can overflow.
struct ChannelVectors {
  bool narrow = false;
  bool shifts_left = false;  // narrow: some channel's left is not 0 (most shifts are 32 or more)
  __m512i bias, multiplier[2], rounding[2], shift[2], skip_multiplier[2];  // [2]: 64-bit lanes (see above)
  __m512i left, right;                                                     // narrow: 32-bit lanes
  __m512i zero_point, skip_zero_point, low, high;                          // 32-bit lanes

  ChannelVectors() = default;
  ChannelVectors(const EpilogueTables& e, int64_t channel, bool narrow_exact) {
    bias = _mm512_loadu_si512(e.bias + channel);
    if (!e.multiplier) return;  // int32 output: the bias alone
    narrow = narrow_exact;
    zero_point = _mm512_set1_epi32(e.zero_point);
    skip_zero_point = _mm512_set1_epi32(e.skip_zero_point);
    low = _mm512_set1_epi32(e.lo - e.zero_point);
    high = _mm512_set1_epi32(e.hi - e.zero_point);
    alignas(64) int64_t m[16] = {}, r[16] = {}, sm[16] = {}, sh[16] = {};
    alignas(64) int32_t l[16] = {}, rt[16] = {};
    for (int k = 0; k < 16; ++k) {
      const int64_t c = channel + k, lane = narrow ? (k % 2) * 8 + k / 2 : k;  // narrow: even channels, then odd
      const int64_t s = e.shift[c], pre = narrow && s < 32 ? 32 - s : 0;
      m[lane] = e.multiplier[c];
      r[lane] = int64_t{1} << (s - 1 + pre);
      sh[lane] = s;
      if (e.skip_multiplier) sm[lane] = e.skip_multiplier[c];
      l[k] = static_cast<int32_t>(pre);
      shifts_left = shifts_left || pre != 0;
      rt[k] = static_cast<int32_t>(s + pre - 32);
    }
    for (int h = 0; h < 2; ++h) {
      multiplier[h] = _mm512_load_si512(m + 8 * h);
      rounding[h] = _mm512_load_si512(r + 8 * h);
      shift[h] = _mm512_load_si512(sh + 8 * h);
      skip_multiplier[h] = _mm512_load_si512(sm + 8 * h);
    }
    left = _mm512_load_si512(l);
    right = _mm512_load_si512(rt);
  }
};

// EpilogueTables::vectors as the kernels read them.
inline const ChannelVectors* channel_vectors(const EpilogueTables& e) {
  return static_cast<const ChannelVectors*>(e.vectors);
}

// The residual's 16 values of `mask`'s lanes as int32: int8, or int16 where
// `wide` (EpilogueTables::skip_bits).
inline __m512i skip_lanes(const int8_t* skip, bool wide, __mmask16 mask) {
  if (!wide) return _mm512_cvtepi8_epi32(load_bytes(mask, skip));
  const auto* words = reinterpret_cast<const int16_t*>(skip);
  return _mm512_cvtepi16_epi32(mask == 0xFFFF ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(words))
                                              : _mm256_maskz_loadu_epi16(mask, words));
}

// octet::requantize of 16 accumulators plus their bias (ChannelVectors says
// how) less the output's zero point, before the clamp (the wide form
// saturated to int32); `skip`: the residual's values (skip_lanes), or null.
inline __m512i scaled_biased(__m512i biased, const ChannelVectors& v, const __m512i* skip) {
  __m512i q;
  if (v.narrow) {
    const __m512i a = v.shifts_left ? _mm512_sllv_epi32(biased, v.left) : biased;
    __m512i even = _mm512_add_epi64(_mm512_mul_epi32(a, v.multiplier[0]), v.rounding[0]);
    __m512i odd = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), v.multiplier[1]), v.rounding[1]);
    if (skip) {
      const __m512i centered = _mm512_sub_epi32(*skip, v.skip_zero_point);
      const __m512i sk = v.shifts_left ? _mm512_sllv_epi32(centered, v.left) : centered;
      even = _mm512_add_epi64(even, _mm512_mul_epi32(sk, v.skip_multiplier[0]));
      odd = _mm512_add_epi64(odd, _mm512_mul_epi32(_mm512_srli_epi64(sk, 32), v.skip_multiplier[1]));
    }
    q = _mm512_srav_epi32(_mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd), v.right);
  } else {
    __m512i x[2] = {_mm512_cvtepi32_epi64(_mm512_castsi512_si256(biased)),
                    _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(biased, 1))};
    const __m512i sk = skip ? _mm512_sub_epi32(*skip, v.skip_zero_point) : _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      x[h] = _mm512_add_epi64(_mm512_mul_epi32(x[h], v.multiplier[h]), v.rounding[h]);
      if (skip) {
        const __m256i half = h == 0 ? _mm512_castsi512_si256(sk) : _mm512_extracti64x4_epi64(sk, 1);
        x[h] = _mm512_add_epi64(x[h], _mm512_mul_epi32(_mm512_cvtepi32_epi64(half), v.skip_multiplier[h]));
      }
      x[h] = _mm512_srav_epi64(x[h], v.shift[h]);
    }
    q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtsepi64_epi32(x[0])), _mm512_cvtsepi64_epi32(x[1]), 1);
  }
  return q;
}

// octet::requantize of 16 accumulators, clamped to [lo, hi], as int32.
inline __m512i requantize_lanes(__m512i acc, const ChannelVectors& v, const __m512i* skip) {
  const __m512i q = scaled_biased(_mm512_add_epi32(acc, v.bias), v, skip);
  return _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(q, v.low), v.high), v.zero_point);
}

// An int8 output's zero point as int16 lanes and [lo, hi] as int8 lanes (int8_outputs).
struct Int8Range {
  __m512i zero_point, low, high;
  Int8Range(int32_t zero, int32_t lo, int32_t hi)
      : zero_point(_mm512_set1_epi16(static_cast<int16_t>(zero))),
        low(_mm512_set1_epi8(static_cast<int8_t>(lo))),
        high(_mm512_set1_epi8(static_cast<int8_t>(hi))) {}
  explicit Int8Range(const EpilogueTables& e) : Int8Range(e.zero_point, e.lo, e.hi) {}
};

// J (1 to 4) vectors of scaled_biased of adjacent blocks of 16 channels as
// their int8 outputs, in channel order in the first 16 J bytes: saturated to
// int16, the zero point added with saturation, saturated to int8, clamped to
// [lo, hi]. requantize_lanes' values: no saturation moves a value across
// [lo, hi], which lies in int8. Three packs and a permutation for four
// vectors, instead of a clamp, an add and a narrowing move (2 uops) each.
template <int J>
inline __m512i int8_outputs(const __m512i (&q)[J], const Int8Range& r) {
  static_assert(J >= 1 && J <= 4, "one to four blocks");
  const __m512i words01 = _mm512_adds_epi16(_mm512_packs_epi32(q[0], q[J > 1 ? 1 : 0]), r.zero_point);
  const __m512i words23 = J > 2 ? _mm512_adds_epi16(_mm512_packs_epi32(q[J > 2 ? 2 : 0], q[J > 3 ? 3 : 0]), r.zero_point)
                                : words01;
  const __m512i bytes = _mm512_min_epi8(_mm512_max_epi8(_mm512_packs_epi16(words01, words23), r.low), r.high);
  // 128-bit lane i holds channels 4i..4i+3 of q[0..3] in its dwords 0..3:
  // dword 4i + j goes to 4j + i.
  const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  return _mm512_permutexvar_epi32(order, bytes);
}

// A wide output's zero point and [lo, hi] as int16 lanes (int16_outputs).
struct Int16Range {
  __m512i zero_point, low, high;
  explicit Int16Range(const EpilogueTables& e)
      : zero_point(_mm512_set1_epi16(static_cast<int16_t>(e.zero_point))),
        low(_mm512_set1_epi16(static_cast<int16_t>(e.lo))),
        high(_mm512_set1_epi16(static_cast<int16_t>(e.hi))) {}
};

// Two blocks' scaled_biased (q1 = q0 for one) as a wide output's int16
// values, in channel order: saturated to int16, the zero point added with
// saturation, clamped to [lo, hi] (which lies in int16: requantize_lanes'
// values); one pack and a permutation instead of a clamp, an add and a
// narrowing move (2 uops) per block.
inline __m512i int16_outputs(__m512i q0, __m512i q1, const Int16Range& r) {
  const __m512i words = _mm512_adds_epi16(_mm512_packs_epi32(q0, q1), r.zero_point);
  // 128-bit lane i holds channels 4i..4i+3 of q0, then of q1, in its qwords.
  const __m512i order = _mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0);
  return _mm512_permutexvar_epi64(order, _mm512_min_epi16(_mm512_max_epi16(words, r.low), r.high));
}

// The first `values` (at least 1; 32 and more: all) of int16_outputs at out.
inline void store_int16_outputs(__m512i v, int64_t values, int16_t* out) {
  if (values >= 32) return _mm512_storeu_si512(out, v);
  if (values == 16) return _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_castsi512_si256(v));
  _mm512_mask_storeu_epi16(out, (uint32_t{1} << values) - 1, v);
}

// int8_outputs<4> of four pixels' same 16 channels (pixel i's bytes in
// 128-bit lane i) at out, out + step, out + 2 step, out + 3 step; `mask`:
// the channels stored.
inline void store_int8_pixels(__m512i v, __mmask16 mask, int8_t* out, int64_t step) {
  store_bytes(mask, out, _mm512_castsi512_si128(v));
  store_bytes(mask, out + step, _mm512_extracti32x4_epi32(v, 1));
  store_bytes(mask, out + 2 * step, _mm512_extracti32x4_epi32(v, 2));
  store_bytes(mask, out + 3 * step, _mm512_extracti32x4_epi32(v, 3));
}

// The first `bytes` (at most 16 J) of int8_outputs at `out`: whole stores
// where they are whole (a masked byte store costs several times more).
template <int J>
inline void store_int8_outputs(__m512i v, int64_t bytes, int8_t* out) {
  if (bytes < 16 * J) return _mm512_mask_storeu_epi8(out, (uint64_t{1} << bytes) - 1, v);
  if constexpr (J == 4) {
    _mm512_storeu_si512(out, v);
  } else if constexpr (J == 1) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_castsi512_si128(v));
  } else {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_castsi512_si256(v));
    if constexpr (J == 3) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 32), _mm512_extracti32x4_epi32(v, 2));
  }
}

// The 16 requantized values as int8; the skip int16 where `wide_skip`.
inline void store_int8(__m512i acc, const ChannelVectors& v, const int8_t* skip, __mmask16 mask, int8_t* out,
                       bool wide_skip = false) {
  const __m512i s = skip ? skip_lanes(skip, wide_skip, mask) : _mm512_setzero_si512();
  store_bytes(mask, out, _mm512_cvtepi32_epi8(requantize_lanes(acc, v, skip ? &s : nullptr)));
}

}  // namespace
}  // namespace octet::cpu::vnni
