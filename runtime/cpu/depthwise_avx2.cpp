// AVX2 depthwise convolution. Threads share the output rows. 3x3 and 5x5
// kernels: each pixel points each tap of its window at its input pixel, or,
// outside the image, at a row of zero-point bytes (a real 0, which adds
// nothing), so that every pixel runs the same unrolled taps; whole blocks of
// 16 channels widen their int8 inputs to int16 and multiply-add two taps at a
// time (vpmaddwd against the weights of the tap pair, interleaved once by
// paired_taps), the rest 8 channels at a time in int32 (vpmulld). Other
// kernels (a depthwise Conv1d's 1 x k, ConvNeXt's 7x7): each output row first
// widens the input rows it reads to int16 less the zero point, zero-padded
// (widened_rows), and every block, a partial last one too, takes the int16
// path from them: each input value is widened once per kernel row, not once
// per tap. The 8-channel halves are then requantized in registers
// (epilogue_avx2.h), whose operands are made once per call. The sums are
// exact: |input - zero point| <= 255 and |weight| <= 128, so a pair's sum is
// far inside int32.
//
// This file is compiled with AVX2 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include <immintrin.h>

#include <cstring>
#include <vector>

#include "runtime/cpu/depthwise_simd.h"
#include "runtime/cpu/depthwise_walk.h"
#include "runtime/cpu/epilogue_avx2.h"

namespace octet::cpu::avx2 {
namespace {

constexpr int64_t kPairBlock = 16;  // channels per block of the int16 path

// Blocks of paired_taps' weights: the last one padded with zero weights.
int64_t pair_blocks(int64_t channels) { return (channels + kPairBlock - 1) / kPairBlock; }

// 16 channels' inputs less the zero point, as int16.
__attribute__((always_inline)) inline __m256i load_16(const int8_t* x, __m256i zero) {
  return _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x))), zero);
}

// The accumulators of channels 0-7 and 8-15 of a block over `Taps` taps
// (tap[t]: where tap t reads this block's inputs), `w` the block's first pair.
template <int Taps>
__attribute__((always_inline)) inline void paired_channels(const int8_t* const* tap, int64_t channel,
                                                           const __m256i* w, int64_t pair_step, __m256i zero,
                                                           __m256i (&acc)[2]) {
  constexpr int taps = Taps;
  __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
  for (int t = 0; t < taps; t += 2, w += pair_step) {
    const __m256i a = load_16(tap[t] + channel, zero);
    const __m256i b = t + 1 < taps ? load_16(tap[t + 1] + channel, zero) : _mm256_setzero_si256();
    lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), _mm256_loadu_si256(w)));
    hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), _mm256_loadu_si256(w + 1)));
  }
  acc[0] = _mm256_permute2x128_si256(lo, hi, 0x20);
  acc[1] = _mm256_permute2x128_si256(lo, hi, 0x31);
}

// `lanes` (1 to 8) bytes at x, the rest 0. A memcpy of a variable size is a
// library call, which took 80% of a 12-channel depthwise conv's time.
__attribute__((always_inline)) inline int64_t load_lanes_8(const int8_t* x, int64_t lanes) {
  int64_t bytes = 0;
  if (lanes == 8) {
    std::memcpy(&bytes, x, 8);
    return bytes;
  }
  for (int64_t i = 0; i < lanes; ++i) bytes |= int64_t{static_cast<uint8_t>(x[i])} << (8 * i);
  return bytes;
}

// The accumulators of `lanes` (1 to 8) channels in int32, `w` tap 0's weights of them.
template <int Taps>
__attribute__((always_inline)) inline __m256i int32_channels(const int8_t* const* tap, int64_t channel,
                                                             int64_t lanes, const int32_t* w, int64_t tap_step,
                                                             __m256i zero) {
  constexpr int taps = Taps;
  __m256i acc = _mm256_setzero_si256();
  for (int t = 0; t < taps; ++t) {
    const int64_t bytes = load_lanes_8(tap[t] + channel, lanes);
    const __m256i v = _mm256_sub_epi32(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes)), zero);
    const __m256i weight = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + t * tap_step));
    acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(v, weight));
  }
  return acc;
}

