// AVX-512 VNNI convolution as a direct implicit GEMM. The input is first
// copied once into a padded image (int8 activations as u8, + 128; a wide
// input's int16 values as they are; a zero-point border of `padding` pixels,
// channels rounded up to a whole 4-byte word), so that the receptive field of
// output pixel x in kernel row ky is one contiguous run of kernel_w * channels
// values, and the runs of neighbouring pixels of one output row lie at a
// constant stride. A register block of MR such pixels x J blocks of 16 output
// channels then accumulates with one vpdpbusd (4 u8 x s8; for a wide input
// vpdpwssd, 2 int16 x int16) per (pixel, block) per word of the run, reading
// the padded image in place (no im2col buffer), and the epilogue requantizes
// in registers (into int8, or int16 for a wide output). A 3x3, stride-1 conv
// broadcasts each input word once for the three output pixels that read it.
// A 1x1 unpadded conv is not copied whole first: each task copies the input
// pixels its outputs read (at stride 2 a quarter of the image), which stay in
// cache. Threads share out runs of output rows (of pixels for a 1x1 conv or a
// linear layer; pixel_tasks.h), and groups of 64 output channels where there
// are too few of those; the k input rows an output row reads stay in L1.
//
// This file is compiled with AVX-512 flags. Everything in it has internal
// linkage or is called only after the run-time CPU check, and it instantiates
// no template or inline function shared with other files (those could be
// emitted with AVX-512 code and picked by the linker for baseline callers).
#include "runtime/cpu/conv_vnni.h"

// GCC 12 reports the "undefined" vectors inside its own AVX-512 intrinsics as
// maybe-uninitialized (GCC bug 105593). Clang (the fuzz build) has no such
// warning and would warn about the pragma.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#include <omp.h>

#include <cstring>

#include "runtime/cpu/epilogue_avx512.h"
#include "runtime/cpu/idle_threads.h"
#include "runtime/cpu/pixel_tasks.h"

