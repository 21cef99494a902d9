#include "runtime/cuda/gemm_cublaslt.cuh"

#include <cstdint>

namespace octet::cuda {

namespace {
std::string shape_text(int64_t m, int64_t n, int64_t k) {
  return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k);
}
}  // namespace

std::string LtGemm::unsupported(int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0) return "empty GEMM " + shape_text(m, n, k);
  if (m % 4 != 0) return "m = " + std::to_string(m) + " (output channels) is not a multiple of 4";
  if (k % 4 != 0) return "k = " + std::to_string(k) + " (patch size) is not a multiple of 4";
  return "";
}

LtGemm::Layout LtGemm::make_layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld) {
  cublasLtMatrixLayout_t layout = nullptr;
  CUBLAS_CHECK(cublaslt().layout_create(&layout, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
  return Layout(layout);
}

LtGemm::LtGemm(cublasLtHandle_t handle, int64_t m, int64_t n, int64_t k, size_t workspace_bytes)
    : handle_(handle), workspace_bytes_(workspace_bytes) {
  const std::string why = unsupported(m, n, k);
  check(why.empty(), "cuBLASLt int8 GEMM: " + why);
  cublasLtMatmulDesc_t desc = nullptr;
  CUBLAS_CHECK(cublaslt().desc_create(&desc, CUBLAS_COMPUTE_32I, CUDA_R_32I));
  desc_.reset(desc);
  const cublasOperation_t transpose = CUBLAS_OP_T;
  CUBLAS_CHECK(cublaslt().desc_set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)));
  weights_ = make_layout(CUDA_R_8I, k, m, k);  // column-major k x m, used transposed
  patches_ = make_layout(CUDA_R_8I, k, n, k);  // column-major k x n
  out_ = make_layout(CUDA_R_32I, m, n, m);     // column-major m x n

  cublasLtMatmulPreference_t preference = nullptr;
  CUBLAS_CHECK(cublaslt().preference_create(&preference));
  const Preference preference_owner(preference);
  const uint64_t max_workspace = workspace_bytes;
  CUBLAS_CHECK(cublaslt().preference_set_attribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &max_workspace, sizeof(max_workspace)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublaslt().algo_get_heuristic(handle, desc, weights_.get(), patches_.get(), out_.get(),
                                                               out_.get(), preference, 1, &result, &found);
  check(status == CUBLAS_STATUS_SUCCESS && found > 0, "cuBLASLt offers no int8 algorithm for the TN GEMM " +
                                                          shape_text(m, n, k) + " (" + cublaslt().status_name(status) +
                                                          ", " + std::to_string(found) + " results)");
  algo_ = result.algo;
}

void LtGemm::run(const int8_t* weights, const int8_t* patches, int32_t* out, void* workspace,
                 cudaStream_t stream) const {
  check(reinterpret_cast<uintptr_t>(weights) % 16 == 0 && reinterpret_cast<uintptr_t>(patches) % 16 == 0 &&
            reinterpret_cast<uintptr_t>(out) % 16 == 0,
        "cuBLASLt int8 GEMM: operands must be 16-byte aligned");
  const int32_t alpha = 1, beta = 0;  // host pointer mode: read during the call
  CUBLAS_CHECK(cublaslt().matmul(handle_, desc_.get(), &alpha, weights, weights_.get(), patches, patches_.get(), &beta,
                              out, out_.get(), out, out_.get(), &algo_, workspace, workspace_bytes_, stream));
}

}  // namespace octet::cuda
