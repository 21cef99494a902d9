// The int8 convolution (and the linear layer, a 1x1 convolution): the
// portable reference path, and the dispatch to the AVX2 and AVX-512 VNNI
// kernels.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/requantize.h"
#include "runtime/cpu/conv_avx2.h"
#include "runtime/cpu/conv_epilogue.h"
#include "runtime/cpu/conv_vnni.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
// Output rows handled per task; the patch buffer of a task stays in L2.
constexpr int64_t kRowsPerTask = 64;

// Copies the receptive field of output row m (kernel x kernel_w x C; a real 0, the
// input's zero point, outside the image). In: int8, or int16 for a wide input.
template <typename In>
void gather_patch(const ConvGeometry& g, const In* input, int64_t m, In* patch) {
  const int64_t ox = m % g.out_w, oy = (m / g.out_w) % g.out_h, b = m / (int64_t(g.out_w) * g.out_h);
  for (int64_t ky = 0; ky < g.kernel; ++ky) {
    const int64_t iy = oy * g.stride - g.padding + ky * g.dilation;
    for (int64_t kx = 0; kx < g.kernel_w; ++kx, patch += g.in_c) {
      const int64_t ix = ox * g.stride - g.padding + kx * g.dilation;
      if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w)
        std::fill(patch, patch + g.in_c, static_cast<In>(g.input_zero_point));
      else
        std::copy_n(input + ((b * g.in_h + iy) * g.in_w + ix) * g.in_c, g.in_c, patch);
    }
  }
}

template <typename In>
int32_t dot(const In* a, const int8_t* b, int64_t n) {
  int32_t acc = 0;
  for (int64_t k = 0; k < n; ++k) acc += int32_t(a[k]) * int32_t(b[k]);
  return acc;
}

// Runs `body(m, patch)` for every output row, in parallel tasks with a patch buffer each.
template <typename In, typename Body>
void for_each_patch(const ConvGeometry& g, const In* input, Body body) {
  const int64_t rows = g.rows(), depth = g.depth();
  const bool direct = g.pointwise();  // the input row is the patch
#pragma omp parallel if (share_work(rows * depth * g.out_c >= kMinParallelWork))
  {
    std::vector<In> patch(static_cast<size_t>(depth));
#pragma omp for schedule(static)
    for (int64_t first = 0; first < rows; first += kRowsPerTask) {
      const int64_t end = std::min(rows, first + kRowsPerTask);
      for (int64_t m = first; m < end; ++m) {
        const In* p = input + m * depth;
        if (!direct) {
          gather_patch(g, input, m, patch.data());
          p = patch.data();
        }
        body(m, p);
      }
    }
  }
}

// Output channel o's accumulator over a patch: weight x (input - input zero point).
template <typename In>
int32_t accumulator(const ConvGeometry& g, const PackedWeights& w, const In* patch, int o) {
  return dot(patch, w.rows() + o * g.depth(), g.depth()) - g.input_zero_point * w.row_sums[o];
}

// Wide inputs and outputs (int16) where g.input_bits and e.bits say.
template <typename In>
void reference_conv2d(const ConvGeometry& g, const In* input, const PackedWeights& w, const RequantEpilogue& e,
                      int8_t* output) {
  for_each_patch(g, input, [&](int64_t m, const In* patch) {
    for (int o = 0; o < g.out_c; ++o) {
      const int64_t at = m * g.out_c + o;
      const int32_t y = requantize_output(accumulator(g, w, patch, o), o, at, e);
      if (e.bits > 8)
        reinterpret_cast<int16_t*>(output)[at] = static_cast<int16_t>(y);
      else
        output[at] = static_cast<int8_t>(y);
    }
  });
}

template <typename In>
void reference_conv2d_int32(const ConvGeometry& g, const In* input, const PackedWeights& w, const int32_t* bias,
                            int32_t* output) {
  for_each_patch(g, input, [&](int64_t m, const In* patch) {
    for (int o = 0; o < g.out_c; ++o) output[m * g.out_c + o] = accumulator(g, w, patch, o) + bias[o];
  });
}


