// AVX2 depthwise convolution, in the structure of depthwise_vnni.cpp: each
// output pixel takes 8 channels at a time, widens their int8 inputs to int32,
// multiply-adds them with the tap's weights (vpmulld) and requantizes the 8 in
// registers (epilogue_avx2.h), whose operands are made once per call.
//
// This file is compiled with AVX2 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include <immintrin.h>

#include <cstring>
#include <vector>

#include "runtime/cpu/depthwise_simd.h"
#include "runtime/cpu/epilogue_avx2.h"

namespace octet::cpu::avx2 {

namespace {
// Output pixels per unit of work shared among threads.
constexpr int64_t kPixelsPerTask = 64;
// Smaller layers (multiply-adds) run on the calling thread (conv_avx2.cpp's reason).
constexpr int64_t kMinParallelMacs = int64_t{1} << 22;
}  // namespace

void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const EpilogueTables& e,
                      int8_t* output) {
  const int64_t channels = g.out_c, pixels = g.rows(), k = g.kernel;
  const int64_t padded = (channels + kEpilogueBlock - 1) / kEpilogueBlock * kEpilogueBlock;
  const bool narrow = narrow_is_exact(k * k, channels, e);
  std::vector<ChannelVectors> blocks;
  for (int64_t channel = 0; channel < channels; channel += kLanes) blocks.emplace_back(e, channel, narrow);
  const int32_t lo = e.relu ? 0 : -128;
  const int64_t tasks = (pixels + kPixelsPerTask - 1) / kPixelsPerTask;
#pragma omp parallel for schedule(static) if (pixels * channels * k * k >= kMinParallelMacs)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t end = pixels < (task + 1) * kPixelsPerTask ? pixels : (task + 1) * kPixelsPerTask;
    for (int64_t m = task * kPixelsPerTask; m < end; ++m) {
      const int64_t ox = m % g.out_w, oy = (m / g.out_w) % g.out_h, b = m / (int64_t(g.out_w) * g.out_h);
      for (int64_t channel = 0; channel < channels; channel += kLanes) {
        const int64_t lanes = channels - channel < kLanes ? channels - channel : kLanes;
        __m256i acc = _mm256_setzero_si256();
        for (int64_t ky = 0; ky < k; ++ky) {
          const int64_t iy = oy * g.stride - g.padding + ky * g.dilation;
          if (iy < 0 || iy >= g.in_h) continue;
          for (int64_t kx = 0; kx < k; ++kx) {
            const int64_t ix = ox * g.stride - g.padding + kx * g.dilation;
            if (ix < 0 || ix >= g.in_w) continue;
            const int8_t* pixel = input + ((b * g.in_h + iy) * g.in_w + ix) * channels + channel;
            int64_t bytes = 0;  // not past the pixel's last channel; a whole block in one load
            if (lanes == kLanes)
              std::memcpy(&bytes, pixel, kLanes);
            else
              std::memcpy(&bytes, pixel, static_cast<size_t>(lanes));
            const __m256i x = _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes));
            const __m256i w =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(taps + (ky * k + kx) * padded + channel));
            acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(x, w));
          }
        }
        const int64_t at = m * channels + channel;
        store_int8(acc, blocks[channel / kLanes], e.skip ? e.skip + at : nullptr, lo, lanes, output + at);
      }
    }
  }
}

}  // namespace octet::cpu::avx2
