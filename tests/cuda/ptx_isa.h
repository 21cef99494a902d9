// The tensor-core instructions of the cuda-imma kernel as the PTX ISA
// defines them, written independently of runtime/cuda: what every lane of a
// warp receives from ldmatrix and mma.sync, given what every lane gave, and
// what a warpgroup's wgmma adds to its accumulators. The tests' emulation of
// the kernel (test_implicit_gemm.cpp) and the kernel run on the CPU
// (cuda_on_cpu.h) use them.
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

// wgmma's shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor
// Format"): bits 0-13 start address / 16, 16-29 leading-dimension byte
// offset / 16, 32-45 stride-dimension byte offset (SBO) / 16, 49-51 matrix
// base offset, 62-63 swizzle mode. The shared byte of element (row, k) of a
// K-major operand, k < 32: in the 128-byte swizzle (mode 1) rows are 128
// bytes, 8-row groups SBO apart, and the 16-byte chunk index of every address
// (bits 4-6) is XORed with bits 7-9. Only that mode with base offset 0 is
// emulated: fails (octet::Error) on any other.
int wgmma_operand_address(uint64_t descriptor, int row, int k);

// wgmma.mma_async.sync.aligned.m64nNk32.s32.s8.s8 (.u8.s8 where a_unsigned)
// with both operands in shared memory (`bytes` long, at shared-state-space
// address `start`): d += A (64 x 32) x
// B (n x 32)^T. d[t] is thread t's n / 2 registers: warp w = t / 32 holds rows
// 16w..16w+15; lane l's register i row 16w + l/4 + 8 ((i % 4) / 2), column
// 8 (i / 4) + 2 (l % 4) + i % 2. Fails on an operand byte outside `bytes`.
void wgmma_m64nNk32(const int8_t* shared, size_t bytes, uint32_t start, uint64_t a, uint64_t b, int n,
                    bool a_unsigned, const std::array<int32_t*, 128>& d);

}  // namespace octet::ptx
