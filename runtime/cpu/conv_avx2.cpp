// AVX2 convolution as a direct implicit GEMM, in the structure of
// conv_vnni.cpp. The input is first copied once into a padded int16 image
// (a zero border of `padding` pixels, channels rounded up to even), so that
// the receptive field of output pixel x in kernel row ky is one contiguous run
// of kernel * channels int16 values, and the runs of neighbouring pixels of
// one output row lie at a constant stride. A register block of MR such pixels
// x J blocks of 8 output channels then accumulates with one vpmaddwd + vpaddd
// per (pixel, block) per pair of values of the run (a broadcast pair of
// activations against 2 depth values x 8 channels of int16 weights), reading
// the padded image in place, and the epilogue requantizes in registers.
// Threads share out whole output rows (chunks of pixels for a 1x1, stride-1
// conv or a linear layer, whose pixels all lie at one stride).
//
// This file is compiled with AVX2 flags (a no-op on the x86-64-v3 baseline).
// Everything in it has internal linkage or is called only after the run-time
// CPU check, and it instantiates no template or inline function shared with
// other files (those could be emitted with AVX2 code and picked by the linker
// for callers built for an older baseline).
#include "runtime/cpu/conv_avx2.h"

#include <immintrin.h>

#include <cstring>

namespace octet::cpu::avx2 {

namespace {

constexpr int64_t kMaxBlockPixels = 8;  // the largest MR below
// Output pixels per unit of work shared among threads.
constexpr int64_t kPixelsPerTask = 256;
// Smaller convolutions (multiply-adds) run on the calling thread: waking the
// other threads would cost more than they save.
constexpr int64_t kMinParallelMacs = int64_t{1} << 22;

int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// Where the padded image is read (in int16 values): pixel m of `line` starts
// at base + line_offset(line) + m * pixel_stride.
struct Layout {
  int64_t cp;            // channels padded to even
  int64_t hp, wp;        // padded image size
  int64_t lines;         // output rows (or 1 for a 1x1 / stride 1 / unpadded conv: all pixels in one line)
  int64_t line_pixels;   // output pixels per line
  int64_t pixel_stride;  // values between the receptive fields of neighbouring pixels
  int64_t row_stride;    // values between kernel rows (ky)
  int64_t image_values;  // the padded image, without the slack after it
  int64_t line_offset(const ConvGeometry& g, int64_t line) const {
    if (lines == 1) return 0;
    const int64_t b = line / g.out_h, oy = line % g.out_h;
    return (b * hp + oy * g.stride) * row_stride;
  }
};

Layout layout(const ConvGeometry& g) {
  Layout l;
  l.cp = (g.in_c + 1) / 2 * 2;
  l.hp = g.in_h + 2 * g.padding;
  l.wp = g.in_w + 2 * g.padding;
  l.row_stride = l.wp * l.cp;
  l.pixel_stride = g.stride * l.cp;
  const bool one_line = g.kernel == 1 && g.stride == 1 && g.padding == 0;
  l.lines = one_line ? 1 : g.batch * g.out_h;
  l.line_pixels = one_line ? g.batch * g.out_h * g.out_w : g.out_w;
  l.image_values = g.batch * l.hp * l.row_stride;
  return l;
}

// Values read past the image: the last block of a line computes up to MR
// pixels past its end.
int64_t slack_values(const ConvGeometry& g, const Layout& l) { return (kMaxBlockPixels * g.stride + g.kernel) * l.cp; }

// dst[i] = src[i] widened to int16, for n values.
inline void widen(const int8_t* src, int64_t n, int16_t* dst) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < n; ++i) dst[i] = src[i];
}

// Padded row `py` of image b: zeros in the border, the activations widened.
void pad_row(const ConvGeometry& g, const Layout& l, const int8_t* input, int64_t b, int64_t py, int16_t* padded) {
  int16_t* dst = padded + (b * l.hp + py) * l.row_stride;
  const int64_t iy = py - g.padding;
  if (iy < 0 || iy >= g.in_h) {
    std::memset(dst, 0, static_cast<size_t>(l.row_stride) * 2);
    return;
  }
  const int64_t border = g.padding * l.cp, c = g.in_c;
  std::memset(dst, 0, static_cast<size_t>(border) * 2);
  std::memset(dst + l.row_stride - border, 0, static_cast<size_t>(border) * 2);
  const int8_t* src = input + (b * g.in_h + iy) * g.in_w * c;
  if (c == l.cp) {
    widen(src, g.in_w * c, dst + border);
    return;
  }
  for (int64_t x = 0; x < g.in_w; ++x) {
    int16_t* pixel = dst + border + x * l.cp;
    widen(src + x * c, c, pixel);
    pixel[c] = 0;  // the one padding channel
  }
}

// The epilogue operands of 8 channels in registers, loaded once per register
// block (int8 stores may alias anything, so the compiler would reload them
// after every row). The 64-bit operands of channels 0-3 are [0], of 4-7 [1];
// those a layer lacks are zero.
struct ChannelVectors {
  __m256i bias, multiplier[2] = {}, rounding[2] = {}, shift[2] = {}, skip_multiplier[2] = {};

