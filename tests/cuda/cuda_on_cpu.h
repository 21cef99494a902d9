// Runs a CUDA kernel's own source on the CPU, so that tests on machines
// without a GPU check the kernel's code itself, not a copy of its logic.
// Include this before the kernel's header, which must include no CUDA
// header of its own (runtime/cuda/conv2d_imma_kernel.cuh includes
// tensor_core.cuh only under nvcc): this file stands in for CUDA's keywords
// and built-ins and for tensor_core.cuh's primitives.
//
// Every thread of a block is a fiber on the calling thread. They switch at
// __syncthreads (and __syncthreads_or) and at the warp-wide ldmatrix, mma.sync and __shfl_xor_sync,
// which run (the first two as the PTX ISA defines them, tests/cuda/ptx_isa.h)
// once all 32 lanes of the warp have reached one, and at the warpgroup-wide
// wgmma, wgmma.commit_group and wgmma.wait_group, once all 128 threads of
// the warpgroup have. cp.async copies land when issued or only when waited
// for, a wgmma multiplies when issued or only when waited for (either is
// legal, so a kernel must be right under each), and between switches the
// threads run first to last or last to first. Each is a BlockRun option. A
// deadlock (a barrier or warp instruction that some threads never reach),
// lanes at different warp instructions, an access outside the block's
// dynamic shared memory, a write past it, a wgmma reading bytes that a
// cp.async wrote without a fence.proxy.async of the writing thread between
// (the tensor cores read through the async proxy), a wgmma never waited
// for, or in a programmatic launch a cp.async of global bytes that kernels
// may write before griddepcontrol.wait fails with octet::Error naming the block.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>

namespace octet::cuda_on_cpu {

// Room for the largest dynamic shared memory a block may have (H100: 227 KB).
constexpr int kMaxSharedBytes = 232448;

struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};

struct BlockRun {
  int threads = 0;              // a multiple of 32
  int shared_bytes = 0;         // the block's dynamic shared memory
  Dim3 block;                   // its blockIdx
  bool copies_at_wait = false;  // cp.async lands at cp.async.wait_group, else when issued
  bool last_to_first = false;   // the order the threads run in between switches
  bool wgmma_at_wait = false;   // a wgmma multiplies at wgmma.wait_group, else when issued
  // Launched programmatically (common.cuh launch_kernel): a thread's cp.async
  // of global bytes before its griddepcontrol.wait fails, but of the
  // `unwritten_bytes` from `unwritten` (bytes no kernel writes: weights).
  bool programmatic = false;
  const void* unwritten = nullptr;
  int64_t unwritten_bytes = 0;
  // The shared-state-space address of the dynamic shared memory's first byte
  // (a multiple of 16): what shared_address gives and the primitives take.
  uint32_t shared_start = 0;
};

// Runs `kernel` as every thread of one block, until all have returned.
void run_block(const BlockRun& run, const std::function<void()>& kernel);

// What the stand-ins below call, from inside a kernel that run_block runs.
Dim3 thread_index();
Dim3 block_index();
void syncthreads();
// __syncthreads_or: the barrier, then whether any thread's predicate was nonzero.
bool syncthreads_or(bool predicate);
uint32_t shared_offset(const void* p);  // the address of a pointer into the dynamic shared memory
void cp_async(uint32_t shared, const void* global, int bytes, bool valid);
void cp_async_commit();
void cp_async_wait(int pending);
void ldmatrix_x4(uint32_t (&r)[4], uint32_t shared);
void mma_s8(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);
void mma_u8s8(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);
int32_t shfl_xor(int32_t value, int lane_mask);  // every lane of the warp
void fence_proxy_async();
void grid_dependency_wait();
void wgmma(int32_t* d, int n, uint64_t a, uint64_t b, bool a_unsigned);  // d: the thread's n / 2 registers
void wgmma_commit();
void wgmma_wait(int pending);

}  // namespace octet::cuda_on_cpu

// CUDA's keywords and built-ins. (A kernel's `#pragma unroll` is nvcc's: the
// file that includes it compiles with -Wno-unknown-pragmas.)
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__
#define __align__(n) __attribute__((aligned(n)))
#define threadIdx (::octet::cuda_on_cpu::thread_index())
#define blockIdx (::octet::cuda_on_cpu::block_index())
inline void __syncthreads() { ::octet::cuda_on_cpu::syncthreads(); }
inline int __syncthreads_or(int predicate) { return ::octet::cuda_on_cpu::syncthreads_or(predicate != 0); }
// Blocks run one after another, each to its end: global memory needs no
// fences, and an atomic no other block runs beside.
inline void __threadfence() {}
inline unsigned atomicAdd(unsigned* address, unsigned value) {
  const unsigned old = *address;
  *address = old + value;
  return old;
}
template <typename T>
T __ldcg(const T* address) {
  return *address;
}

struct int2 {
  int x, y;
};
struct int4 {
  int x, y, z, w;
};
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }

// The sum of c and the products of a's and b's signed bytes.
inline int __dp4a(int a, int b, int c) {
  for (int i = 0; i < 4; ++i) c += int(int8_t(uint32_t(a) >> (8 * i))) * int(int8_t(uint32_t(b) >> (8 * i)));
  return c;
}
// Only the full warp (mask 0xFFFFFFFF), as the kernels use it.
inline int __shfl_xor_sync(unsigned mask, int value, int lane_mask) {
  if (mask != 0xFFFFFFFFu) throw std::invalid_argument("cuda_on_cpu: __shfl_xor_sync with a partial warp mask");
  return ::octet::cuda_on_cpu::shfl_xor(value, lane_mask);
}

namespace octet::cuda {

// The dynamic shared memory a kernel declares as `extern __shared__ int8_t shared[]`.
extern int8_t shared[];

// runtime/cuda/tensor_core.cuh's primitives.
inline uint32_t shared_address(const void* p) { return cuda_on_cpu::shared_offset(p); }
template <int kBytes>
void cp_async_zero_fill(uint32_t to, const void* global, bool valid) {
  cuda_on_cpu::cp_async(to, global, kBytes, valid);
}
inline void cp_async_commit() { cuda_on_cpu::cp_async_commit(); }
template <int kPending>
void cp_async_wait() {
  cuda_on_cpu::cp_async_wait(kPending);
}
inline void ldmatrix_x4(uint32_t (&r)[4], uint32_t at) { cuda_on_cpu::ldmatrix_x4(r, at); }
inline void mma_s8(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) { cuda_on_cpu::mma_s8(d, a, b); }
inline void mma_u8s8(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  cuda_on_cpu::mma_u8s8(d, a, b);
}
inline void fence_proxy_async_shared() { cuda_on_cpu::fence_proxy_async(); }
inline void grid_dependency_wait() { cuda_on_cpu::grid_dependency_wait(); }
// Blocks run one after another here: nothing to start early.
inline void grid_dependency_launch_next() {}
// wgmma.fence and the register fences order a GPU thread's register accesses
// around its wgmmas in flight; a fiber's registers are its own.
inline void wgmma_fence() {}
template <int kRows, int kCols>
void wgmma_fence_registers(int32_t (&)[kRows][kCols][4]) {}
template <int kN, bool kUnsignedA>
void wgmma_m64k32(int32_t (&d)[kN / 8][4], uint64_t a, uint64_t b) {
  cuda_on_cpu::wgmma(&d[0][0], kN, a, b, kUnsignedA);
}
inline void wgmma_commit() { cuda_on_cpu::wgmma_commit(); }
template <int kPending>
void wgmma_wait() {
  cuda_on_cpu::wgmma_wait(kPending);
}

}  // namespace octet::cuda
