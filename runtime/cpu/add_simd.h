// The SIMD forms of Add: AVX-512 (add_vnni.cpp) and AVX2 (add_avx2.cpp).
// Those files are compiled with their instruction sets, so call each only
// where kernel_path_supported says the CPU has it (ops/add.cpp dispatches).
#pragma once

#include <cstdint>

#include "runtime/cpu/conv_epilogue.h"

namespace octet::cpu {

// Both: y = requantize(x - x_zero, m_x, z - z_zero, m_z) of `count` int8
// values: `e` holds the requantization of 16 channels, all alike (multiplier
// m_x, skip_multiplier m_z, skip_zero_point z_zero, a zero bias); for
// vnni::add, its vectors (PaddedEpilogue::add_vnni_vectors, depth 1).
namespace vnni {
void add(const int8_t* x, const int8_t* z, int64_t count, int32_t x_zero, const EpilogueTables& e, int8_t* y);
}
namespace avx2 {
void add(const int8_t* x, const int8_t* z, int64_t count, int32_t x_zero, const EpilogueTables& e, int8_t* y);
}

}  // namespace octet::cpu
