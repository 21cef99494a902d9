// One int8 x int8 -> int32 GEMM shape for cuBLASLt, planned once (layouts and
// algorithm) and then run any number of times, also inside a CUDA graph.
//
// cuBLASLt's int8 kernels on Hopper take plain column-major operands in the
// "TN" form only, with m, k and the leading dimensions multiples of 4. A conv
// fits it directly: the row-major weights [m][k] are a column-major k x m
// matrix used transposed, the row-major patches [n][k] a column-major k x n
// matrix, and the column-major m x n result is the row-major NHWC [n][m]
// output (m = padded output channels, n = output pixels, k = patch size).
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include "runtime/cuda/common.cuh"

namespace octet::cuda {

class LtGemm {
 public:
  // Why cuBLASLt's int8 path cannot take this shape, or "".
  static std::string unsupported(int64_t m, int64_t n, int64_t k);

  // Picks the algorithm; fails when cuBLASLt offers none for the shape.
  LtGemm(cublasLtHandle_t handle, int64_t m, int64_t n, int64_t k, size_t workspace_bytes);

  // out[n][m] = sum_k patches[n][k] * weights[m][k]; the pointers 16-byte
  // aligned, `workspace` at least workspace_bytes.
  void run(const int8_t* weights, const int8_t* patches, int32_t* out, void* workspace, cudaStream_t stream) const;

 private:
  template <typename Handle, auto CublasLtLibrary::*Destroy>
  struct Destroyer {
    void operator()(Handle h) const { (cublaslt().*Destroy)(h); }
  };
  using MatmulDesc = std::unique_ptr<std::remove_pointer_t<cublasLtMatmulDesc_t>,
                                     Destroyer<cublasLtMatmulDesc_t, &CublasLtLibrary::desc_destroy>>;
  using Layout = std::unique_ptr<std::remove_pointer_t<cublasLtMatrixLayout_t>,
                                 Destroyer<cublasLtMatrixLayout_t, &CublasLtLibrary::layout_destroy>>;
  using Preference = std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>,
                                     Destroyer<cublasLtMatmulPreference_t, &CublasLtLibrary::preference_destroy>>;
  static Layout make_layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld);

  cublasLtHandle_t handle_;
  size_t workspace_bytes_;
  MatmulDesc desc_;
  Layout weights_, patches_, out_;
  cublasLtMatmulAlgo_t algo_{};
};

}  // namespace octet::cuda