#if defined(OCTET_CPU_AVX2) || defined(OCTET_CPU_VNNI)
// The scratch buffer of the SIMD kernels (the padded input image, or tiles of
// it): one per calling thread, grown as needed and kept, so layers do not
// pay for fresh pages each run.
uint8_t* workspace(const ConvGeometry& g, const PackedWeights& w, int64_t bytes_needed) {
  if (w.kernel_h() != g.kernel || w.kernel_w() != g.kernel_w || w.in_c() != g.in_c || w.out_c() != g.out_c)
    fail("cpu conv2d: weights packed for kernel " + std::to_string(w.kernel_h()) + "x" + std::to_string(w.kernel_w()) +
         ", " + std::to_string(w.in_c()) + " -> " + std::to_string(w.out_c()) + " channels, called with kernel " +
         std::to_string(g.kernel) + "x" + std::to_string(g.kernel_w) + ", " + std::to_string(g.in_c) + " -> " +
         std::to_string(g.out_c));  // the message made only on failure: this runs per layer and batch
  thread_local CacheLineVector<uint8_t> buffer;
  const size_t bytes = static_cast<size_t>(bytes_needed);
  if (buffer.size() < bytes) {
    CacheLineVector<uint8_t>().swap(buffer);  // no copy of the old contents
    buffer.resize(bytes);
  }
  return buffer.data();
}
#endif

#if defined(OCTET_CPU_VNNI)
// The VNNI kernel on the weights' layout for the input's bits. It reads a
// kernel row's taps as one run of adjacent pixels: no dilation.
void vnni_conv2d(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const EpilogueTables& e,
                 int8_t* output, int32_t* logits) {
  if (g.dilation != 1)
    fail("cpu conv2d: the AVX-512 VNNI kernel reads adjacent taps; dilation " + std::to_string(g.dilation) +
         " runs on the AVX2 or the reference path");
  const bool wide = g.input_bits > 8;
  if (wide ? w.blocked_wide.empty() : w.blocked.empty())
    fail(std::string("cpu conv2d: weights packed for ") + (wide ? "an int8" : "a wide") + " input, called with " +
         (wide ? "a wide" : "an int8") + " one");
  uint8_t* scratch = workspace(g, w, vnni::workspace_bytes(g));
  if (wide)
    return vnni::conv2d(g, reinterpret_cast<const int16_t*>(input), w.blocked_wide.data(), e, scratch, output, logits);
  vnni::conv2d(g, input, w.blocked.data(), e, scratch, output, logits);
}
#endif

}  // namespace

bool narrow_is_exact(int64_t depth, int64_t channels, const EpilogueTables& e) {
  const int64_t acc_bound = int64_t{128} * e.activation_bound * depth;
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t s = e.shift[c];
    if (s >= 32) continue;
    const int64_t left = 32 - s, bias = e.bias[c] < 0 ? -int64_t{e.bias[c]} : e.bias[c];
    if (left > 31 - e.skip_bits || acc_bound + bias >= int64_t{1} << (31 - left)) return false;
  }
  return true;
}

PaddedEpilogue::PaddedEpilogue(int channels, const int32_t* bias_in, const RequantEpilogue* e,
                               int32_t input_zero_point, int32_t input_bits, uint32_t offset,
                               const int32_t* row_sums)
    : channels_(channels) {
  const auto padded = static_cast<size_t>(padded_channels(channels));
  bias.assign(padded, 0);
  for (int o = 0; o < channels; ++o)
    bias[o] = static_cast<int32_t>(static_cast<uint32_t>(bias_in[o]) -
                                   (offset ? offset * static_cast<uint32_t>(row_sums[o]) : 0u));
  tables.bias = bias.data();
  tables.activation_bound = max_centered_input(input_zero_point, input_bits);
  if (!e) return;
  multiplier.assign(padded, 0);
  rounding.assign(padded, 1);
  shift.assign(padded, 1);
  for (int o = 0; o < channels; ++o) {
    multiplier[o] = e->multiplier[o];
    shift[o] = e->shift[o];
    rounding[o] = int64_t{1} << (e->shift[o] - 1);
  }
  tables.multiplier = multiplier.data();
  tables.rounding = rounding.data();
  tables.shift = shift.data();
  tables.lo = lowest_output(e->relu, e->zero_point, e->bits);
  tables.hi = highest_output(e->bits);
  tables.bits = e->bits;
  tables.skip_bits = e->skip_bits;
  tables.zero_point = e->zero_point;
  if (e->skip_multiplier) {
    tables.skip_zero_point = e->skip_zero_point;
    skip_multiplier.assign(padded, 0);
    std::copy(e->skip_multiplier, e->skip_multiplier + channels, skip_multiplier.begin());
    tables.skip_multiplier = skip_multiplier.data();
    tables.skip = e->skip;
  }
}

