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
#include "runtime/cpu/depthwise_walk.h"
#include "runtime/cpu/epilogue_avx2.h"

namespace octet::cpu::avx2 {

void depthwise_conv2d(const ConvGeometry& g, const int8_t* input, const int32_t* taps, const EpilogueTables& e,
                      int8_t* output) {
  const int64_t channels = g.out_c;
  const int64_t padded = (channels + kEpilogueBlock - 1) / kEpilogueBlock * kEpilogueBlock;
  const bool narrow = narrow_is_exact(int64_t(g.kernel) * g.kernel, channels, e);
  std::vector<ChannelVectors> blocks;
  for (int64_t channel = 0; channel < channels; channel += kLanes) blocks.emplace_back(e, channel, narrow);
  const int32_t lo = e.relu ? 0 : -128;
  for_each_output_pixel(g, [&](int64_t m) {
    for (int64_t channel = 0; channel < channels; channel += kLanes) {
      const int64_t lanes = channels - channel < kLanes ? channels - channel : kLanes;
      __m256i acc = _mm256_setzero_si256();
      for_each_inner_tap(g, m, [&](int64_t offset, int64_t tap) {
        int64_t bytes = 0;  // not past the pixel's last channel; a whole block in one load
        if (lanes == kLanes)
          std::memcpy(&bytes, input + offset + channel, kLanes);
        else
          std::memcpy(&bytes, input + offset + channel, static_cast<size_t>(lanes));
        const __m256i x = _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes));
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(taps + tap * padded + channel));
        acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(x, w));
      });
      const int64_t at = m * channels + channel;
      store_int8(acc, blocks[channel / kLanes], e.skip ? e.skip + at : nullptr, lo, lanes, output + at);
    }
  });
}

}  // namespace octet::cpu::avx2
