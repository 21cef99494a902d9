// A float matrix product whose every output is one chain of fused
// multiply-adds in depth order, so its bits do not depend on the vector width
// (AVX2 or AVX-512), the cache sizes or the thread count: the float pass, and
// so the calibration and the quantized file, are the same on every x86 CPU.
// (Eigen's product is not: its blocking, and so its rounding, follows the
// packet size and the caches.)
#pragma once

#include <cstdint>
#include <vector>

namespace octet {

// C(i, j) = [C(i, j) if accumulate, else 0], then for k = 0 .. depth-1 in
// order: C(i, j) = fma(A(i, k), B(k, j), C(i, j)).
struct OrderedGemm {
  int64_t rows = 0, cols = 0, depth = 0;
  const float* a = nullptr;  // A(i, k) = a[i * a_row_stride + k * a_depth_stride]
  int64_t a_row_stride = 0, a_depth_stride = 0;
  // B(k, j) = b[k * b_depth_stride + j]; each row must be readable up to
  // cols rounded up to kOrderedGemmPadding (the padding's values are not used).
  const float* b = nullptr;
  int64_t b_depth_stride = 0;
  float* c = nullptr;  // C(i, j) = c[i * c_row_stride + j]
  int64_t c_row_stride = 0;
  bool accumulate = false;
};

constexpr int64_t kOrderedGemmPadding = 16;

enum class OrderedGemmPath { Reference, Avx2, Avx512 };

// The paths this CPU can run, the reference first.
std::vector<OrderedGemmPath> ordered_gemm_paths();
const char* ordered_gemm_path_name(OrderedGemmPath path);  // "reference", "avx2", "avx512"
// Runs on the calling thread, by the fastest path this CPU has, or the one
// the environment variable OCTET_ORDERED_GEMM names (every path gives the
// same bits; tests compare them on whole quantize runs).
void ordered_gemm(const OrderedGemm& g);
void ordered_gemm(const OrderedGemm& g, OrderedGemmPath path);
// The path ordered_gemm(g) takes; throws on a bad OCTET_ORDERED_GEMM. Users
// call it before their parallel regions, where an exception would terminate.
OrderedGemmPath ordered_gemm_default_path();

// w [rows][cols] transposed to [cols][rows rounded up to kOrderedGemmPadding],
// zero-padded: a weight [out][depth] as an OrderedGemm's B.
std::vector<float> transpose_padded(const float* w, int64_t rows, int64_t cols);
inline int64_t ordered_gemm_padded(int64_t n) {
  return (n + kOrderedGemmPadding - 1) / kOrderedGemmPadding * kOrderedGemmPadding;
}

}  // namespace octet
