// AVX2 Mul (mul_simd.h): 8 channels of a pixel at a time, their int8 inputs
// and gates (or a pixel's one gate) widened to int32 less their zero points, multiplied and
// requantized in registers by the conv kernels' epilogue (epilogue_avx2.h),
// whose operands are made once per call.
//
// This file is compiled with AVX2 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include <immintrin.h>

#include <cstring>
#include <vector>

#include "runtime/cpu/epilogue_avx2.h"
#include "runtime/cpu/mul_simd.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu::avx2 {

namespace {
constexpr int64_t kPixelsPerTask = 64;
constexpr int64_t kMinParallelValues = int64_t{1} << 16;

// `lanes` (1 to 8) int8 values as int32 less `zero`, not read past the last.
__m256i centered(const int8_t* p, int64_t lanes, __m256i zero) {
  int64_t bytes = 0;
  if (lanes == kLanes)
    std::memcpy(&bytes, p, kLanes);
  else
    std::memcpy(&bytes, p, static_cast<size_t>(lanes));
  return _mm256_sub_epi32(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes)), zero);
}
}  // namespace

void mul(const int8_t* x, const int8_t* z, int64_t pixels, int64_t channels, int64_t pixels_per_sample,
         ops::MulGate gate, int32_t x_zero, int32_t z_zero, const EpilogueTables& e, int8_t* y) {
  const bool narrow = narrow_is_exact(2, channels, e);  // a product is at most 255 * 255
  std::vector<ChannelVectors> blocks;
  for (int64_t channel = 0; channel < channels; channel += kLanes) blocks.emplace_back(e, channel, narrow);
  const __m256i xz = _mm256_set1_epi32(x_zero), zz = _mm256_set1_epi32(z_zero);
  const int64_t tasks = (pixels + kPixelsPerTask - 1) / kPixelsPerTask;
  parallel_for(tasks, pixels * channels >= kMinParallelValues, [&](int64_t t) {
    const int64_t first = t * kPixelsPerTask, end = pixels < first + kPixelsPerTask ? pixels : first + kPixelsPerTask;
    for (int64_t p = first; p < end; ++p) {
      const int8_t* row = z + (gate == ops::MulGate::PerChannel ? p / pixels_per_sample * channels : p * channels);
      const __m256i pixel_gate = _mm256_set1_epi32(gate == ops::MulGate::PerPixel ? z[p] - z_zero : 0);
      for (int64_t channel = 0; channel < channels; channel += kLanes) {
        const int64_t at = p * channels + channel, lanes = channels - channel < kLanes ? channels - channel : kLanes;
        const __m256i g = gate == ops::MulGate::PerPixel ? pixel_gate : centered(row + channel, lanes, zz);
        store_int8(_mm256_mullo_epi32(centered(x + at, lanes, xz), g), blocks[channel / kLanes], nullptr, e.lo, lanes,
                   y + at);
      }
    }
  });
}

}  // namespace octet::cpu::avx2
