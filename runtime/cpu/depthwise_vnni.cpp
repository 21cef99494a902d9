// AVX-512 depthwise convolution. Threads share the output rows. Each input
// row that a thread's pixels read is first made a "pair row", once (a ring
// of kernel-height rows, which the thread's next output rows reuse): for each
// column x and block of 16 channels, the inputs of x and x + dilation
// interleaved, widened to int16 and less the zero point (so padding, a real
// 0, reads 0). A pixel then multiply-adds two taps of a kernel row at a time
// from those rows with vpdpwssd against the tap pair's weights, interleaved
// the same way once per model by paired_taps: no widening, shuffle or bounds
// check per tap, and the sums are in channel order, so each block of 16 goes
// straight to the requantizing epilogue (epilogue_avx512.h), which is then
// most of the work per output. The sums are exact: |input - zero point| <=
// 255 and |weight| <= 128, so a pair's sum is far inside int32.
//
// This file is compiled with AVX-512 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include "runtime/cpu/depthwise_simd.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593, as in conv_vnni.cpp
#endif
#include <immintrin.h>

#include <cstring>
#include <vector>

#include "runtime/cpu/depthwise_walk.h"
#include "runtime/cpu/epilogue_avx512.h"

namespace octet::cpu::vnni {
namespace {

constexpr int64_t kBlock = 16;  // channels per block: one vector of int32 sums
struct alignas(64) Pairs {      // a block's 16 pairs of int16 inputs
  int16_t lanes[2 * kBlock];
};
struct ZeroPoints {  // what a block's columns outside the image read; a row's blocks are adjacent
  int8_t bytes[kBlock];
};

// The columns of a pair row: column m pairs input columns x = m * step -
// padding and x + dilation. Where 2 * dilation is a multiple of the stride
// (stride 1 or 2, mostly) pixels start their pairs at every stride-th x only.
struct PairColumns {
  int64_t step, columns, blocks;
  int64_t pixel_step, pair_step;  // in columns: from pixel to pixel, from pair to pair of a kernel row

  explicit PairColumns(const ConvGeometry& g) {
    step = 2 * g.dilation % g.stride == 0 ? g.stride : 1;
    pixel_step = g.stride / step;
    pair_step = 2 * g.dilation / step;
    columns = (g.out_w - 1) * pixel_step + ((g.kernel + 1) / 2 - 1) * pair_step + 1;
    blocks = (g.out_c + kBlock - 1) / kBlock;
  }
  int64_t vectors() const { return columns * blocks; }
};

// The 16 channels' pairs of inputs at a and b (the lanes of `mask`, the
// others 0) less the zero point: each widened to int32, b's shifted into the
// high halves (two shuffles; interleaving the bytes first took four).
__attribute__((always_inline)) inline __m512i input_pairs(const int8_t* a, const int8_t* b, __mmask16 mask,
                                                          __m512i zero) {
  const __m512i x = _mm512_cvtepi8_epi32(load_bytes(mask, a)), y = _mm512_cvtepi8_epi32(load_bytes(mask, b));
  return _mm512_sub_epi16(_mm512_mask_blend_epi16(0xAAAAAAAA, x, _mm512_slli_epi32(y, 16)), zero);
}

// Input row `row` as a pair row; columns outside the image read `zero_points`.
void pair_row(const ConvGeometry& g, const PairColumns& p, const int8_t* row, const int8_t* zero_points,
              __m512i zero, Pairs* out) {
  const int64_t channels = g.in_c, last = p.blocks - 1;
  const __mmask16 tail = lane_mask(channels - last * kBlock);
  auto at = [&](int64_t x) { return x >= 0 && x < g.in_w ? row + x * channels : zero_points; };
  for (int64_t m = 0; m < p.columns; ++m, out += p.blocks) {
    const int64_t x = m * p.step - g.padding;
    const int8_t *a = at(x), *b = at(x + g.dilation);
    for (int64_t j = 0; j < last; ++j)
      _mm512_store_si512(out + j, input_pairs(a + j * kBlock, b + j * kBlock, 0xFFFF, zero));
    _mm512_store_si512(out + last, input_pairs(a + last * kBlock, b + last * kBlock, tail, zero));
  }
}

// Slot s of a thread's ring: `held`, the input row (b * in_h + iy) that its
// pair row holds (-1: none yet); `wanted`, the input row that the current
// output row's kernel row s reads (-1: outside the image). (Types of this
// file only in the containers here: a library template instantiated for
// shared types could be emitted with AVX-512 code and linked into baseline
// callers.)
struct Slot {
  int64_t held = -1, wanted = -1;
};

// One thread's pair rows: `kernel` of them, and the current output row's
// window, one pair row per kernel row.
struct PairRing {
  std::vector<Pairs> rows;
  std::vector<Slot> slots;
  std::vector<const Pairs*> window;