  ChannelVectors(const EpilogueTables& e, int64_t channel) {
    bias = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e.bias + channel));
    if (!e.multiplier) return;  // int32 output: the bias alone
    for (int h = 0; h < 2; ++h) {
      multiplier[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e.multiplier + channel + 4 * h));
      rounding[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e.rounding + channel + 4 * h));
      shift[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e.shift + channel + 4 * h));
      if (e.skip)
        skip_multiplier[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e.skip_multiplier + channel + 4 * h));
    }
  }
};

// octet::requantize of 8 accumulators of `lanes` (1 to 8) channels: (acc *
// multiplier + skip * skip_multiplier + rounding) >> shift in 64-bit lanes,
// clamped to [lo, 127] there. AVX2 has no 64-bit arithmetic shift: a
// negative x is shifted as ~(~x >>> shift).
inline void store_int8(__m256i acc, const ChannelVectors& v, const int8_t* skip, __m256i lo, int64_t lanes,
                       int8_t* out) {
  acc = _mm256_add_epi32(acc, v.bias);
  __m256i x[2] = {_mm256_cvtepi32_epi64(_mm256_castsi256_si128(acc)),
                  _mm256_cvtepi32_epi64(_mm256_extracti128_si256(acc, 1))};
  __m128i s = _mm_setzero_si128();
  if (skip) {
    if (lanes == kBlock) {
      s = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(skip));
    } else {  // not past the end of the skip tensor
      int64_t part = 0;
      std::memcpy(&part, skip, static_cast<size_t>(lanes));
      s = _mm_cvtsi64_si128(part);
    }
  }
  const __m256i zero = _mm256_setzero_si256(), hi = _mm256_set1_epi64x(127);
  for (int h = 0; h < 2; ++h) {
    x[h] = _mm256_add_epi64(_mm256_mul_epi32(x[h], v.multiplier[h]), v.rounding[h]);
    if (skip) {
      const __m256i sk = _mm256_cvtepi8_epi64(h == 0 ? s : _mm_srli_si128(s, 4));
      x[h] = _mm256_add_epi64(x[h], _mm256_mul_epi32(sk, v.skip_multiplier[h]));
    }
    const __m256i negative = _mm256_cmpgt_epi64(zero, x[h]);
    x[h] = _mm256_xor_si256(_mm256_srlv_epi64(_mm256_xor_si256(x[h], negative), v.shift[h]), negative);
    x[h] = _mm256_blendv_epi8(x[h], hi, _mm256_cmpgt_epi64(x[h], hi));
    x[h] = _mm256_blendv_epi8(x[h], lo, _mm256_cmpgt_epi64(lo, x[h]));
  }
  // The low halves of the 64-bit lanes, as channels 0 4 1 5 | 2 6 3 7, then in order.
  const __m256i mixed = _mm256_blend_epi32(x[0], _mm256_slli_epi64(x[1], 32), 0xAA);
  const __m256i q = _mm256_permutevar8x32_epi32(mixed, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  const __m128i bytes = _mm_packs_epi16(words, words);
  if (lanes == kBlock) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), bytes);
  } else {
    const int64_t all = _mm_cvtsi128_si64(bytes);
    std::memcpy(out, &all, static_cast<size_t>(lanes));
  }
}

inline __m256i lane_mask(int64_t lanes) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lanes)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Requantizes and stores (or, for the logits, adds the bias to) the
// accumulators of MR pixels x J blocks; pixels past `valid` are not stored.
template <int MR, int J>
__attribute__((always_inline)) inline void store_block(const __m256i (&acc)[MR][J], int64_t first_pixel, int64_t valid,
                                                       int64_t first_block, const ConvGeometry& g,
                                                       const EpilogueTables& e, int8_t* output, int32_t* logits) {
  const int64_t out_c = g.out_c;
  const __m256i lo = _mm256_set1_epi64x(e.relu ? 0 : -128);
#pragma GCC unroll 4
  for (int j = 0; j < J; ++j) {
    const int64_t channel = (first_block + j) * kBlock, lanes = min64(kBlock, out_c - channel);
    const ChannelVectors v(e, channel);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      if (r >= valid) break;
      const int64_t at = (first_pixel + r) * out_c + channel;
      if (output) {
        store_int8(acc[r][j], v, e.skip ? e.skip + at : nullptr, lo, lanes, output + at);
      } else {
        const __m256i sum = _mm256_add_epi32(acc[r][j], v.bias);
        if (lanes == kBlock)
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(logits + at), sum);
        else
          _mm256_maskstore_epi32(logits + at, lane_mask(lanes), sum);
      }
    }
  }
}

