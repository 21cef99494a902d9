// cuda-imma's wgmma tiles (implicit_gemm.h: tile_config(t).wgmma_n > 0),
// compiled for sm_90a alone (CMake's octet_conv2d_wgmma objects: wgmma is in
// no other target). conv2d_imma.cu calls these for those tiles, on devices of
// compute capability 9.0 only.
#include "runtime/cuda/conv2d_imma.cuh"
#include "runtime/cuda/conv2d_imma_kernel.cuh"

namespace octet::cuda {

namespace {

// Calls f(kernel, config) with the wgmma tile's kernel for `input`.
template <typename F>
void with_wgmma_kernel(int tile, StoredInput input, F f) {
  check(tile >= 0 && tile < igemm::kTileCount && igemm::tile_config(tile).wgmma_n > 0,
        "cuda-imma: tile " + std::to_string(tile) + " is not a wgmma tile");
  with_kernel(tile, input, [&](auto t, auto u) {
    constexpr igemm::TileConfig c = igemm::tile_config(decltype(t)::value);
    if constexpr (c.wgmma_n > 0) f(conv2d_imma_kernel<decltype(t)::value, decltype(u)::value>, c);
  });
}

}  // namespace

int conv2d_wgmma_prepare(int tile) {
  int resident = 0;
  for (const StoredInput input : kStoredInputs)
    with_wgmma_kernel(tile, input, [&](auto kernel, const igemm::TileConfig& c) {
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, c.shared_bytes()));
      if (input == StoredInput::kSigned)
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, c.threads(), c.shared_bytes()));
    });
  return resident;
}

cudaFuncAttributes conv2d_wgmma_attributes(int tile) {
  cudaFuncAttributes a{};
  with_wgmma_kernel(tile, StoredInput::kSigned,
                    [&](auto kernel, const igemm::TileConfig&) { CUDA_CHECK(cudaFuncGetAttributes(&a, kernel)); });
  return a;
}

void conv2d_wgmma(const igemm::Problem& p, int tile, const int8_t* input, StoredInput input_kind,
                  const int8_t* weights, const RequantEpilogue& e, int8_t* output, KernelStream stream,
                  const igemm::SplitK& split) {
  with_wgmma_kernel(tile, input_kind, [&](auto kernel, const igemm::TileConfig& c) {
    const dim3 grid(static_cast<unsigned>(igemm::ceil_div(p.rows(), c.bm)),
                    static_cast<unsigned>(igemm::ceil_div(p.out_c, c.bn)), static_cast<unsigned>(split.slices));
    launch_kernel(kernel, grid, c.threads(), c.shared_bytes(), stream, p, input, weights, e, output, split);
  });
}

}  // namespace octet::cuda