namespace octet::cpu::vnni {

namespace {

constexpr uint8_t kFlip = 0x80;  // x ^ kFlip is int8 x + 128 as u8 (and fills what zero weights read)
constexpr int64_t kMaxBlockPixels = 16;  // the largest MR below
// Output pixels per unit of work shared among threads.
constexpr int64_t kPixelsPerTask = 256;
constexpr int64_t kMinPixelsPerTask = 16;  // the fewest where a 1x1 conv's pixels are shared out instead
// Smaller convolutions (multiply-adds) run on the calling thread: starting
// the other threads would cost more than they save. Where idle threads sleep
// (idle_threads.h) that is tens of microseconds (ResNet-20 at batch 1 ran 12x
// slower on 2 threads with 2^21 here); where they spin, about one, and
// MobileNetV2's layers at batch 64, 1-16 M multiply-adds each, ran 1.2-1.6x
// faster shared. Each output's requantization counts as kEpilogueMacs of
// them, as for the depthwise kernels: a shallow conv (a 3-channel stem, a
// 16-channel expansion) is mostly epilogue.
constexpr int64_t kMinParallelMacsSpinning = int64_t{1} << 20;
constexpr int64_t kMinParallelMacsSleeping = int64_t{1} << 24;
constexpr int64_t kEpilogueMacs = 16;

int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// Where the padded image is read: pixel m of `line` starts at
// base + line_offset(line) + m * pixel_stride. All in bytes.
struct Layout {
  int64_t cp;            // a pixel's channels, padded to a whole 4-byte word
  int64_t hp, wp;        // padded image size
  int64_t lines;         // output rows (or 1 for a 1x1 / stride 1 / unpadded conv: all pixels in one line)
  int64_t line_pixels;   // output pixels per line
  int64_t pixel_stride;  // bytes between the receptive fields of neighbouring pixels
  int64_t row_stride;    // bytes between kernel rows (ky)
  int64_t image_bytes;   // the padded image, without the slack after it
  int64_t line_offset(const ConvGeometry& g, int64_t line) const {
    if (lines == 1) return 0;
    const int64_t b = line / g.out_h, oy = line % g.out_h;
    return (b * hp + oy * g.stride) * row_stride;
  }
};

Layout layout(const ConvGeometry& g) {
  Layout l;
  const int64_t value_bytes = g.input_bits > 8 ? 2 : 1;
  l.cp = (g.in_c * value_bytes + 3) / 4 * 4;
  l.hp = g.in_h + 2 * g.padding;
  l.wp = g.in_w + 2 * g.padding;
  l.row_stride = l.wp * l.cp;
  const bool one_line = g.one_to_one();  // its tasks copy each output pixel's input pixel, cp bytes apart
  l.pixel_stride = one_line ? l.cp : g.stride * l.cp;
  l.lines = one_line ? 1 : g.batch * g.out_h;
  l.line_pixels = one_line ? g.batch * g.out_h * g.out_w : g.out_w;
  l.image_bytes = g.batch * l.hp * l.row_stride;
  return l;
}

// dst[i] = src[i] + 128 as u8, for n bytes. Whole vectors where it can (the
// spans of 16, 32 or 64 channels), a masked one for the tail.
inline void copy_offset(const int8_t* src, int64_t n, uint8_t* dst) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(kFlip));
  int64_t i = 0;
  for (; i + 64 <= n; i += 64)
    _mm512_storeu_si512(dst + i, _mm512_xor_si512(_mm512_loadu_si512(src + i), flip));
  if (i + 32 <= n) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)),
                                         _mm512_castsi512_si256(flip)));
    i += 32;
  }
  if (i + 16 <= n) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)),
                                   _mm512_castsi512_si128(flip)));
    i += 16;
  }
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>(_bzhi_u32(~0u, static_cast<unsigned>(n - i)));
    _mm_mask_storeu_epi8(dst + i, m, _mm_xor_si128(_mm_maskz_loadu_epi8(m, src + i), _mm512_castsi512_si128(flip)));
  }
}

// n pixels of g.in_c values from `src` to `dst`, l.cp bytes apart, as the
// kernels read them: int8 + 128, int16 as they are; a padding channel reads
// as 0 (its weights are 0).
void copy_pixels(const ConvGeometry& g, const Layout& l, const int8_t* src, int64_t n, uint8_t* dst) {
  const int64_t c = g.in_c;
  if (c == l.cp) return copy_offset(src, n * c, dst);
  for (int64_t x = 0; x < n; ++x) {
    copy_offset(src + x * c, c, dst + x * l.cp);
    std::memset(dst + x * l.cp + c, kFlip, static_cast<size_t>(l.cp - c));
  }
}
void copy_pixels(const ConvGeometry& g, const Layout& l, const int16_t* src, int64_t n, uint8_t* dst) {
  const int64_t bytes = g.in_c * int64_t{sizeof(int16_t)};
  if (bytes == l.cp) {
    std::memcpy(dst, src, static_cast<size_t>(n * bytes));
    return;
  }
  for (int64_t x = 0; x < n; ++x) {
    std::memcpy(dst + x * l.cp, src + x * g.in_c, static_cast<size_t>(bytes));
    std::memset(dst + x * l.cp + bytes, 0, static_cast<size_t>(l.cp - bytes));
  }
}

// The input pixels of a 1x1 unpadded conv's output pixels [first, first + n)
// to `dst` as copy_pixels writes them: one run of them at stride 1.
template <typename In>
void gather_pixels(const ConvGeometry& g, const Layout& l, const In* input, int64_t first, int64_t n,
                   uint8_t* dst) {
  if (g.stride == 1) return copy_pixels(g, l, input + first * g.in_c, n, dst);
  for (int64_t m = first; m < first + n; ++m, dst += l.cp) {
    const int64_t b = m / (g.out_h * g.out_w), oy = m / g.out_w % g.out_h, ox = m % g.out_w;
    copy_pixels(g, l, input + ((b * g.in_h + oy * g.stride) * g.in_w + ox * g.stride) * g.in_c, 1, dst);
  }
}