  PairRing(const ConvGeometry& g, const PairColumns& p)
      : rows(static_cast<size_t>(g.kernel * p.vectors())), slots(g.kernel), window(g.kernel) {}

  // The slot holding input row `row`, or -1.
  int holding(int64_t row) const {
    for (size_t s = 0; s < slots.size(); ++s)
      if (slots[s].held == row) return static_cast<int>(s);
    return -1;
  }
  bool wanted(int64_t row) const {
    for (const Slot& slot : slots)
      if (slot.wanted == row) return true;
    return false;
  }

  // Points window[ky] at the pair row of output row (b, oy)'s kernel row ky
  // (`zero_row` outside the image), making those the ring lacks in place of
  // rows the window does not read.
  void slide(const ConvGeometry& g, const PairColumns& p, const int8_t* input, int64_t b, int64_t oy,
             const Pairs* zero_row, const int8_t* zero_points, __m512i zero) {
    const int k = g.kernel;
    for (int ky = 0; ky < k; ++ky) {
      const int64_t iy = oy * g.stride - g.padding + int64_t(ky) * g.dilation;
      slots[ky].wanted = iy >= 0 && iy < g.in_h ? b * g.in_h + iy : -1;
    }
    for (int ky = 0; ky < k; ++ky) {
      const int64_t row = slots[ky].wanted;
      if (row < 0) {
        window[ky] = zero_row;
        continue;
      }
      int s = holding(row);
      if (s < 0) {
        s = 0;
        while (slots[s].held >= 0 && wanted(slots[s].held)) ++s;
        slots[s].held = row;
        pair_row(g, p, input + row * g.in_w * g.in_c, zero_points, zero, &rows[s * p.vectors()]);
      }
      window[ky] = &rows[s * p.vectors()];
    }
  }
};

// One output row's pixels of one block of channels (those of `mask`):
// window[ky] points at the block's pairs in kernel row ky's pair row, `w` at
// its weights' first pair, `skip` and `out` at its first residual and output.
// Four pixels at a time, their outputs packed into one vector (int8_outputs).
// `v` and `range` by value: int8 stores may alias a reference's vectors,
// which would then be loaded again after every pixel.
// K: the kernel size known when compiling (0: k), so that the taps unroll
// and their weights stay in registers.
template <int K>
__attribute__((always_inline)) inline void row_block(const Pairs* const* window, const __m512i* w, int k,
                                                     const PairColumns& p, int64_t width, ChannelVectors v,
                                                     Int8Range range, __mmask16 mask, int64_t channels,
                                                     const int8_t* skip, int8_t* out) {
  const int kernel = K != 0 ? K : k, pairs = (kernel + 1) / 2;
  const int64_t pixel_step = p.pixel_step * p.blocks, pair_step = p.pair_step * p.blocks;
  const Pairs* rows[K != 0 ? K : 1];
  __m512i known[K != 0 ? K * ((K + 1) / 2) : 1];
  if (K != 0)
    for (int t = 0; t < kernel; ++t) {
      rows[t] = window[t];
      for (int i = 0; i < pairs; ++i) known[t * pairs + i] = _mm512_loadu_si512(w + (t * pairs + i) * p.blocks);
    }
  // Pixel ox's sums from `start`: the bias for the packed epilogue (scaled_biased), else 0.
  const auto sum = [&](int64_t ox, __m512i start) {
    __m512i acc = start;
    for (int t = 0; t < kernel; ++t) {
      const Pairs* x = (K != 0 ? rows[t] : window[t]) + ox * pixel_step;
      for (int i = 0; i < pairs; ++i, x += pair_step) {
        const __m512i weights = K != 0 ? known[t * pairs + i] : _mm512_loadu_si512(w + (t * pairs + i) * p.blocks);
        acc = _mm512_dpwssd_epi32(acc, _mm512_load_si512(x), weights);
      }
    }
    return acc;
  };
  const auto scaled = [&](int64_t ox) {
    if (!skip) return scaled_biased(sum(ox, v.bias), v, nullptr);
    const __m512i s = skip_lanes(skip + ox * channels, false, mask);
    return scaled_biased(sum(ox, v.bias), v, &s);
  };
  int64_t ox = 0;
  for (; ox + 4 <= width; ox += 4) {
    const __m512i q[4] = {scaled(ox), scaled(ox + 1), scaled(ox + 2), scaled(ox + 3)};
    store_int8_pixels(int8_outputs(q, range), mask, out + ox * channels, channels);
  }
  for (; ox < width; ++ox)
    store_int8(sum(ox, _mm512_setzero_si512()), v, skip ? skip + ox * channels : nullptr, mask, out + ox * channels);
}

template <int K>
void depthwise_rows(const ConvGeometry& g, const int8_t* input, const int16_t* pairs, const EpilogueTables& e,
                    int8_t* output) {
  const PairColumns p(g);
  const int64_t channels = g.out_c;
  const ChannelVectors* vectors = channel_vectors(e);
  const Int8Range range(e);
  std::vector<ZeroPoints> zero_points(static_cast<size_t>(p.blocks));
  for (ZeroPoints& block : zero_points) std::memset(block.bytes, g.input_zero_point, sizeof block.bytes);
  const std::vector<Pairs> zero_row(static_cast<size_t>(p.vectors()), Pairs{});
  const __m512i zero = _mm512_set1_epi16(static_cast<int16_t>(g.input_zero_point));
  const auto* weights = reinterpret_cast<const __m512i*>(pairs);
  const auto make_ring = [&] { return PairRing(g, p); };
  for_each_output_row(g, make_ring, [&](int64_t b, int64_t oy, PairRing& ring) {
    ring.slide(g, p, input, b, oy, zero_row.data(), reinterpret_cast<const int8_t*>(zero_points.data()), zero);
    const int64_t row_at = (b * g.out_h + oy) * g.out_w * channels;
    for (int64_t j = 0; j < p.blocks; ++j) {
      const int64_t c = j * kBlock;
      row_block<K>(ring.window.data(), weights + j, g.kernel, p, g.out_w, vectors[j], range, lane_mask(channels - c),
                   channels, e.skip ? e.skip + row_at + c : nullptr, output + row_at + c);
      for (const Pairs*& row : ring.window) ++row;  // the next block's pairs
    }
  });
}

}  // namespace

// The weights in the pair rows' order: for each kernel row, each pair of its
// taps (kx = 2i, 2i + 1; the last one alone, beside a 0, where the kernel is
// odd) and each block of 16 channels, each channel's two weights adjacent.
std::vector<int16_t> paired_taps(const int32_t* taps, int kernel, int64_t channels) {
  const int64_t padded = padded_channels(channels);
  const int64_t blocks = (channels + kBlock - 1) / kBlock, pairs = (kernel + 1) / 2;
  std::vector<int16_t> w(static_cast<size_t>(kernel * pairs * blocks * 2 * kBlock), 0);
  for (int64_t ky = 0; ky < kernel; ++ky)
    for (int64_t i = 0; i < pairs; ++i)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t t = 0; t < 2 && 2 * i + t < kernel; ++t)
          w[((ky * pairs + i) * blocks * kBlock + c) * 2 + t] =
              static_cast<int16_t>(taps[(ky * kernel + 2 * i + t) * padded + c]);
  return w;
}

void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int16_t* pairs, const EpilogueTables& e,
                      int8_t* output) {
  if (g.kernel == 1) return depthwise_rows<1>(g, input, pairs, e, output);
  if (g.kernel == 3) return depthwise_rows<3>(g, input, pairs, e, output);
  if (g.kernel == 5) return depthwise_rows<5>(g, input, pairs, e, output);
  if (g.kernel == 7) return depthwise_rows<7>(g, input, pairs, e, output);
  depthwise_rows<0>(g, input, pairs, e, output);
}

}  // namespace octet::cpu::vnni
