// AVX2 convolution as a direct implicit GEMM, in the structure of
// conv_vnni.cpp. Each task (a few output rows, or a chunk of pixels of a 1x1
// unpadded conv or a linear layer) first copies the input rows it reads into
// a padded buffer of its thread (less the input's zero point, so a real 0 is
// 0; a zero border of `padding` pixels, channels
// rounded up to a whole 4-byte word), where they stay in cache, so that the
// receptive field of output pixel x in kernel row ky is one contiguous run of
// kernel_w * channels values (of a dilated conv: kernel_w runs of channels
// values, dilation pixels apart), and the runs of neighbouring pixels of one
// output row lie at a constant stride. A register block of MR such pixels
// x J blocks of 8 output channels then accumulates, per (pixel, block), one
// broadcast word of activations against 8 channels of weights at a time,
// reading the buffer in place, and the epilogue requantizes in registers.
// Threads share out the tasks, and pairs of blocks where tasks are too few.
//
// The values, two ways (each exact, so the bits do not depend on which runs):
// - Int16Pairs: activations widened to int16, 2 per word; vpmaddwd + vpaddd;
// - UnsignedQuads, when no input value is negative and the zero point is 0
//   (a ReLU's output stored signed, most convs of a CNN): int8 activations read as uint8, 4 per word; vpmaddubsw
//   (u8 x s8 pairs into int16: at most 2 * 127 * 128 = 32512, never
//   saturated) + vpmaddwd with ones + vpaddd. Twice the depth per broadcast
//   and half the buffer.
//
// This file is compiled with AVX2 flags (a no-op on the x86-64-v3 baseline).
// Everything in it has internal linkage or is called only after the run-time
// CPU check, and it instantiates no template or inline function shared with
// other files (those could be emitted with AVX2 code and picked by the linker
// for callers built for an older baseline).
#include "runtime/cpu/conv_avx2.h"

#include <immintrin.h>
#include <omp.h>

#include <cstring>

#include "runtime/cpu/epilogue_avx2.h"
#include "runtime/cpu/idle_threads.h"
#include "runtime/cpu/pixel_tasks.h"

namespace octet::cpu::avx2 {

namespace {

constexpr int64_t kMaxBlockPixels = 8;  // the largest MR below

// The two value layouts (file comment): Act, the buffer's activations;
// Weight, the packed weights'; kGroup values of each per 4-byte word; madd,
// the 8 int32 sums of a broadcast word of activations against a word of
// weights of each of 8 channels.
struct Int16Pairs {
  using Act = int16_t;
  using Weight = int16_t;
  static constexpr int kGroup = 2;
  static __m256i madd(__m256i x, __m256i w) { return _mm256_madd_epi16(x, w); }
};
struct UnsignedQuads {
  using Act = uint8_t;
  using Weight = int8_t;
  static constexpr int kGroup = 4;
  static __m256i madd(__m256i x, __m256i w) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(x, w), _mm256_set1_epi16(1));
  }
};
// Output pixels per unit of work shared among threads.
constexpr int64_t kPixelsPerTask = 256;
// Smaller convolutions (multiply-adds) run on the calling thread: starting
// the other threads would cost more than they save (idle_threads.h: far less
// where idle threads spin).
constexpr int64_t kMinParallelMacsSpinning = int64_t{1} << 20;
constexpr int64_t kMinParallelMacsSleeping = int64_t{1} << 22;

int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// How a task's padded rows are laid out (in values): output pixel m of a
// line reads from that line's start + m * pixel_stride.
struct Layout {
  int64_t cp;              // channels padded to a multiple of the values per word
  int64_t wp;              // padded image width
  bool one_line;           // a 1x1 unpadded conv: all pixels form one line, their inputs copied cp apart
  int64_t line_pixels;     // output pixels per line
  int64_t lines_per_task;  // output rows per task (1 for one line: a task is a chunk of it)
  int64_t span;            // input rows a kernel column covers: (kernel - 1) * dilation + 1
  int64_t span_w;          // input pixels a kernel row covers: (kernel_w - 1) * dilation + 1
  int64_t pixel_stride;    // values between the receptive fields of neighbouring pixels
  int64_t row_stride;      // values between padded rows
  int64_t slack;           // values read past a task's rows: a line's last block computes up to MR pixels past its end
  int64_t task_values;     // a task's padded rows, with the slack after them
};

