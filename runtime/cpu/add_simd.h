// The AVX-512 form of Add (add_vnni.cpp). That file is compiled with AVX-512
// flags, so call it only where kernel_path_supported says the CPU has it
// (ops/add.cpp dispatches).
#pragma once

#include <cstdint>

#include "runtime/cpu/conv_epilogue.h"

namespace octet::cpu::vnni {

// y = requantize(x - x_zero, m_x, z - z_zero, m_z) of `count` int8 values:
// `e` holds the requantization of 16 channels, all alike (multiplier m_x,
// skip_multiplier m_z, skip_zero_point z_zero, a zero bias), and its vectors
// (PaddedEpilogue::add_vnni_vectors, depth 1).
void add(const int8_t* x, const int8_t* z, int64_t count, int32_t x_zero, const EpilogueTables& e, int8_t* y);

}  // namespace octet::cpu::vnni
