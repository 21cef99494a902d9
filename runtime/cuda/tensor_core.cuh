// Inline PTX for sm_80+ int8 tensor-core kernels: asynchronous global ->
// shared copies with zero fill, ldmatrix, and mma.m16n8k32 s8 (or u8) x s8 -> s32;
// for sm_90a, wgmma.mma_async m64nNk32 and its fences.
// Device code only; the lane <-> element mappings they imply are in
// implicit_gemm.h.
#pragma once

#include <cstdint>

namespace octet::cuda {

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Copies kBytes (16 or 4) from global to shared memory asynchronously, or
// writes kBytes zeros when !valid (`global` must still be a valid address).
// `shared`: a shared-state-space address (shared_address), made once per
// kernel rather than converted at every copy.
template <int kBytes>
__device__ __forceinline__ void cp_async_zero_fill(uint32_t shared, const void* global, bool valid) {
  static_assert(kBytes == 16 || kBytes == 4, "cp.async copies 4, 8 or 16 bytes; we use 16 and 4");
  const int source_bytes = valid ? kBytes : 0;
  if constexpr (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared), "l"(global), "r"(source_bytes));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared), "l"(global), "r"(source_bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most kPending committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Four 8 x 16-byte matrices; lane l gives the shared-state-space address of
// row l % 8 of matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t shared) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared));
}

// d += a (16 x 32, row) x b (32 x 8, col), int8 -> int32.
__device__ __forceinline__ void mma_s8(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// d += a (16 x 32, row, uint8) x b (32 x 8, col, int8) -> int32.
__device__ __forceinline__ void mma_u8s8(int32_t (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---------------------------------------------------------------- wgmma (sm_90a)
// The async proxy (wgmma's reads of shared memory) sees this thread's earlier
// writes (its cp.async copies, once waited for) after this fence.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Orders this warpgroup's register accesses before the wgmmas that follow.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most kPending committed groups of wgmmas are in flight.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Keeps the compiler from moving accesses of these registers across the
// wgmmas in flight on them.
template <int kRows, int kCols>
__device__ __forceinline__ void wgmma_fence_registers(int32_t (&acc)[kRows][kCols][4]) {
#pragma unroll
  for (int i = 0; i < kRows; ++i)
#pragma unroll
    for (int j = 0; j < kCols; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(acc[i][j][r])::"memory");
}

// d (this thread's share of a 64 x kN int32 tile: n8 block j in d[j]) += A x B^T,
// A 64 x 32 bytes and B kN x 32 bytes read through their descriptors
// (implicit_gemm.h wgmma_descriptor); A's bytes uint8 where kUnsignedA, B's int8.
// Only in code compiled for sm_90a (elsewhere it traps).
template <int kN, bool kUnsignedA>
__device__ __forceinline__ void wgmma_m64k32(int32_t (&d)[kN / 8][4], uint64_t a, uint64_t b);

#define OCTET_D4(j) "+r"(d[j][0]), "+r"(d[j][1]), "+r"(d[j][2]), "+r"(d[j][3])
#define OCTET_D32(j) \
  OCTET_D4(j), OCTET_D4(j + 1), OCTET_D4(j + 2), OCTET_D4(j + 3), OCTET_D4(j + 4), OCTET_D4(j + 5), \
      OCTET_D4(j + 6), OCTET_D4(j + 7)
// REGISTERS: "%0, .., %(N/2 - 1)"; A, B, SCALE: the operand numbers after
// them of the descriptors and of scale-d (1: d is accumulated into).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define OCTET_WGMMA(N, UNSIGNED, A_TYPE, REGISTERS, A, B, SCALE, ...)                                       \
  template <>                                                                                              \
  __device__ __forceinline__ void wgmma_m64k32<N, UNSIGNED>(int32_t(&d)[N / 8][4], uint64_t a, uint64_t b) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE ", 0;\n"                                        \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k32.s32." A_TYPE ".s8 {" REGISTERS "}, " A ", " B   \
                 ", p;\n}\n"                                                                                \
                 : __VA_ARGS__                                                                             \
                 : "l"(a), "l"(b), "r"(1));                                                                \
  }
#else
#define OCTET_WGMMA(N, UNSIGNED, A_TYPE, REGISTERS, A, B, SCALE, ...)                                   \
  template <>                                                                                          \
  __device__ __forceinline__ void wgmma_m64k32<N, UNSIGNED>(int32_t(&)[N / 8][4], uint64_t, uint64_t) { \
    __trap();                                                                                          \
  }
#endif
#define OCTET_REGISTERS_64 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define OCTET_REGISTERS_128 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, " \
  "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, " \
  "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define OCTET_REGISTERS_256 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, " \
  "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, " \
  "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, " \
  "%66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, " \
  "%82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, " \
  "%98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, " \
  "%126, %127"
OCTET_WGMMA(64, false, "s8", OCTET_REGISTERS_64, "%32", "%33", "%34", OCTET_D32(0))
OCTET_WGMMA(64, true, "u8", OCTET_REGISTERS_64, "%32", "%33", "%34", OCTET_D32(0))
OCTET_WGMMA(128, false, "s8", OCTET_REGISTERS_128, "%64", "%65", "%66", OCTET_D32(0), OCTET_D32(8))
OCTET_WGMMA(128, true, "u8", OCTET_REGISTERS_128, "%64", "%65", "%66", OCTET_D32(0), OCTET_D32(8))
OCTET_WGMMA(256, false, "s8", OCTET_REGISTERS_256, "%128", "%129", "%130", OCTET_D32(0), OCTET_D32(8), OCTET_D32(16),
            OCTET_D32(24))
OCTET_WGMMA(256, true, "u8", OCTET_REGISTERS_256, "%128", "%129", "%130", OCTET_D32(0), OCTET_D32(8), OCTET_D32(16),
            OCTET_D32(24))
#undef OCTET_WGMMA
#undef OCTET_D32
#undef OCTET_D4
#undef OCTET_REGISTERS_64
#undef OCTET_REGISTERS_128
#undef OCTET_REGISTERS_256

}  // namespace octet::cuda