// K: the kernel size known when compiling, so that the taps unroll.
template <int K>
void depthwise_rows(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const int16_t* pairs,
                    const EpilogueTables& e, int8_t* output) {
  constexpr int k = K, tap_count = K * K;
  const int64_t channels = g.out_c;
  const int64_t padded = padded_channels(channels);
  const int64_t paired_end = channels / kPairBlock * kPairBlock, blocks = paired_end / kPairBlock;
  const bool narrow = narrow_is_exact(tap_count, channels, e);
  std::vector<ChannelVectors> vectors;
  for (int64_t channel = 0; channel < channels; channel += kLanes) vectors.emplace_back(e, channel, narrow);
  const std::vector<int8_t> zero_row(static_cast<size_t>(channels + kPairBlock),
                                     static_cast<int8_t>(g.input_zero_point));
  const __m256i zero16 = _mm256_set1_epi16(static_cast<int16_t>(g.input_zero_point));
  const __m256i zero32 = _mm256_set1_epi32(g.input_zero_point);
  const auto* pair_weights = reinterpret_cast<const __m256i*>(pairs);
  for_each_output_row(g, [&](int64_t b, int64_t oy) {
    std::vector<const int8_t*> tap(static_cast<size_t>(tap_count));
    for (int64_t ox = 0; ox < g.out_w; ++ox) {
      for (int ky = 0; ky < k; ++ky) {
        const int64_t iy = oy * g.stride - g.padding + int64_t(ky) * g.dilation;
        for (int kx = 0; kx < k; ++kx) {
          const int64_t ix = ox * g.stride - g.padding + int64_t(kx) * g.dilation;
          const bool inside = iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w;
          tap[ky * k + kx] = inside ? input + ((b * g.in_h + iy) * g.in_w + ix) * channels : zero_row.data();
        }
      }
      const int64_t at = ((b * g.out_h + oy) * g.out_w + ox) * channels;
      const int8_t* skip = e.skip ? e.skip + at : nullptr;
      for (int64_t j = 0; j < blocks; ++j) {
        const int64_t channel = j * kPairBlock;
        __m256i acc[2];
        paired_channels<K * K>(tap.data(), channel, pair_weights + 2 * j, 2 * pair_blocks(channels), zero16, acc);
        for (int h = 0; h < 2; ++h) {
          const int64_t c = channel + h * kLanes;
          store_int8(acc[h], vectors[c / kLanes], skip ? skip + c : nullptr, e.lo, kLanes, output + at + c);
        }
      }
      for (int64_t c = paired_end; c < channels; c += kLanes) {
        const int64_t lanes = channels - c < kLanes ? channels - c : kLanes;
        const __m256i acc = int32_channels<K * K>(tap.data(), c, lanes, taps + c, padded, zero32);
        store_int8(acc, vectors[c / kLanes], skip ? skip + c : nullptr, e.lo, lanes, output + at + c);
      }
    }
  });
}

// One thread's widened input rows (widened_rows): `kernel` of them, each
// [padding + width + padding pixels][blocks * 16 channels] of int16, zero
// where no input value is (the padding pixels and channels, written once);
// and where each tap of the current output row reads them.
struct WidenedRows {
  std::vector<int16_t> rows;
  std::vector<const int16_t*> tap;
};

// Input row `row` (width pixels of `channels` int8 values) less the zero point into `to` (a pixel every `step`).
void widen_row(const int8_t* row, int64_t width, int64_t channels, int64_t step, __m256i zero, int32_t zero_point,
               int16_t* to) {
  const int64_t whole = channels / kPairBlock * kPairBlock;
  for (int64_t x = 0; x < width; ++x, row += channels, to += step) {
    for (int64_t c = 0; c < whole; c += kPairBlock)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + c), load_16(row + c, zero));
    for (int64_t c = whole; c < channels; ++c) to[c] = static_cast<int16_t>(row[c] - zero_point);
  }
}