Layout layout(const ConvGeometry& g, int group) {
  Layout l;
  l.cp = (g.in_c + group - 1) / group * group;
  l.wp = g.in_w + 2 * g.padding;
  l.one_line = g.one_to_one();
  l.line_pixels = l.one_line ? g.batch * g.out_h * g.out_w : g.out_w;
  l.lines_per_task = l.one_line ? 1 : (kPixelsPerTask + l.line_pixels - 1) / l.line_pixels;
  l.row_stride = l.wp * l.cp;
  l.span = int64_t(g.kernel - 1) * g.dilation + 1;
  l.span_w = int64_t(g.kernel_w - 1) * g.dilation + 1;
  l.pixel_stride = l.one_line ? l.cp : g.stride * l.cp;
  l.slack = (kMaxBlockPixels * g.stride + l.span_w) * l.cp;
  // A task's lines need at most max(stride, span) input rows each.
  l.task_values = l.one_line ? kPixelsPerTask * l.cp + l.slack
                             : l.lines_per_task * (g.stride > l.span ? g.stride : l.span) * l.row_stride + l.slack;
  return l;
}

// dst[i] = src[i] - zero_point widened to int16, for n values.
inline void copy_values(const int8_t* src, int64_t n, int32_t zero_point, int16_t* dst) {
  const __m256i zero = _mm256_set1_epi16(static_cast<int16_t>(zero_point));
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(dst + i),
        _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))), zero));
  for (; i < n; ++i) dst[i] = static_cast<int16_t>(src[i] - zero_point);
}

// dst[i] = src[i], none negative (and the zero point 0).
inline void copy_values(const int8_t* src, int64_t n, int32_t, uint8_t* dst) {
  std::memcpy(dst, src, static_cast<size_t>(n));
}

// A wide input's int16 values (NodeQuant::bits; its zero point is 0), as they are.
inline void copy_values(const int16_t* src, int64_t n, int32_t, int16_t* dst) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(int16_t));
}

// c values of each of `pixels` pixels into pixels of cp values, the rest zeros.
template <typename Act, typename In>
void copy_pixels(const In* src, int64_t pixels, int64_t c, int64_t cp, int32_t zero_point, Act* dst) {
  if (c == cp) return copy_values(src, pixels * c, zero_point, dst);
  for (int64_t p = 0; p < pixels; ++p) {
    copy_values(src + p * c, c, zero_point, dst + p * cp);
    std::memset(dst + p * cp + c, 0, static_cast<size_t>(cp - c) * sizeof(Act));  // the padding channels
  }
}

// The input pixels of a 1x1 unpadded conv's output pixels [first, first + n)
// to `dst`, cp values apart: one run of them at stride 1.
template <typename Act, typename In>
void gather_pixels(const ConvGeometry& g, const In* input, int64_t first, int64_t n, int64_t cp, Act* dst) {
  if (g.stride == 1) return copy_pixels(input + first * g.in_c, n, g.in_c, cp, g.input_zero_point, dst);
  for (int64_t m = first; m < first + n; ++m, dst += cp) {
    const int64_t b = m / (g.out_h * g.out_w), oy = m / g.out_w % g.out_h, ox = m % g.out_w;
    copy_pixels(input + ((b * g.in_h + oy * g.stride) * g.in_w + ox * g.stride) * g.in_c, 1, g.in_c, cp,
                g.input_zero_point, dst);
  }
}

// Padded row `py` of image b, to `dst`: zeros (real ones) in the border, the activations copied.
template <typename Act, typename In>
void pad_row(const ConvGeometry& g, const Layout& l, const In* input, int64_t b, int64_t py, Act* dst) {
  const int64_t iy = py - g.padding;
  if (iy < 0 || iy >= g.in_h) {
    std::memset(dst, 0, static_cast<size_t>(l.row_stride) * sizeof(Act));
    return;
  }
  const int64_t border = g.padding * l.cp;
  std::memset(dst, 0, static_cast<size_t>(border) * sizeof(Act));
  std::memset(dst + l.row_stride - border, 0, static_cast<size_t>(border) * sizeof(Act));
  copy_pixels(input + (b * g.in_h + iy) * g.in_w * g.in_c, g.in_w, g.in_c, l.cp, g.input_zero_point, dst + border);
}

// Whether any of the n values is negative.
bool any_negative(const int8_t* x, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    if (_mm256_movemask_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)))) return true;
  for (; i < n; ++i)
    if (x[i] < 0) return true;
  return false;
}

