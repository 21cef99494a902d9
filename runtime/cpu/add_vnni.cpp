// AVX-512 Add (add_simd.h): 16 values at a time, the first input widened to
// int32 less its zero point as the accumulator, the second as the residual of
// the conv kernels' epilogue (epilogue_avx512.h), which requantizes both in
// registers with octet::requantize's bits; the caller makes its operands.
//
// This file is compiled with AVX-512 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include "runtime/cpu/add_simd.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593, as in conv_vnni.cpp
#endif
#include <immintrin.h>

#include "runtime/cpu/epilogue_avx512.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu::vnni {

namespace {
constexpr int64_t kValuesPerTask = 4096;
// Fewer values run on the calling thread: waking the other costs about what they do.
constexpr int64_t kMinParallelValues = int64_t{1} << 16;
}  // namespace

void add(const int8_t* x, const int8_t* z, int64_t count, int32_t x_zero, const EpilogueTables& e, int8_t* y) {
  const __m512i zero = _mm512_set1_epi32(x_zero);
  const int64_t tasks = (count + kValuesPerTask - 1) / kValuesPerTask;
  parallel_for(tasks, count >= kMinParallelValues, [&](int64_t t) {
    const ChannelVectors v = *channel_vectors(e);  // a copy: int8 stores may alias the vector
    const int64_t end = count < (t + 1) * kValuesPerTask ? count : (t + 1) * kValuesPerTask;
    for (int64_t i = t * kValuesPerTask; i < end; i += 16) {
      const __mmask16 mask = lane_mask(end - i);
      store_int8(_mm512_sub_epi32(_mm512_cvtepi8_epi32(load_bytes(mask, x + i)), zero), v, z + i, mask, y + i);
    }
  });
}

}  // namespace octet::cpu::vnni
