#include "runtime/cuda/conv2d_imma.cuh"
#include "runtime/cuda/conv2d_imma_kernel.cuh"

#include "common/env_switch.h"

namespace octet::cuda {

namespace {

bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// Calls f(t, u) (integral constants) for an mma.sync tile; false for a wgmma
// tile, whose kernels only conv2d_wgmma.cu compiles (for sm_90a).
template <typename F>
bool with_mma_kernel(int tile, StoredInput input, F f) {
  bool mma = false;
  with_kernel(tile, input, [&](auto t, auto u) {
    if constexpr (igemm::tile_config(decltype(t)::value).wgmma_n == 0) {
      mma = true;
      f(t, u);
    }
  });
  return mma;
}

}  // namespace

bool wgmma_offered() { return env_switch("OCTET_WGMMA").value_or(false) && current_compute_capability() == 90; }

std::vector<int> conv2d_imma_prepare() {
  std::vector<int> resident(igemm::kTileCount, 0);
  const bool wgmma = wgmma_offered();
  for (int tile = 0; tile < igemm::kTileCount; ++tile) {
    if (igemm::tile_config(tile).wgmma_n > 0) {
      if (wgmma) resident[tile] = conv2d_wgmma_prepare(tile);
      continue;
    }
    for (const StoredInput input : kStoredInputs)  // the cost model takes the signed kernel's residency
      with_mma_kernel(tile, input, [&](auto t, auto u) {
        constexpr igemm::TileConfig c = igemm::tile_config(decltype(t)::value);
        const auto kernel = conv2d_imma_kernel<decltype(t)::value, decltype(u)::value>;
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, c.shared_bytes()));
        if (input == StoredInput::kSigned)
          CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident[tile], kernel, c.threads(),
                                                                   c.shared_bytes()));
      });
  }
  return resident;
}

std::string conv2d_imma_kernel_info(int tile) {
  check(tile >= 0 && tile < igemm::kTileCount, "conv2d_imma_kernel_info: no tile " + std::to_string(tile));
  const igemm::TileConfig c = igemm::tile_config(tile);
  if (c.wgmma_n > 0 && !wgmma_offered()) return std::string(c.name) + ": not offered on this device";
  cudaFuncAttributes a{};
  // The signed kernel's: the others differ in their mma or run it twice.
  if (!with_mma_kernel(tile, StoredInput::kSigned, [&](auto t, auto) {
        CUDA_CHECK(cudaFuncGetAttributes(&a, conv2d_imma_kernel<decltype(t)::value, StoredInput::kSigned>));
      }))
    a = conv2d_wgmma_attributes(tile);
  return std::string(c.name) + ": " + std::to_string(c.threads()) + " threads, " + std::to_string(a.numRegs) +
         " registers, " + std::to_string(c.shared_bytes()) + " B dynamic shared memory, " +
         std::to_string(a.localSizeBytes) + " B local memory";
}

void conv2d_imma(const igemm::Problem& p, int tile, const int8_t* input, StoredInput input_kind, const int8_t* weights,
                 const RequantEpilogue& e, int8_t* output, KernelStream stream, const igemm::SplitK& split) {
  const std::string why = igemm::unsupported(p, tile);
  check(why.empty(), "cuda-imma conv2d cannot run this shape: " + why);
  const int k_tiles = igemm::ceil_div(p.packed_depth(), igemm::tile_config(tile).bk);
  check(split.slices == 1 || (igemm::tile_config(tile).splits_k() && split.slices <= k_tiles && split.partials &&
                               split.arrivals),
        "cuda-imma conv2d: " + std::to_string(split.slices) + " K slices of " + std::to_string(k_tiles) +
            " K tiles on " + igemm::tile_config(tile).name + ", which cannot split them so, or without buffers");
  check(aligned(input, 16) && aligned(weights, 16) && aligned(output, 16) && (!e.skip || aligned(e.skip, 16)),
        "cuda-imma conv2d: input, weights, output and residual must be 16-byte aligned");
  const bool mma = with_mma_kernel(tile, input_kind, [&](auto t, auto u) {
    constexpr int kTile = decltype(t)::value;
    constexpr igemm::TileConfig c = igemm::tile_config(kTile);
    const dim3 grid(static_cast<unsigned>(igemm::ceil_div(p.rows(), c.bm)),
                    static_cast<unsigned>(igemm::ceil_div(p.out_c, c.bn)), static_cast<unsigned>(split.slices));
    launch_kernel(conv2d_imma_kernel<kTile, decltype(u)::value>, grid, c.threads(), c.shared_bytes(), stream, p,
                  input, weights, e, output, split);
  });
  if (!mma) conv2d_wgmma(p, tile, input, input_kind, weights, e, output, stream, split);
}

}  // namespace octet::cuda