void widened_rows(const ConvGeometry& g, const int8_t* input, const int16_t* pairs, const EpilogueTables& e,
                  int8_t* output) {
  const int kw = g.kernel_w, tap_count = g.kernel * kw;
  const int64_t channels = g.out_c, blocks = pair_blocks(channels), step = blocks * kPairBlock;
  const int64_t row_values = (g.in_w + 2 * int64_t(g.padding)) * step;
  const bool narrow = narrow_is_exact(tap_count, channels, e);
  std::vector<ChannelVectors> vectors;
  for (int64_t channel = 0; channel < channels; channel += kLanes) vectors.emplace_back(e, channel, narrow);
  const std::vector<int16_t> zero_row(static_cast<size_t>(row_values), 0);
  const __m256i zero16 = _mm256_set1_epi16(static_cast<int16_t>(g.input_zero_point));
  const auto* pair_weights = reinterpret_cast<const __m256i*>(pairs);
  const auto make_rows = [&] {
    return WidenedRows{std::vector<int16_t>(static_cast<size_t>(g.kernel * row_values), 0),
                       std::vector<const int16_t*>(static_cast<size_t>(tap_count))};
  };
  for_each_output_row(g, make_rows, [&](int64_t b, int64_t oy, WidenedRows& w) {
    for (int ky = 0; ky < g.kernel; ++ky) {
      const int64_t iy = oy * g.stride - g.padding + int64_t(ky) * g.dilation;
      const int16_t* row = zero_row.data();
      if (iy >= 0 && iy < g.in_h) {
        int16_t* widened = w.rows.data() + ky * row_values;
        widen_row(input + (b * g.in_h + iy) * g.in_w * channels, g.in_w, channels, step, zero16, g.input_zero_point,
                  widened + g.padding * step);
        row = widened;
      }
      for (int kx = 0; kx < kw; ++kx) w.tap[ky * kw + kx] = row + int64_t(kx) * g.dilation * step;
    }
    for (int64_t ox = 0; ox < g.out_w; ++ox) {
      const int64_t from = ox * g.stride * step, at = ((b * g.out_h + oy) * g.out_w + ox) * channels;
      const int8_t* skip = e.skip ? e.skip + at : nullptr;
      for (int64_t j = 0; j < blocks; ++j) {
        const int64_t channel = j * kPairBlock;
        const __m256i* weights = pair_weights + 2 * j;
        __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
        for (int t = 0; t < tap_count; t += 2, weights += 2 * blocks) {
          const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.tap[t] + from + channel));
          const __m256i c = t + 1 < tap_count
                                ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.tap[t + 1] + from + channel))
                                : _mm256_setzero_si256();
          lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, c), _mm256_loadu_si256(weights)));
          hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, c), _mm256_loadu_si256(weights + 1)));
        }
        const __m256i acc[2] = {_mm256_permute2x128_si256(lo, hi, 0x20), _mm256_permute2x128_si256(lo, hi, 0x31)};
        for (int h = 0; h < 2 && channel + h * kLanes < channels; ++h) {
          const int64_t c = channel + h * kLanes, lanes = channels - c < kLanes ? channels - c : kLanes;
          store_int8(acc[h], vectors[c / kLanes], skip ? skip + c : nullptr, e.lo, lanes, output + at + c);
        }
      }
    }
  });
}

}  // namespace

// The weights of the int16 path: for each pair of taps (2p, 2p + 1; the last
// one alone, beside a 0, where the taps are odd) and each block of 16
// channels, the two vectors that vpmaddwd takes against the pair's inputs
// interleaved by vpunpck{l,h}wd: [0] channels 0-3 and 8-11, [1] 4-7 and
// 12-15, each channel's two weights adjacent.
std::vector<int16_t> paired_taps(const int32_t* taps, int64_t tap_count, int64_t channels) {
  const int64_t padded = padded_channels(channels);
  const int64_t blocks = pair_blocks(channels), pairs = (tap_count + 1) / 2;
  std::vector<int16_t> w(static_cast<size_t>(pairs * blocks * 2 * kPairBlock), 0);
  for (int64_t p = 0; p < pairs; ++p)
    for (int64_t j = 0; j < blocks; ++j)
      for (int half = 0; half < 2; ++half)
        for (int lane = 0; lane < 2; ++lane)
          for (int i = 0; i < 4; ++i) {
            const int64_t c = kPairBlock * j + 8 * lane + 4 * half + i;
            int16_t* at = w.data() + ((p * blocks + j) * 2 + half) * kPairBlock + 8 * lane + 2 * i;
            for (int t = 0; t < 2; ++t)
              if (2 * p + t < tap_count) at[t] = static_cast<int16_t>(taps[(2 * p + t) * padded + c]);
          }
  return w;
}

void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const int16_t* pairs,
                      const EpilogueTables& e, int8_t* output) {
  if (g.kernel == 3 && g.kernel_w == 3) return depthwise_rows<3>(g, input, taps, pairs, e, output);
  if (g.kernel == 5 && g.kernel_w == 5) return depthwise_rows<5>(g, input, taps, pairs, e, output);
  widened_rows(g, input, pairs, e, output);
}

}  // namespace octet::cpu::avx2
