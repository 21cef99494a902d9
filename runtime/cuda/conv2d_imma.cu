#include "runtime/cuda/conv2d_imma.cuh"
#include "runtime/cuda/conv2d_imma_kernel.cuh"

namespace octet::cuda {

namespace {

bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

}  // namespace

std::vector<int> conv2d_imma_prepare() {
  std::vector<int> resident(igemm::kTileCount, 0);
  for (int tile = 0; tile < igemm::kTileCount; ++tile)
    for (const StoredInput input : kStoredInputs)  // the cost model takes the signed kernel's residency
      with_kernel(tile, input, [&](auto t, auto u) {
        constexpr igemm::TileConfig c = igemm::tile_config(decltype(t)::value);
        const auto kernel = conv2d_imma_kernel<decltype(t)::value, decltype(u)::value>;
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, c.shared_bytes()));
        if (input == StoredInput::kSigned)
          CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident[tile], kernel, c.threads(),
                                                                   c.shared_bytes()));
      });
  return resident;
}

std::string conv2d_imma_kernel_info(int tile) {
  check(tile >= 0 && tile < igemm::kTileCount, "conv2d_imma_kernel_info: no tile " + std::to_string(tile));
  cudaFuncAttributes a{};
  with_tile(tile, [&](auto t) {  // the signed kernel's: the others differ in their mma or run it twice
    CUDA_CHECK(cudaFuncGetAttributes(&a, conv2d_imma_kernel<decltype(t)::value, StoredInput::kSigned>));
  });
  const igemm::TileConfig c = igemm::tile_config(tile);
  return std::string(c.name) + ": " + std::to_string(c.threads()) + " threads, " + std::to_string(a.numRegs) +
         " registers, " + std::to_string(c.shared_bytes()) + " B dynamic shared memory, " +
         std::to_string(a.localSizeBytes) + " B local memory";
}

void conv2d_imma(const igemm::Problem& p, int tile, const int8_t* input, StoredInput input_kind, const int8_t* weights,
                 const RequantEpilogue& e, int8_t* output, cudaStream_t stream) {
  const std::string why = igemm::unsupported(p, tile);
  check(why.empty(), "cuda-imma conv2d cannot run this shape: " + why);
  check(aligned(input, 16) && aligned(weights, 16) && aligned(output, 16) && (!e.skip || aligned(e.skip, 16)),
        "cuda-imma conv2d: input, weights, output and residual must be 16-byte aligned");
  with_kernel(tile, input_kind, [&](auto t, auto u) {
    constexpr int kTile = decltype(t)::value;
    constexpr igemm::TileConfig c = igemm::tile_config(kTile);
    const dim3 grid(static_cast<unsigned>(igemm::ceil_div(p.rows(), c.bm)),
                    static_cast<unsigned>(igemm::ceil_div(p.out_c, c.bn)));
    conv2d_imma_kernel<kTile, decltype(u)::value>
        <<<grid, c.threads(), c.shared_bytes(), stream>>>(p, input, weights, e, output);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace octet::cuda
