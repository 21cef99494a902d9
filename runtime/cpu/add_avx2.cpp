// AVX2 Add (add_simd.h): 16 values at a time, the first input widened to
// int32 less its zero point as the accumulator, the second as the residual of
// the conv kernels' epilogue (epilogue_avx2.h), which requantizes both in
// registers with octet::requantize's bits; its operands are made once per
// task, the caller's tables (ops/add.cpp) once per engine.
//
// This file is compiled with AVX2 flags; everything in it has internal
// linkage or is called only after the run-time CPU check.
#include <immintrin.h>

#include "runtime/cpu/add_simd.h"
#include "runtime/cpu/epilogue_avx2.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu::avx2 {

namespace {
constexpr int64_t kValuesPerTask = 4096;
// Fewer values run on the calling thread: waking the other costs about what they do.
constexpr int64_t kMinParallelValues = int64_t{1} << 16;

// requantize's value of the `lanes` (1 to 8) values at x and z less the output's zero point (scaled_biased).
__m256i scaled(const int8_t* x, const int8_t* z, int64_t lanes, __m256i x_zero, const ChannelVectors& v, int32_t lo) {
  const __m256i acc = _mm256_sub_epi32(_mm256_cvtepi8_epi32(load_lanes(x, lanes)), x_zero);
  const __m256i skip = skip_lanes(z, false, lanes, v);
  return scaled_biased(acc, v, &skip, lo, 127);
}
}  // namespace

void add(const int8_t* x, const int8_t* z, int64_t count, int32_t x_zero, const EpilogueTables& e, int8_t* y) {
  EpilogueTables with_skip = e;  // ChannelVectors takes the skip multipliers where there is a skip
  with_skip.skip = z;
  const bool narrow = narrow_is_exact(1, kLanes, e);
  const __m256i zero = _mm256_set1_epi32(x_zero);
  const int64_t tasks = (count + kValuesPerTask - 1) / kValuesPerTask;
  parallel_for(tasks, count >= kMinParallelValues, [&](int64_t t) {
    const ChannelVectors v(with_skip, 0, narrow);
    const Int8Range range(e.zero_point, e.lo, 127);
    const int64_t end = count < (t + 1) * kValuesPerTask ? count : (t + 1) * kValuesPerTask;
    for (int64_t i = t * kValuesPerTask; i < end; i += 2 * kLanes) {
      const int64_t left = end - i, first = left < kLanes ? left : kLanes, second = left - first;
      const __m256i q0 = scaled(x + i, z + i, first, zero, v, e.lo);
      const __m256i q1 =
          second > 0 ? scaled(x + i + kLanes, z + i + kLanes, second < kLanes ? second : kLanes, zero, v, e.lo) : q0;
      store_int8_outputs(int8_outputs(q0, q1, range), left < 2 * kLanes ? left : 2 * kLanes, y + i);
    }
  });
}

}  // namespace octet::cpu::avx2
