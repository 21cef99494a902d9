// AVX-512 GroupNorm, in three steps. Each sample's statistics per channel,
// 16 channels a vector, in runs of pixels shared among the threads (int32
// sums and sums of squares: a run is at most 2^15 pixels, whose 255^2 squares
// fit); each group's offset and multiplier from their sums by
// ops::layer_norm_pixel, the oracle's own function, and each channel's gain m
// g_c (the same product as group_norm_gain's); then 64 values of a pixel at a
// time: d = count x - offset in double lanes (exact: one fma of integers
// below 2^53), fma(d, gain, shift) converted with the default rounding (half
// to even, as rint), and the int32 levels packed to int8 around the zero
// point with saturation and the ReLU's floor, as LayerNorm's AVX-512 form does
// (layer_norm_vnni.cpp; where a level may leave int32, clamped in double
// first), so the bits are the oracle's.
//
// This file is compiled with AVX-512 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include "runtime/cpu/group_norm_simd.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"  // GCC bug 105593, as in conv_vnni.cpp
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/cpu/epilogue_avx512.h"  // lane_mask, int8_outputs
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu::vnni {

namespace {
// Values a thread takes at least: waking the other costs about what fewer do.
constexpr int64_t kMinParallelValues = int64_t{1} << 16;
constexpr int64_t kMostRunPixels = int64_t{1} << 15;  // 2^15 x 255^2 < 2^31

// A sample's pixels in runs of at least kMinParallelValues values (at most kMostRunPixels pixels).
int64_t run_pixels(int64_t pixels, int64_t channels) {
  return std::clamp<int64_t>(kMinParallelValues / channels, 1, std::min(pixels, kMostRunPixels));
}

// The int32 sums and sums of squares of each channel of `pixels` pixels, less the zero point.
void run_statistics(const int8_t* x, int64_t pixels, int64_t C, int32_t zero_point, int32_t* sums, int32_t* squares) {
  const __m512i zero = _mm512_set1_epi32(zero_point);
  std::fill(sums, sums + C, 0);
  std::fill(squares, squares + C, 0);
  for (int64_t p = 0; p < pixels; ++p, x += C)
    for (int64_t c = 0; c < C; c += 16) {
      const __mmask16 mask = lane_mask(C - c);
      const __m512i v = _mm512_maskz_sub_epi32(mask, _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, x + c)), zero);
      _mm512_mask_storeu_epi32(sums + c, mask, _mm512_add_epi32(_mm512_maskz_loadu_epi32(mask, sums + c), v));
      _mm512_mask_storeu_epi32(squares + c, mask,
                               _mm512_add_epi32(_mm512_maskz_loadu_epi32(mask, squares + c), _mm512_mullo_epi32(v, v)));
    }
}

// Each channel's offset (its group's layer_norm_pixel's) and gain m g_c, for every sample.
struct ChannelTerms {
  std::vector<double> offset, gain;  // [batch][C]
};

ChannelTerms channel_terms(const int8_t* x, const GroupNormShape& s, const ops::LayerNormLevels& p,
                           const double* scales) {
  const int64_t batch = s.batch, pixels = s.pixels, C = s.channels, groups = s.groups;
  const int64_t run = run_pixels(pixels, C), runs = (pixels + run - 1) / run, width = C / groups;
  std::vector<int32_t> sums(static_cast<size_t>(batch * runs * C)), squares(sums.size());
  parallel_for(batch * runs, batch * pixels * C >= 2 * kMinParallelValues, [&](int64_t i) {
    const int64_t first = i % runs * run;
    run_statistics(x + (i / runs * pixels + first) * C, std::min(run, pixels - first), C, p.input_zero_point,
                   &sums[static_cast<size_t>(i * C)], &squares[static_cast<size_t>(i * C)]);
  });
  ChannelTerms t{std::vector<double>(static_cast<size_t>(batch * C)),
                 std::vector<double>(static_cast<size_t>(batch * C))};
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t sum = 0, square_sum = 0;
      for (int64_t r = 0; r < runs; ++r)
        for (int64_t c = g * width; c < (g + 1) * width; ++c) {
          sum += sums[static_cast<size_t>((b * runs + r) * C + c)];
          square_sum += squares[static_cast<size_t>((b * runs + r) * C + c)];
        }
      const ops::LayerNormPixel group = ops::layer_norm_pixel(sum, square_sum, p);
      std::fill_n(t.offset.begin() + b * C + g * width, width, double(group.offset));
      for (int64_t c = g * width; c < (g + 1) * width; ++c) t.gain[size_t(b * C + c)] = group.m * scales[c];
    }
  return t;
}