// n pixels of real zeros (activation_offset) at `dst`.
void fill_zeros(const ConvGeometry& g, const Layout& l, const int8_t*, int64_t n, uint8_t* dst) {
  std::memset(dst, static_cast<int>(activation_offset(g)), static_cast<size_t>(n * l.cp));
}
void fill_zeros(const ConvGeometry& g, const Layout& l, const int16_t*, int64_t n, uint8_t* dst) {
  const auto zero = static_cast<int16_t>(activation_offset(g));
  auto* words = reinterpret_cast<int16_t*>(dst);
  for (int64_t i = 0; i < n * l.cp / 2; ++i) words[i] = zero;  // not std::fill_n: see the file comment
}

// Padded row `py` of image b: real zeros in the border, the row's pixels copied.
template <typename In>
void pad_row(const ConvGeometry& g, const Layout& l, const In* input, int64_t b, int64_t py, uint8_t* padded) {
  uint8_t* dst = padded + (b * l.hp + py) * l.row_stride;
  const int64_t iy = py - g.padding;
  if (iy < 0 || iy >= g.in_h) return fill_zeros(g, l, input, l.wp, dst);
  fill_zeros(g, l, input, g.padding, dst);
  fill_zeros(g, l, input, g.padding, dst + (l.wp - g.padding) * l.cp);
  copy_pixels(g, l, input + (b * g.in_h + iy) * g.in_w * g.in_c, g.in_w, dst + g.padding * l.cp);
}

// One word of activations against one word of weights of 16 channels, added
// to acc: 4 u8 x s8 products, or 2 int16 x int16 for a wide input.
template <bool Wide>
__attribute__((always_inline)) inline __m512i dot(__m512i acc, __m512i x, __m512i w) {
  if constexpr (Wide)
    return _mm512_dpwssd_epi32(acc, x, w);
  else
    return _mm512_dpbusd_epi32(acc, x, w);
}

// Where a conv's register blocks put their results: exactly one of `output`
// (requantized) and `logits` (int32 accumulators + bias) is non-null.
struct Outputs {
  const EpilogueTables& e;
  const ChannelVectors* vectors;  // one per block of 16 output channels (EpilogueTables::vectors)
  int8_t* output;
  int32_t* logits;
};

// Whether the register blocks' sums start at the bias: for requantized
// outputs, whose epilogue (store_outputs_block) then skips its add.
inline bool starts_at_bias(const Outputs& out) { return out.output != nullptr; }

// store_block's requantized outputs (of sums that include the bias): each
// pixel's J blocks packed into one vector of int8 (int8_outputs) or two
// blocks at a time into one of int16 (int16_outputs) and stored at once.
template <bool WideOut, int MR, int J>
__attribute__((always_inline)) inline void store_outputs_block(const __m512i (&acc)[MR][J], int64_t first_pixel,
                                                               int64_t valid, int64_t first_block,
                                                               const ConvGeometry& g, const Outputs& out) {
  const EpilogueTables& e = out.e;
  const int64_t out_c = g.out_c, channel = first_block * kBlock, values = min64(out_c - channel, J * kBlock);
  const bool wide_skip = e.skip_bits > 8;
  // Read where they are: each is read once per pixel anyway (the J blocks'
  // vectors do not fit in registers), so copies would only add stores.
  const ChannelVectors* v = out.vectors + first_block;
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r) {
    if (r >= valid) break;
    const int64_t at = (first_pixel + r) * out_c + channel;
    __m512i q[J];
#pragma GCC unroll 4
    for (int j = 0; j < J; ++j) {
      if (!e.skip) {
        q[j] = scaled_biased(acc[r][j], v[j], nullptr);
        continue;
      }
      const __m512i s = skip_lanes(e.skip + (at + j * kBlock) * (wide_skip ? 2 : 1), wide_skip,
                                   lane_mask(out_c - channel - j * kBlock));
      q[j] = scaled_biased(acc[r][j], v[j], &s);
    }
    if constexpr (!WideOut) {
      store_int8_outputs<J>(int8_outputs(q, Int8Range(e)), values, out.output + at);
    } else {
      auto* words = reinterpret_cast<int16_t*>(out.output) + at;
#pragma GCC unroll 2
      for (int j = 0; j < J; j += 2)
        store_int16_outputs(int16_outputs(q[j], q[j + 1 < J ? j + 1 : j], Int16Range(e)), values - j * kBlock,
                            words + j * kBlock);
    }
  }
}

