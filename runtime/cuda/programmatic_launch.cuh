// Programmatic dependent launch (compute capability 9.0+): a kernel launched
// so may start while the kernel before it in its stream still runs, its
// blocks taking the multiprocessors that one's last blocks leave, and (in a
// CUDA graph) without the launch gap between them. Such a kernel must wait
// for the one before (grid_dependency_wait) before it reads memory that one
// wrote or writes memory it reads. Off unless OCTET_PDL=1, until a GPU session
// has run it (docs/gpu.md).
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "common/env_switch.h"
#include "runtime/cuda/common.cuh"

namespace octet::cuda {

// Waits for the kernel before this one (launched programmatically; else at
// once) to finish, its writes seen. No-op below sm_90.
__device__ __forceinline__ void grid_dependency_wait() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
// Lets the kernel after this one, if launched programmatically, start once
// every block of this one has called this (or finished). No-op below sm_90.
__device__ __forceinline__ void grid_dependency_launch_next() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
// Both, first thing in a kernel with no work to do before its first load.
__device__ __forceinline__ void grid_dependency_sync() {
  grid_dependency_wait();
  grid_dependency_launch_next();
}

// Whether the current device and the environment allow programmatic
// launches: compute capability 9.0 or newer, and OCTET_PDL=1. Fails on an
// OCTET_PDL other than 0 or 1.
inline bool programmatic_launch_offered() {
  return env_switch("OCTET_PDL").value_or(false) && current_compute_capability() >= 90;
}

// The stream a kernel goes to, and whether it is launched programmatically there.
struct KernelStream {
  cudaStream_t stream;
  bool programmatic;
};

// kernel<<<grid, block, shared, on.stream>>>(args...), launched programmatically
// where on.programmatic: only for kernels that call grid_dependency_wait before
// touching memory the kernels before them use.
template <typename... Params, typename... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared, KernelStream on, Args&&... args) {
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid, config.blockDim = block, config.dynamicSmemBytes = shared, config.stream = on.stream;
  config.attrs = &overlap, config.numAttrs = on.programmatic ? 1 : 0;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

}  // namespace octet::cuda
