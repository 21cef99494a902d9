#include "tests/cuda/wgmma_probe.h"

#include "common/error.h"
#include "runtime/cuda/common.cuh"
#include "runtime/cuda/implicit_gemm.h"
#include "runtime/cuda/tensor_core.cuh"

namespace octet::cuda {

namespace {

constexpr int kThreads = 128, kK = 128;

template <int kN, bool kUnsignedA>
__global__ void __launch_bounds__(kThreads) wgmma_probe_kernel(const int8_t* a, const int8_t* b, int32_t* d) {
  extern __shared__ __align__(128) int8_t shared[];
  const uint32_t start = shared_address(shared);
  const uint32_t a_stage = (start + igemm::kWgmmaStageAlignment - 1) & ~uint32_t(igemm::kWgmmaStageAlignment - 1);
  const uint32_t b_stage = a_stage + igemm::kWgmmaM * kK;
  int8_t* stage = shared + (a_stage - start);
  for (int i = threadIdx.x; i < igemm::kWgmmaM * kK; i += kThreads)
    stage[igemm::tile_offset(i / kK, i % kK, kK)] = a[i];
  for (int i = threadIdx.x; i < kN * kK; i += kThreads)
    stage[igemm::kWgmmaM * kK + igemm::tile_offset(i / kK, i % kK, kK)] = b[i];
  fence_proxy_async_shared();
  __syncthreads();
  int32_t acc[1][kN / 8][4] = {};
  wgmma_fence_registers(acc);
  wgmma_fence();
#pragma unroll
  for (int s = 0; s < kK / igemm::kMmaK; ++s)
    wgmma_m64k32<kN, kUnsignedA>(acc[0], igemm::wgmma_descriptor(a_stage + s * igemm::kMmaK),
                                 igemm::wgmma_descriptor(b_stage + s * igemm::kMmaK));
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_fence_registers(acc);
  for (int i = 0; i < kN / 2; ++i) d[threadIdx.x * (kN / 2) + i] = acc[0][i / 4][i % 4];
}

template <int kN, bool kUnsignedA>
void launch(const int8_t* a, const int8_t* b, int32_t* d) {
  const int bytes = igemm::kWgmmaStageAlignment + (igemm::kWgmmaM + kN) * kK;
  CUDA_CHECK(cudaFuncSetAttribute(wgmma_probe_kernel<kN, kUnsignedA>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  bytes));
  wgmma_probe_kernel<kN, kUnsignedA><<<1, kThreads, bytes>>>(a, b, d);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

std::vector<int32_t> wgmma_probe(const std::vector<int8_t>& a, const std::vector<int8_t>& b, int n, bool a_unsigned) {
  check(n == 64 || n == 256, "wgmma_probe: n is 64 or 256, not " + std::to_string(n));
  check(a.size() == size_t(igemm::kWgmmaM) * kK && b.size() == size_t(n) * kK, "wgmma_probe: a or b of a wrong size");
  DeviceBuffer<int8_t> device_a(a.size()), device_b(b.size());
  DeviceBuffer<int32_t> device_d(size_t(kThreads) * n / 2);
  CUDA_CHECK(cudaMemcpy(device_a.get(), a.data(), a.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(device_b.get(), b.data(), b.size(), cudaMemcpyHostToDevice));
  if (n == 64)
    a_unsigned ? launch<64, true>(device_a.get(), device_b.get(), device_d.get())
               : launch<64, false>(device_a.get(), device_b.get(), device_d.get());
  else
    a_unsigned ? launch<256, true>(device_a.get(), device_b.get(), device_d.get())
               : launch<256, false>(device_a.get(), device_b.get(), device_d.get());
  std::vector<int32_t> d(size_t(kThreads) * n / 2);
  CUDA_CHECK(cudaMemcpy(d.data(), device_d.get(), d.size() * sizeof(int32_t), cudaMemcpyDeviceToHost));
  return d;
}

}  // namespace octet::cuda