// Requantizes and stores (or, for the logits, adds the bias to) the
// accumulators of MR pixels x J blocks; pixels past `valid` are not stored.
template <int MR, int J>
__attribute__((always_inline)) inline void store_block(const __m512i (&acc)[MR][J], int64_t first_pixel,
                                                       int64_t valid, int64_t first_block, const ConvGeometry& g,
                                                       const Outputs& out) {
  if (starts_at_bias(out) && out.e.bits > 8)
    return store_outputs_block<true, MR, J>(acc, first_pixel, valid, first_block, g, out);
  if (starts_at_bias(out)) return store_outputs_block<false, MR, J>(acc, first_pixel, valid, first_block, g, out);
  const int64_t out_c = g.out_c;
#pragma GCC unroll 4
  for (int j = 0; j < J; ++j) {
    const int64_t channel = (first_block + j) * kBlock;
    const __mmask16 mask = lane_mask(out_c - channel);
    const __m512i bias = out.vectors[first_block + j].bias;
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
      if (r >= valid) break;
      _mm512_mask_storeu_epi32(out.logits + (first_pixel + r) * out_c + channel, mask, _mm512_add_epi32(acc[r][j], bias));
    }
  }
}

// The register block's sums before the first product: the bias where
// starts_at_bias, else 0.
template <int MR, int J>
__attribute__((always_inline)) inline void start_sums(__m512i (&acc)[MR][J], int64_t first_block, const Outputs& out) {
  const bool biased = starts_at_bias(out);
#pragma GCC unroll 4
  for (int j = 0; j < J; ++j) {
    const __m512i start = biased ? out.vectors[first_block + j].bias : _mm512_setzero_si512();
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) acc[r][j] = start;
  }
}

// MR pixels of one line x J blocks of 16 channels. `a`: the receptive field
// of the first pixel; `w`: the first block; pixels past `valid` are computed
// (from readable memory) but not stored.
template <bool Wide, int MR, int J>
inline void register_block(const uint8_t* a, const Layout& l, const int8_t* w, int64_t block_bytes,
                           int64_t first_pixel, int64_t valid, int64_t first_block, const ConvGeometry& g,
                           const Outputs& out) {
  __m512i acc[MR][J];
  start_sums<MR, J>(acc, first_block, out);
  const int64_t run_steps = g.kernel_w * l.cp / 4, ps = l.pixel_stride;
  for (int ky = 0; ky < g.kernel; ++ky, a += l.row_stride) {
    for (int64_t s = 0; s < run_steps; ++s, w += 64) {
      __m512i b[J];
#pragma GCC unroll 4
      for (int j = 0; j < J; ++j) b[j] = _mm512_loadu_si512(w + j * block_bytes);
#pragma GCC unroll 32
      for (int r = 0; r < MR; ++r) {
        int32_t quad;
        std::memcpy(&quad, a + r * ps + s * 4, 4);
        const __m512i x = _mm512_set1_epi32(quad);
#pragma GCC unroll 4
        for (int j = 0; j < J; ++j) acc[r][j] = dot<Wide>(acc[r][j], x, b[j]);
      }
    }
  }
  store_block<MR, J>(acc, first_pixel, valid, first_block, g, out);
}

