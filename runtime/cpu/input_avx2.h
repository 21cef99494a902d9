// The input's rounding with AVX2 (input_avx2.cpp, compiled with AVX2 flags):
// common/requantize.h's quantize_input of a run of floats, 8 at a time. Call
// only where the CPU has AVX2 (ops/input.cpp's kernels of the AVX2 and
// AVX-512 paths).
#pragma once

#include <cstdint>

namespace octet::cpu::avx2 {

// dst[i] = quantize_input(src[i], scale) (zero point 0) for i < n.
void quantize_run(const float* src, int64_t n, float scale, int8_t* dst);

}  // namespace octet::cpu::avx2