// Whether the register blocks' sums start at the bias: for int8 outputs,
// whose epilogue (store_int8_block) then skips its add.
inline bool starts_at_bias(const EpilogueTables& e, const int8_t* output) { return output && e.bits <= 8; }

// store_block's int8 outputs (of sums that include the bias): each pixel's J
// (1 or 2) blocks packed into one vector (int8_outputs) and stored at once.
template <int MR, int J>
__attribute__((always_inline)) inline void store_int8_block(const __m256i (&acc)[MR][J], int64_t first_pixel,
                                                            int64_t valid, int64_t first_block, const ChannelVectors* v,
                                                            const ConvGeometry& g, const EpilogueTables& e,
                                                            int8_t* output) {
  static_assert(J == 1 || J == 2, "int8_outputs packs one or two blocks");
  const int64_t out_c = g.out_c, channel = first_block * kBlock, bytes = min64(out_c - channel, J * kBlock);
  const bool wide_skip = e.skip_bits > 8;
  const Int8Range range(e.zero_point, e.lo, 127);
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    if (r >= valid) break;
    const int64_t at = (first_pixel + r) * out_c + channel;
    __m256i q[J];
#pragma GCC unroll 2
    for (int j = 0; j < J; ++j) {
      if (!e.skip) {
        q[j] = scaled_biased(acc[r][j], v[j], nullptr, e.lo, 127);
        continue;
      }
      const __m256i s = skip_lanes(e.skip + (at + j * kBlock) * (wide_skip ? 2 : 1), wide_skip,
                                   min64(kBlock, out_c - channel - j * kBlock), v[j]);
      q[j] = scaled_biased(acc[r][j], v[j], &s, e.lo, 127);
    }
    store_int8_outputs(int8_outputs(q[0], q[J - 1], range), bytes, output + at);
  }
}

// Requantizes and stores (or, for the logits, adds the bias to) the
// accumulators of MR pixels x J blocks; pixels past `valid` are not stored.
template <int MR, int J>
__attribute__((always_inline)) inline void store_block(const __m256i (&acc)[MR][J], int64_t first_pixel, int64_t valid,
                                                       int64_t first_block, const ChannelVectors* v,
                                                       const ConvGeometry& g, const EpilogueTables& e, int8_t* output,
                                                       int32_t* logits) {
  const int64_t out_c = g.out_c;
  const bool wide_skip = e.skip_bits > 8;
  if (starts_at_bias(e, output)) return store_int8_block<MR, J>(acc, first_pixel, valid, first_block, v, g, e, output);
#pragma GCC unroll 4
  for (int j = 0; j < J; ++j) {
    const int64_t channel = (first_block + j) * kBlock, lanes = min64(kBlock, out_c - channel);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      if (r >= valid) break;
      const int64_t at = (first_pixel + r) * out_c + channel;
      const int8_t* skip = e.skip ? e.skip + at * (wide_skip ? 2 : 1) : nullptr;  // its bytes
      if (output) {  // wide: int8 outputs were stored above
        store_int16(acc[r][j], v[j], skip, wide_skip, e.lo, e.hi, lanes, reinterpret_cast<int16_t*>(output) + at);
      } else {
        const __m256i sum = _mm256_add_epi32(acc[r][j], v[j].bias);
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
// (from readable memory) but not stored; `v`: the blocks' epilogue operands.
// Dilated: g.dilation > 1 (a template argument, so that the undilated loop
// stays as tight as it was).
template <typename V, int MR, int J, bool Dilated>
inline void register_block(const typename V::Act* a, const Layout& l, const typename V::Weight* w, int64_t block_values,
                           int64_t first_pixel, int64_t valid, int64_t first_block, const ChannelVectors* v,
                           const ConvGeometry& g, const EpilogueTables& e, int8_t* output, int32_t* logits) {
  __m256i acc[MR][J];
  const bool biased = starts_at_bias(e, output);
#pragma GCC unroll 4
  for (int j = 0; j < J; ++j) {
    const __m256i start = biased ? v[j].bias : _mm256_setzero_si256();
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) acc[r][j] = start;
  }
  // A kernel row's taps are one run of adjacent values; a dilated conv's, one run per tap.
  const int64_t runs = Dilated ? g.kernel_w : 1, run_words = (Dilated ? l.cp : g.kernel_w * l.cp) / V::kGroup;
  const int64_t run_stride = g.dilation * l.cp, ps = l.pixel_stride;
  for (int ky = 0; ky < g.kernel; ++ky, a += (Dilated ? g.dilation : 1) * l.row_stride) {
    for (int64_t run = 0; run < runs; ++run) {
      const typename V::Act* a_run = a + run * run_stride;
      for (int64_t s = 0; s < run_words; ++s, w += V::kGroup * kBlock) {
        __m256i b[J];
#pragma GCC unroll 4
        for (int j = 0; j < J; ++j) b[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + j * block_values));
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          int32_t word;
          std::memcpy(&word, a_run + r * ps + s * V::kGroup, 4);
          const __m256i x = _mm256_set1_epi32(word);
#pragma GCC unroll 4
          for (int j = 0; j < J; ++j) acc[r][j] = _mm256_add_epi32(acc[r][j], V::madd(x, b[j]));
        }
      }
    }
  }
  store_block<MR, J>(acc, first_pixel, valid, first_block, v, g, e, output, logits);
}