// register_block for a 3x3, stride-1 conv. Neighbouring output pixels read
// overlapping input pixels there, so each input quad is broadcast once and
// multiplied by the three kx weights it meets (one load per ~2.5 vpdpbusd
// instead of per one or two: the few-channel layers were load-bound).
template <bool Wide, int MR, int J>
inline void register_block_3x3(const uint8_t* a, const Layout& l, const int8_t* w, int64_t block_bytes,
                               int64_t first_pixel, int64_t valid, int64_t first_block, const ConvGeometry& g,
                               const Outputs& out) {
  __m512i acc[MR][J];
  start_sums<MR, J>(acc, first_block, out);
  const int64_t quads = l.cp / 4, cp = l.cp;
  for (int ky = 0; ky < 3; ++ky, a += l.row_stride, w += 3 * quads * 64) {
    for (int64_t c4 = 0; c4 < quads; ++c4) {
      __m512i b[3][J];
#pragma GCC unroll 3
      for (int kx = 0; kx < 3; ++kx)
#pragma GCC unroll 4
        for (int j = 0; j < J; ++j) b[kx][j] = _mm512_loadu_si512(w + (kx * quads + c4) * 64 + j * block_bytes);
#pragma GCC unroll 40
      for (int i = 0; i < MR + 2; ++i) {  // input pixel i feeds output pixel i - kx
        int32_t quad;
        std::memcpy(&quad, a + i * cp + c4 * 4, 4);
        const __m512i x = _mm512_set1_epi32(quad);
#pragma GCC unroll 3
        for (int kx = 0; kx < 3; ++kx) {
          const int r = i - kx;
          if (r < 0 || r >= MR) continue;
#pragma GCC unroll 4
          for (int j = 0; j < J; ++j) acc[r][j] = dot<Wide>(acc[r][j], x, b[kx][j]);
        }
      }
    }
  }
  store_block<MR, J>(acc, first_pixel, valid, first_block, g, out);
}

// Where the kernels read the padded input: pixel m of `line` at base +
// l.line_offset(line) + (m - first_stored) * l.pixel_stride (first_stored: 0
// for the whole padded image, a task's first pixel for its own copy).
struct Source {
  const uint8_t* base;
  int64_t first_stored;
};

// Pixels [first, first + count) of `line` against blocks [first_block, first_block + J).
template <bool Wide, int MR, int J, bool k3s1 = false>
void line_columns(Source in, const Layout& l, int64_t line, int64_t first, int64_t count, const int8_t* blocked,
                  int64_t first_block, const ConvGeometry& g, const Outputs& out) {
  const int64_t block_bytes = g.kernel * g.kernel_w * l.cp * kBlock;
  const int8_t* w = blocked + first_block * block_bytes;
  const uint8_t* a = in.base + l.line_offset(g, line) + (first - in.first_stored) * l.pixel_stride;
  const int64_t first_pixel = line * l.line_pixels + first;
  for (int64_t r = 0; r < count; r += MR)
    if constexpr (k3s1)
      register_block_3x3<Wide, MR, J>(a + r * l.pixel_stride, l, w, block_bytes, first_pixel + r, count - r,
                                      first_block, g, out);
    else
      register_block<Wide, MR, J>(a + r * l.pixel_stride, l, w, block_bytes, first_pixel + r, count - r, first_block,
                                  g, out);
}

