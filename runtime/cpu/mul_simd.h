// The SIMD forms of Mul: AVX-512 (mul_vnni.cpp) and AVX2 (mul_avx2.cpp).
// Those files are compiled with their instruction sets, so call each only
// where kernel_path_supported says the CPU has it (ops/mul.cpp dispatches).
#pragma once

#include <cstdint>

#include "graph/ops/mul.h"
#include "runtime/cpu/conv_epilogue.h"

namespace octet::cpu {

// Both: y = requantize((x - x_zero) * (z - z_zero)) for `pixels` NHWC
// pixels of `channels` values: z is per channel of each sample
// (`pixels_per_sample` of x's pixels each) or one value per pixel (avx2
// only) where `gate` says so, else of x's shape. `e` holds the requantization, the same in every channel, with a
// zero bias and activation_bound 255 (the largest |x - x_zero|, and above
// the largest product over 2 * 128: the AVX2 epilogue's narrow test); for
// vnni::mul, its vectors (PaddedEpilogue::add_vnni_vectors, depth 2).
namespace vnni {
void mul(const int8_t* x, const int8_t* z, int64_t pixels, int64_t channels, int64_t pixels_per_sample,
         ops::MulGate gate, int32_t x_zero, int32_t z_zero, const EpilogueTables& e, int8_t* y);
}
namespace avx2 {
void mul(const int8_t* x, const int8_t* z, int64_t pixels, int64_t channels, int64_t pixels_per_sample,
         ops::MulGate gate, int32_t x_zero, int32_t z_zero, const EpilogueTables& e, int8_t* y);
}

}  // namespace octet::cpu