// MR pixels of one line x J blocks of 8 channels. `a`: the receptive field
// of the first pixel; `w`: the first block; pixels past `valid` are computed
// (from readable memory) but not stored.
template <int MR, int J>
inline void register_block(const int16_t* a, const Layout& l, const int16_t* w, int64_t block_values,
                           int64_t first_pixel, int64_t valid, int64_t first_block, const ConvGeometry& g,
                           const EpilogueTables& e, int8_t* output, int32_t* logits) {
  __m256i acc[MR][J];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < J; ++j) acc[r][j] = _mm256_setzero_si256();
  const int64_t run_pairs = g.kernel * l.cp / 2, ps = l.pixel_stride;
  for (int ky = 0; ky < g.kernel; ++ky, a += l.row_stride) {
    for (int64_t s = 0; s < run_pairs; ++s, w += 2 * kBlock) {
      __m256i b[J];
#pragma GCC unroll 4
      for (int j = 0; j < J; ++j) b[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + j * block_values));
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        int32_t pair;
        std::memcpy(&pair, a + r * ps + s * 2, 4);
        const __m256i x = _mm256_set1_epi32(pair);
#pragma GCC unroll 4
        for (int j = 0; j < J; ++j) acc[r][j] = _mm256_add_epi32(acc[r][j], _mm256_madd_epi16(x, b[j]));
      }
    }
  }
  store_block<MR, J>(acc, first_pixel, valid, first_block, g, e, output, logits);
}

// One group of J blocks over pixels [first, first + count) of lines
// [first_line, end_line), MR pixels per register block.
template <int MR, int J>
void group_lines(const int16_t* padded, const Layout& l, int64_t first_line, int64_t end_line, int64_t first,
                 int64_t count, const int16_t* blocked, int64_t first_block, const ConvGeometry& g,
                 const EpilogueTables& e, int8_t* output, int32_t* logits) {
  const int64_t block_values = g.kernel * g.kernel * l.cp * kBlock;
  const int16_t* w = blocked + first_block * block_values;
  for (int64_t line = first_line; line < end_line; ++line) {
    const int16_t* a = padded + l.line_offset(g, line) + first * l.pixel_stride;
    const int64_t first_pixel = line * l.line_pixels + first;
    for (int64_t r = 0; r < count; r += MR)
      register_block<MR, J>(a + r * l.pixel_stride, l, w, block_values, first_pixel + r, count - r, first_block, g, e,
                            output, logits);
  }
}

// Pixels [first, first + count) of lines [first_line, end_line), all output
// channels. Column groups outside, lines inside: a group's weights stay in
// L2 while every line reads them.
void lines_all_columns(const int16_t* padded, const Layout& l, int64_t first_line, int64_t end_line, int64_t first,
                       int64_t count, const int16_t* blocked, const ConvGeometry& g, const EpilogueTables& e,
                       int8_t* output, int32_t* logits) {
  const int64_t blocks = (g.out_c + kBlock - 1) / kBlock;
  int64_t block = 0;
  for (; block + 2 <= blocks; block += 2)
    group_lines<4, 2>(padded, l, first_line, end_line, first, count, blocked, block, g, e, output, logits);
  if (block < blocks)
    group_lines<8, 1>(padded, l, first_line, end_line, first, count, blocked, block, g, e, output, logits);
}

}  // namespace

int64_t workspace_bytes(const ConvGeometry& g) {
  const Layout l = layout(g);
  return (l.image_values + slack_values(g, l)) * 2;
}

void conv2d(const ConvGeometry& g, const int8_t* input, const int16_t* blocked_pairs, const EpilogueTables& e,
            uint8_t* workspace, int8_t* output, int32_t* logits) {
  const Layout l = layout(g);
  int16_t* padded = reinterpret_cast<int16_t*>(workspace);
  std::memset(padded + l.image_values, 0, static_cast<size_t>(slack_values(g, l)) * 2);
  const int64_t padded_rows = g.batch * l.hp;
  // Work units: whole lines when lines are short, chunks of one long line otherwise.
  const int64_t lines_per_task = l.line_pixels >= kPixelsPerTask ? 1 : kPixelsPerTask / l.line_pixels;
  const int64_t chunks_per_line = (l.line_pixels + kPixelsPerTask - 1) / kPixelsPerTask;
  const int64_t chunk = l.line_pixels >= kPixelsPerTask ? kPixelsPerTask : l.line_pixels;
  const int64_t tasks =
      l.line_pixels >= kPixelsPerTask ? l.lines * chunks_per_line : (l.lines + lines_per_task - 1) / lines_per_task;
  const int64_t macs = g.batch * g.out_h * g.out_w * g.out_c * g.kernel * g.kernel * g.in_c;
#pragma omp parallel if (macs >= kMinParallelMacs)
  {
#pragma omp for schedule(dynamic, 32)
    for (int64_t row = 0; row < padded_rows; ++row) pad_row(g, l, input, row / l.hp, row % l.hp, padded);
#pragma omp for schedule(dynamic)
    for (int64_t t = 0; t < tasks; ++t) {
      if (l.line_pixels >= kPixelsPerTask) {
        const int64_t line = t / chunks_per_line, first = (t % chunks_per_line) * chunk;
        lines_all_columns(padded, l, line, line + 1, first, min64(chunk, l.line_pixels - first), blocked_pairs, g, e,
                          output, logits);
      } else {
        lines_all_columns(padded, l, t * lines_per_task, min64(l.lines, (t + 1) * lines_per_task), 0, l.line_pixels,
                          blocked_pairs, g, e, output, logits);
      }
    }
  }
}

}  // namespace octet::cpu::avx2