// One group of J blocks over lines [first_line, end_line): MR pixels per
// register block, MR3 for a 3x3 stride-1 conv (as many as the registers left
// by J blocks' accumulators and three kx weights hold).
template <bool Wide, int J, int MR, int MR3>
void group_lines(Source in, const Layout& l, int64_t first_line, int64_t end_line, int64_t first, int64_t count,
                 const int8_t* blocked, int64_t block, const ConvGeometry& g, const Outputs& out) {
  const bool k3s1 = g.kernel == 3 && g.kernel_w == 3 && g.stride == 1;
  for (int64_t line = first_line; line < end_line; ++line)
    if (k3s1)
      line_columns<Wide, MR3, J, true>(in, l, line, first, count, blocked, block, g, out);
    else
      line_columns<Wide, MR, J>(in, l, line, first, count, blocked, block, g, out);
}

// Pixels [first, first + count) of lines [first_line, end_line), output
// blocks [first_block, end_block) (first_block a multiple of 4; end_block
// too, or the last block). Column groups outside, lines inside: a group's
// weights (up to 64 channels x the receptive field) stay in L2 while every
// line reads them; the late layers of ResNet-18 have lines of 4 pixels and
// 2.4 MB of weights.
template <bool Wide>
void lines_columns(Source in, const Layout& l, int64_t first_line, int64_t end_line, int64_t first, int64_t count,
                   const int8_t* blocked, int64_t first_block, int64_t end_block, const ConvGeometry& g,
                   const Outputs& out) {
  int64_t block = first_block;
  for (; block + 4 <= end_block; block += 4)
    group_lines<Wide, 4, 4, 4>(in, l, first_line, end_line, first, count, blocked, block, g, out);
  const auto tail = end_block - block == 3   ? group_lines<Wide, 3, 8, 6>
                    : end_block - block == 2 ? group_lines<Wide, 2, 8, 8>
                    : end_block - block == 1 ? group_lines<Wide, 1, 8, 16>
                                             : nullptr;
  if (tail) tail(in, l, first_line, end_line, first, count, blocked, block, g, out);
}

// Bytes read past the last pixel of a line: its last register block
// computes up to MR pixels past the end.
int64_t slack_bytes(const ConvGeometry& g, const Layout& l) {
  return (kMaxBlockPixels * g.stride + g.kernel_w) * l.cp + 64;
}

// A 1x1 unpadded conv's task (up to kPixelsPerTask pixels) copies its pixels'
// inputs into its thread's part of the workspace, where they stay in cache,
// instead of the whole image being copied first (through memory).
int64_t task_bytes(const ConvGeometry& g, const Layout& l) { return kPixelsPerTask * l.cp + slack_bytes(g, l); }

}  // namespace

int64_t workspace_bytes(const ConvGeometry& g) {
  const Layout l = layout(g);
  if (g.one_to_one()) return omp_get_max_threads() * task_bytes(g, l);
  return l.image_bytes + slack_bytes(g, l);
}