// Whether every level fits int32: |d m g_c + b_c s_out| <= s_out sqrt(count) |g_c| + |b_c s_out| < 2^30
// (|d m| <= s_out sqrt(count): layer_norm_vnni.cpp).
bool levels_fit_int32(const ops::LayerNormLevels& p, const GroupNormAffine& a, int64_t C) {
  double largest = 0;
  for (int64_t c = 0; c < C; ++c)
    largest = std::max(largest, p.output_scale * std::sqrt(double(p.channels)) * std::abs(a.scales[c]) +
                                    std::abs(a.shifts[c]));
  return largest < double(1 << 30);
}

// A layer's operands as vectors (as LayerVectors in layer_norm_vnni.cpp).
struct GroupVectors {
  __m512d count, low, high;  // a group's count of values, and [lowest, 127] less the output zero point
  __m512i output_zero;       // 16 int32 lanes
  Int8Range range;           // for int8_outputs: the output zero point, [lowest, 127]
  bool packed;               // levels_fit_int32
  GroupVectors(const ops::LayerNormLevels& p, const GroupNormAffine& a, int64_t C)
      : count(_mm512_set1_pd(double(p.channels))),
        low(_mm512_set1_pd(a.lowest - p.output_zero_point)),
        high(_mm512_set1_pd(127.0 - p.output_zero_point)),
        output_zero(_mm512_set1_epi32(p.output_zero_point)),
        range(p.output_zero_point, static_cast<int32_t>(a.lowest), 127),
        packed(levels_fit_int32(p, a, C)) {}
};

// The int32 levels of the 16 values x[0, 16) of `mask` (the others read as
// 0), their channels' offsets, gains and shifts at offset, gain and shift;
// clamped to [lowest, 127] less the zero point in double where Clamp.
template <bool Clamp>
__m512i rounded_levels(const int8_t* x, __mmask16 mask, const GroupVectors& l, const double* offset,
                       const double* gain, const double* shift) {
  const __m512i v = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, x));
  const auto half = [&](__m256i h, int k) {
    const __m512d d = _mm512_fmsub_pd(_mm512_cvtepi32_pd(h), l.count, _mm512_loadu_pd(offset + 8 * k));
    __m512d level = _mm512_fmadd_pd(d, _mm512_loadu_pd(gain + 8 * k), _mm512_loadu_pd(shift + 8 * k));
    if constexpr (Clamp) level = _mm512_min_pd(_mm512_max_pd(level, l.low), l.high);
    return _mm512_cvtpd_epi32(level);
  };
  return _mm512_inserti64x4(_mm512_castsi256_si512(half(_mm512_castsi512_si256(v), 0)),
                            half(_mm512_extracti64x4_epi64(v, 1), 1), 1);
}

// One pixel's C outputs, where every level fits int32: 64 at a time, packed (int8_outputs).
void pixel_packed(const int8_t* x, int64_t C, const GroupVectors& l, const double* offset, const double* gain,
                  const double* shift, int8_t* y) {
  for (int64_t c = 0; c < C; c += 64) {
    // Channels past C (the arrays are padded: kGroupNormShiftPadding) read as 0 and are not stored.
    __m512i q[4];
    for (int j = 0; j < 4; ++j) {
      const int64_t k = c + 16 * j;
      q[j] = rounded_levels<false>(x + k, lane_mask(std::max<int64_t>(C - k, 0)), l, offset + k, gain + k, shift + k);
    }
    store_int8_outputs<4>(int8_outputs(q, l.range), std::min<int64_t>(C - c, 64), y + c);
  }
}

// The same clamped in double first, for any layer.
void pixel_clamped(const int8_t* x, int64_t C, const GroupVectors& l, const double* offset, const double* gain,
                   const double* shift, int8_t* y) {
  for (int64_t c = 0; c < C; c += 16) {
    const __mmask16 mask = lane_mask(C - c);
    const __m512i q = rounded_levels<true>(x + c, mask, l, offset + c, gain + c, shift + c);
    _mm_mask_storeu_epi8(y + c, mask, _mm512_cvtepi32_epi8(_mm512_add_epi32(q, l.output_zero)));
  }
}
}  // namespace

void group_norm(const int8_t* x, const GroupNormShape& s, const ops::LayerNormLevels& p, const GroupNormAffine& a,
                int8_t* y) {
  ChannelTerms t = channel_terms(x, s, p, a.scales);
  t.offset.resize(t.offset.size() + kGroupNormShiftPadding);  // pixel_packed reads whole vectors of the last channels
  t.gain.resize(t.gain.size() + kGroupNormShiftPadding);
  const GroupVectors l(p, a, s.channels);
  const auto pixel = l.packed ? pixel_packed : pixel_clamped;
  const int64_t C = s.channels;
  parallel_for(s.batch * s.pixels, s.batch * s.pixels * C >= kMinParallelValues, [&](int64_t i) {
    const size_t terms = static_cast<size_t>(i / s.pixels * C);
    pixel(x + i * C, C, l, &t.offset[terms], &t.gain[terms], a.shifts, y + i * C);
  });
}

}  // namespace octet::cpu::vnni