// One group of J blocks over `lines` lines of `count` pixels, line i's
// receptive fields at line_start[i], their outputs from pixel first_pixel +
// i * count on; MR pixels per register block.
template <typename V, int MR, int J, bool Dilated>
void group_lines(const typename V::Act* const* line_start, int64_t lines, int64_t first_pixel, int64_t count,
                 const Layout& l, const typename V::Weight* blocked, int64_t first_block, const ConvGeometry& g,
                 const EpilogueTables& e, bool narrow, int8_t* output, int32_t* logits) {
  const int64_t block_values = g.kernel * g.kernel_w * l.cp * kBlock;
  const typename V::Weight* w = blocked + first_block * block_values;
  ChannelVectors v[J];
  for (int j = 0; j < J; ++j) v[j] = ChannelVectors(e, (first_block + j) * kBlock, narrow);
  for (int64_t line = 0; line < lines; ++line, first_pixel += count)
    for (int64_t r = 0; r < count; r += MR)
      register_block<V, MR, J, Dilated>(line_start[line] + r * l.pixel_stride, l, w, block_values, first_pixel + r,
                                        count - r, first_block, v, g, e, output, logits);
}

// The lines of group_lines, output blocks [first_block, end_block)
// (first_block even; end_block too, or the last block). Column groups
// outside, lines inside: a group's weights stay in L1/L2 while every line
// reads them.
template <typename V, bool Dilated>
void lines_columns(const typename V::Act* const* line_start, int64_t lines, int64_t first_pixel, int64_t count,
                   const Layout& l, const typename V::Weight* blocked, int64_t first_block, int64_t end_block,
                   const ConvGeometry& g, const EpilogueTables& e, bool narrow, int8_t* output, int32_t* logits) {
  const int64_t blocks = end_block;
  int64_t block = first_block;
  for (; block + 2 <= blocks; block += 2)
    group_lines<V, 4, 2, Dilated>(line_start, lines, first_pixel, count, l, blocked, block, g, e, narrow, output,
                                  logits);
  if (block < blocks)
    group_lines<V, 8, 1, Dilated>(line_start, lines, first_pixel, count, l, blocked, block, g, e, narrow, output,
                                  logits);
}

// Task t of `shares`: the input rows (or pixels) it reads padded and copied
// into `buffer` (task_values), then its outputs computed from there, so that
// what a task reads stays in cache. Input rows are copied image by image.
template <typename V, typename In>
void run_task(const ConvGeometry& g, const Layout& l, const In* input, const PixelTasks::Span& span,
              const typename V::Weight* blocked, int64_t first_block, int64_t end_block, const EpilogueTables& e,
              bool narrow, typename V::Act* buffer, int8_t* output, int32_t* logits) {
  using Act = typename V::Act;
  if (l.one_line) {
    const int64_t first = span.first, count = span.count;
    gather_pixels(g, input, first, count, l.cp, buffer);
    std::memset(buffer + count * l.cp, 0, static_cast<size_t>(l.slack) * sizeof(Act));
    const Act* line_start[1] = {buffer};
    return lines_columns<V, false>(line_start, 1, first, count, l, blocked, first_block, end_block, g, e, narrow,
                                   output, logits);
  }
  const Act* line_start[kPixelsPerTask];
  const int64_t first_line = span.first_line, end = span.end_line;
  Act* rows_end = buffer;
  for (int64_t line = first_line; line < end;) {  // the lines of one image
    const int64_t b = line / g.out_h, oy = line % g.out_h, lines = min64(end - line, g.out_h - oy);
    const int64_t rows = (lines - 1) * g.stride + l.span;
    for (int64_t r = 0; r < rows; ++r) pad_row(g, l, input, b, oy * g.stride + r, rows_end + r * l.row_stride);
    for (int64_t i = 0; i < lines; ++i) line_start[line - first_line + i] = rows_end + i * g.stride * l.row_stride;
    rows_end += rows * l.row_stride;
    line += lines;
  }
  std::memset(rows_end, 0, static_cast<size_t>(l.slack) * sizeof(Act));
  const auto columns = g.dilation == 1 ? lines_columns<V, false> : lines_columns<V, true>;
  columns(line_start, end - first_line, first_line * l.line_pixels, l.line_pixels, l, blocked, first_block, end_block,
          g, e, narrow, output, logits);
}

