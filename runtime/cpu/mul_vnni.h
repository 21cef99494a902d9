// The AVX-512 form of Mul (mul_vnni.cpp, compiled with AVX-512 flags): call
// only where kernel_path_supported(KernelPath::Avx512Vnni); ops/mul.cpp
// dispatches.
#pragma once

#include <cstdint>

#include "runtime/cpu/conv_epilogue.h"

namespace octet::cpu::vnni {

// y = requantize((x - x_zero) * (z - z_zero)) for `pixels` NHWC pixels of
// `channels` values: z is per channel of each sample (`pixels_per_sample` of
// x's pixels each) where `per_channel`, else of x's shape. `e` holds the
// requantization, the same in every channel, with a zero bias.
void mul(const int8_t* x, const int8_t* z, int64_t pixels, int64_t channels, int64_t pixels_per_sample,
         bool per_channel, int32_t x_zero, int32_t z_zero, const EpilogueTables& e, int8_t* y);

}  // namespace octet::cpu::vnni