namespace {

// The conv of an int8 (Wide: int16) input; `blocked` the weights' bytes.
template <bool Wide, typename In>
void conv2d_with(const ConvGeometry& g, const In* input, const int8_t* blocked, const EpilogueTables& e,
                 uint8_t* workspace, int8_t* output, int32_t* logits) {
  const Layout l = layout(g);
  const bool own_copies = g.one_to_one();  // tasks copy their pixels' inputs (task_bytes)
  if (!own_copies) std::memset(workspace + l.image_bytes, kFlip, static_cast<size_t>(slack_bytes(g, l)));
  const int64_t macs = g.rows() * g.out_c * (g.depth() + kEpilogueMacs);
  const bool parallel = macs >= min_parallel_work(kMinParallelMacsSpinning, kMinParallelMacsSleeping);
  const int64_t blocks = (g.out_c + kBlock - 1) / kBlock, groups = (blocks + 3) / 4;
  const int64_t threads = omp_get_max_threads();
  // Pixels per task: kPixelsPerTask, or for a 1x1 conv with too few of
  // those for two per thread and too few groups of 64 output channels to share
  // evenly instead, an equal share, down to kMinPixelsPerTask (CIFAR
  // MobileNetV2's 2x2 projections at batch 64: 256 pixels, 80 channels in
  // groups of 64 + 16, so one thread did 80%).
  int64_t task_pixels = kPixelsPerTask;
  if (parallel && own_copies && groups < 2 * threads && l.line_pixels >= 2 * threads * kMinPixelsPerTask)
    task_pixels = min64(kPixelsPerTask, (l.line_pixels + 2 * threads - 1) / (2 * threads));
  // Whole lines where lines are short, runs of register blocks of each line otherwise.
  const PixelTasks shares =
      l.line_pixels >= task_pixels
          ? PixelTasks::of_blocks(l.lines, l.line_pixels, kMaxBlockPixels, task_pixels / kMaxBlockPixels,
                                  parallel ? threads : 1)
          : PixelTasks::of_lines(l.lines, l.line_pixels, task_pixels / l.line_pixels, parallel ? threads : 1);
  const int64_t tasks = shares.count();
  // Still too few tasks for two per thread (a small image at a small batch:
  // ResNet-50's 14x14 and 7x7 layers at batch 1 were one task): the output
  // channels' groups of 64 are shared out too.
  const int64_t splits = !parallel || tasks >= 2 * threads ? 1 : min64(groups, (2 * threads + tasks - 1) / tasks);
  const Outputs out{e, channel_vectors(e), output, logits};
  const int64_t pad_rows = own_copies ? 0 : g.batch * l.hp;
  const auto pad = [&](int64_t row) { pad_row(g, l, input, row / l.hp, row % l.hp, workspace); };
  // Task u, with `own` the thread's part of the workspace (own_copies).
  const auto task = [&](int64_t u, uint8_t* own) {
    const int64_t t = u / splits, split = u % splits;
    const int64_t first_block = split * groups / splits * 4;
    const int64_t end_block = min64(blocks, (split + 1) * groups / splits * 4);
    const PixelTasks::Span span = shares.span(t);
    const int64_t line = span.first_line, end_line = span.end_line, first = span.first, count = span.count;
    Source in{workspace, 0};
    if (own_copies) {  // one line
      gather_pixels(g, l, input, first, count, own);
      // What the last register block reads past them (not the whole rest of
      // the copy: at batch 1 a 2x2 image's task set 80 KB for 4 pixels).
      std::memset(own + count * l.cp, kFlip, static_cast<size_t>(slack_bytes(g, l)));
      in = Source{own, first};
    }
    lines_columns<Wide>(in, l, line, end_line, first, count, blocked, first_block, end_block, g, out);
  };
  if (!parallel) {  // no region for one thread (idle_threads.h)
    for (int64_t row = 0; row < pad_rows; ++row) pad(row);
    for (int64_t u = 0; u < tasks * splits; ++u) task(u, workspace);
    return;
  }
  // The tasks' loop ends without a barrier (nowait): the region's end waits
  // for all threads anyway.
#pragma omp parallel
  {
    if (pad_rows > 0) {
#pragma omp for schedule(dynamic, 32)
      for (int64_t row = 0; row < pad_rows; ++row) pad(row);
    }
    uint8_t* own = workspace + (own_copies ? omp_get_thread_num() * task_bytes(g, l) : 0);
#pragma omp for schedule(dynamic) nowait
    for (int64_t u = 0; u < tasks * splits; ++u) task(u, own);
  }
}

}  // namespace

void conv2d(const ConvGeometry& g, const int8_t* input, const int8_t* blocked, const EpilogueTables& e,
            uint8_t* workspace, int8_t* output, int32_t* logits) {
  conv2d_with<false>(g, input, blocked, e, workspace, output, logits);
}

void conv2d(const ConvGeometry& g, const int16_t* input, const int16_t* blocked_wide, const EpilogueTables& e,
            uint8_t* workspace, int8_t* output, int32_t* logits) {
  conv2d_with<true>(g, input, reinterpret_cast<const int8_t*>(blocked_wide), e, workspace, output, logits);
}

}  // namespace octet::cpu::vnni
