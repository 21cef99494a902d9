// AVX-512 Mul (mul_simd.h): 16 channels of a pixel at a time, their int8
// inputs and gates widened to int32 less their zero points, multiplied and
// requantized in registers by the conv kernels' epilogue (epilogue_avx512.h),
// whose operands (EpilogueTables::vectors) the caller makes.
//
// This file is compiled with AVX-512 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include "runtime/cpu/mul_simd.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593, as in conv_vnni.cpp
#endif
#include <immintrin.h>

#include "runtime/cpu/epilogue_avx512.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu::vnni {

namespace {
constexpr int64_t kPixelsPerTask = 64;
// Fewer values run on the calling thread: waking the other costs about what they do.
constexpr int64_t kMinParallelValues = int64_t{1} << 18;

__m512i centered(const int8_t* p, __mmask16 mask, __m512i zero) {
  return _mm512_sub_epi32(_mm512_cvtepi8_epi32(load_bytes(mask, p)), zero);
}
}  // namespace

void mul(const int8_t* x, const int8_t* z, int64_t pixels, int64_t channels, int64_t pixels_per_sample,
         ops::MulGate gate_kind, int32_t x_zero, int32_t z_zero, const EpilogueTables& e, int8_t* y) {
  const bool per_channel = gate_kind == ops::MulGate::PerChannel;  // never PerPixel (ops/mul.cpp refuses it here)
  const __m512i xz = _mm512_set1_epi32(x_zero), zz = _mm512_set1_epi32(z_zero);
  const ChannelVectors* vectors = channel_vectors(e);
  const int64_t tasks = (pixels + kPixelsPerTask - 1) / kPixelsPerTask;
  parallel_for(tasks, pixels * channels >= kMinParallelValues, [&](int64_t t) {
    const int64_t first = t * kPixelsPerTask, end = pixels < first + kPixelsPerTask ? pixels : first + kPixelsPerTask;
    for (int64_t channel = 0; channel < channels; channel += 16) {
      const __mmask16 mask = lane_mask(channels - channel);
      const ChannelVectors v = vectors[channel / 16];  // a copy: int8 stores may alias the vector
      for (int64_t p = first; p < end; ++p) {
        const int64_t at = p * channels + channel;
        const int8_t* gate = z + (per_channel ? p / pixels_per_sample * channels + channel : at);
        store_int8(_mm512_mullo_epi32(centered(x + at, mask, xz), centered(gate, mask, zz)), v, nullptr, mask, y + at);
      }
    }
  });
}

}  // namespace octet::cpu::vnni
