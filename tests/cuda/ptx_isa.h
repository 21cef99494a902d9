// The two warp-wide tensor-core instructions of the cuda-imma kernel as the
// PTX ISA defines them, written independently of runtime/cuda: what every
// lane of a warp receives from ldmatrix and mma.sync, given what every lane
// gave. The tests' emulation of the kernel (test_implicit_gemm.cpp) and the
// kernel run on the CPU (cuda_on_cpu.h) both use them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace octet::ptx {

using Registers4 = std::array<uint32_t, 4>;
using Registers2 = std::array<uint32_t, 2>;

// ldmatrix.sync.aligned.m8n8.x4.shared.b16 over `shared` (`bytes` long):
// lanes 8j..8j+7 give the byte addresses of rows 0..7 of matrix j (16 bytes
// each); lane l receives in register j elements 2(l%4), 2(l%4)+1 of row l/4,
// i.e. bytes 4(l%4)..+3. Fails (octet::Error) on a row outside `shared` or
// not 16-byte aligned.
std::array<Registers4, 32> ldmatrix_x4(const int8_t* shared, size_t bytes, const std::array<int, 32>& address);

// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32: d += a x b, per lane.
void mma_m16n8k32_s8(std::array<Registers4, 32>& d, const std::array<Registers4, 32>& a,
                     const std::array<Registers2, 32>& b);
// mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32: the same with a's elements uint8.
void mma_m16n8k32_u8s8(std::array<Registers4, 32>& d, const std::array<Registers4, 32>& a,
                       const std::array<Registers2, 32>& b);

}  // namespace octet::ptx
