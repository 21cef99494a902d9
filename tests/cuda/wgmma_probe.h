// One warpgroup's wgmmas on the GPU (wgmma_probe.cu, sm_90a): what the
// hardware makes of runtime/cuda/tensor_core.cuh's wgmma_m64k32 and
// implicit_gemm.h's descriptors, for test_cuda to compare with
// tests/cuda/ptx_isa.h's reading, the one test_cuda_host runs cuda-imma's
// wgmma tiles on.
#pragma once

#include <cstdint>
#include <vector>

namespace octet::cuda {

// `a` (64 x 128 bytes) and `b` (n x 128 bytes), row-major, copied into shared
// memory as a 128-byte-K stage of cuda-imma (tile_offset, from a 1,024-byte
// boundary), then four k32 wgmma.m64nNk32 (A's bytes uint8 where a_unsigned)
// into zeroed accumulators: each of the 128 threads' n / 2 registers, thread
// by thread. n: 64 or 256. Needs a device of compute capability 9.0.
std::vector<int32_t> wgmma_probe(const std::vector<int8_t>& a, const std::vector<int8_t>& b, int n, bool a_unsigned);

}  // namespace octet::cuda