void PaddedEpilogue::add_vnni_vectors(int64_t depth) {
#if defined(OCTET_CPU_VNNI)
  const int64_t bytes = vnni::channel_vectors_bytes(channels_);
  vectors.resize(static_cast<size_t>(bytes / int64_t{sizeof(VectorLine)}));
  vnni::write_channel_vectors(tables, channels_, depth, vectors.data());
  tables.vectors = vectors.data();
#else
  (void)depth;
  fail("cpu runtime: this build has no AVX-512 VNNI kernels");
#endif
}

std::unique_ptr<PaddedEpilogue> conv_epilogue(const ConvGeometry& g, const PackedWeights& w, const RequantEpilogue* e,
                                              const int32_t* bias, KernelPath path) {
#if defined(OCTET_CPU_VNNI)
  if (path == KernelPath::Avx512Vnni) {
    auto epilogue = std::make_unique<PaddedEpilogue>(w.out_c(), bias, e, g.input_zero_point, g.input_bits,
                                                     vnni::activation_offset(g), w.row_sums.data());
    epilogue->add_vnni_vectors(g.depth());
    return epilogue;
  }
#endif
  check(path == KernelPath::Avx2, std::string("cpu conv2d: no SIMD epilogue for the ") + kernel_path_name(path) +
                                      " path");
  return std::make_unique<PaddedEpilogue>(w.out_c(), bias, e, g.input_zero_point, g.input_bits);
}

void conv2d_simd(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const EpilogueTables& e,
                 int8_t* output, int32_t* logits, KernelPath path) {
#if defined(OCTET_CPU_VNNI)
  if (path == KernelPath::Avx512Vnni) return vnni_conv2d(g, input, w, e, output, logits);
#endif
#if defined(OCTET_CPU_AVX2)
  if (path == KernelPath::Avx2)
    return avx2::conv2d(g, input, w.blocked_pairs.data(), w.blocked_quads.data(), e,
                        workspace(g, w, avx2::workspace_bytes(g)), output, logits);
#endif
  fail(std::string("cpu conv2d: this build has no ") + kernel_path_name(path) + " kernels");
}

void conv2d(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const RequantEpilogue& e, int8_t* output,
            KernelPath path) {
  if (path != KernelPath::Reference)
    return conv2d_simd(g, input, w, conv_epilogue(g, w, &e, e.bias, path)->tables, output, nullptr, path);
  if (g.input_bits > 8) return reference_conv2d(g, reinterpret_cast<const int16_t*>(input), w, e, output);
  reference_conv2d(g, input, w, e, output);
}

void conv2d_int32(const ConvGeometry& g, const int8_t* input, const PackedWeights& w, const int32_t* bias,
                  int32_t* output, KernelPath path) {
  if (path != KernelPath::Reference)
    return conv2d_simd(g, input, w, conv_epilogue(g, w, nullptr, bias, path)->tables, nullptr, output, path);
  if (g.input_bits > 8) return reference_conv2d_int32(g, reinterpret_cast<const int16_t*>(input), w, bias, output);
  reference_conv2d_int32(g, input, w, bias, output);
}

}  // namespace octet::cpu