// The conv with values laid out as V says.
template <typename V, typename In>
void conv2d_with(const ConvGeometry& g, const In* input, const typename V::Weight* blocked, const EpilogueTables& e,
                 uint8_t* workspace, int8_t* output, int32_t* logits) {
  const Layout l = layout(g, V::kGroup);
  const int64_t macs = g.rows() * g.out_c * g.depth();
  const bool narrow = output && narrow_is_exact(g.depth(), g.out_c, e);
  const bool parallel = macs >= min_parallel_work(kMinParallelMacsSpinning, kMinParallelMacsSleeping);
  const int64_t threads = omp_get_max_threads();
  // A 1x1 conv's one line in runs of register blocks, other convs' output rows in runs of lines.
  const PixelTasks shares = l.one_line ? PixelTasks::of_blocks(1, l.line_pixels, kMaxBlockPixels,
                                                               kPixelsPerTask / kMaxBlockPixels, parallel ? threads : 1)
                                       : PixelTasks::of_lines(g.batch * g.out_h, l.line_pixels, l.lines_per_task,
                                                              parallel ? threads : 1);
  const int64_t tasks = shares.count();
  // Too few pixels for two tasks per thread (a small image at a small
  // batch): the output channels' pairs of blocks are shared out too, each
  // unit copying its task's rows.
  const int64_t blocks = (g.out_c + kBlock - 1) / kBlock, groups = (blocks + 1) / 2;
  const int64_t splits = !parallel || tasks >= 2 * threads ? 1 : min64(groups, (2 * threads + tasks - 1) / tasks);
  const auto task = [&](int64_t u, typename V::Act* buffer) {
    const int64_t split = u % splits;
    const int64_t first_block = split * groups / splits * 2;
    const int64_t end_block = min64(blocks, (split + 1) * groups / splits * 2);
    run_task<V, In>(g, l, input, shares.span(u / splits), blocked, first_block, end_block, e, narrow, buffer, output,
                    logits);
  };
  auto* buffers = reinterpret_cast<typename V::Act*>(workspace);
  if (!parallel) {  // no region for one thread (idle_threads.h)
    for (int64_t u = 0; u < tasks * splits; ++u) task(u, buffers);
    return;
  }
#pragma omp parallel
  {
    typename V::Act* buffer = buffers + omp_get_thread_num() * l.task_values;
#pragma omp for schedule(dynamic) nowait  // the region's end is the one barrier
    for (int64_t u = 0; u < tasks * splits; ++u) task(u, buffer);
  }
}

}  // namespace

// The int16 layout's buffer is the larger: its values take 2 bytes, and its
// channels pad to 2 (the uint8 layout's to 4 of 1 byte).
int64_t workspace_bytes(const ConvGeometry& g) {
  return layout(g, Int16Pairs::kGroup).task_values * 2 * omp_get_max_threads();
}

void conv2d(const ConvGeometry& g, const int8_t* input, const int16_t* blocked_pairs, const int8_t* blocked_quads,
            const EpilogueTables& e, uint8_t* workspace, int8_t* output, int32_t* logits) {
  if (g.input_bits > 8)
    return conv2d_with<Int16Pairs>(g, reinterpret_cast<const int16_t*>(input), blocked_pairs, e, workspace, output,
                                   logits);
  if (g.input_zero_point != 0 || any_negative(input, g.batch * g.in_h * g.in_w * g.in_c))
    return conv2d_with<Int16Pairs>(g, input, blocked_pairs, e, workspace, output, logits);
  conv2d_with<UnsignedQuads>(g, input, blocked_quads, e, workspace, output, logits);
}

}  // namespace octet::cpu::avx2
