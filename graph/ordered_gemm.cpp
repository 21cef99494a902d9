#include "graph/ordered_gemm.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "common/error.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "graph/ordered_gemm_kernel.h"
#endif

namespace octet {

#if defined(OCTET_ORDERED_GEMM_AVX512)
void ordered_gemm_avx512(const OrderedGemm& g);  // ordered_gemm_avx512.cpp
#endif

namespace {

void reference(const OrderedGemm& g) {
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t j = 0; j < g.cols; ++j) {
      float& out = g.c[i * g.c_row_stride + j];
      float sum = g.accumulate ? out : 0.0f;
      for (int64_t k = 0; k < g.depth; ++k)
        sum = std::fma(g.a[i * g.a_row_stride + k * g.a_depth_stride], g.b[k * g.b_depth_stride + j], sum);
      out = sum;
    }
}

#if defined(__x86_64__)
// 16 ymm registers: 12 accumulators, the B vectors and a broadcast.
struct Avx2 {
  using Reg = __m256;
  static constexpr int kLanes = 8, kAccumulators = 12, kMaxVectors = 2;
  static __m256i mask(int lanes) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg load(const float* p, int lanes) {
    return lanes == kLanes ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask(lanes));
  }
  static Reg load_full(const float* p) { return _mm256_loadu_ps(p); }
  static Reg broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(float* p, Reg v, int lanes) {
    if (lanes == kLanes)
      _mm256_storeu_ps(p, v);
    else
      _mm256_maskstore_ps(p, mask(lanes), v);
  }
};
#endif

bool has_avx512() {
#if defined(OCTET_ORDERED_GEMM_AVX512)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

}  // namespace

std::vector<OrderedGemmPath> ordered_gemm_paths() {
  std::vector<OrderedGemmPath> paths = {OrderedGemmPath::Reference};
#if defined(__x86_64__)
  paths.push_back(OrderedGemmPath::Avx2);  // the build's baseline (x86-64-v3)
#endif
  if (has_avx512()) paths.push_back(OrderedGemmPath::Avx512);
  return paths;
}

const char* ordered_gemm_path_name(OrderedGemmPath path) {
  switch (path) {
    case OrderedGemmPath::Reference: return "reference";
    case OrderedGemmPath::Avx2: return "avx2";
    case OrderedGemmPath::Avx512: return "avx512";
  }
  return "?";
}

namespace {
OrderedGemmPath chosen_path() {
  const std::vector<OrderedGemmPath> paths = ordered_gemm_paths();
  const char* wanted = std::getenv("OCTET_ORDERED_GEMM");
  if (!wanted || !*wanted) return paths.back();
  std::string known;
  for (OrderedGemmPath p : paths) {
    if (std::string(wanted) == ordered_gemm_path_name(p)) return p;
    known += std::string(known.empty() ? "" : ", ") + ordered_gemm_path_name(p);
  }
  fail("OCTET_ORDERED_GEMM='" + std::string(wanted) + "' is not a path this CPU has (" + known + ")");
}
}  // namespace

OrderedGemmPath ordered_gemm_default_path() {
  static const OrderedGemmPath path = chosen_path();
  return path;
}

void ordered_gemm(const OrderedGemm& g) { ordered_gemm(g, ordered_gemm_default_path()); }

void ordered_gemm(const OrderedGemm& g, OrderedGemmPath path) {
  if (g.rows <= 0 || g.cols <= 0) return;
  switch (path) {
    case OrderedGemmPath::Reference: return reference(g);
#if defined(__x86_64__)
    case OrderedGemmPath::Avx2: return ordered_gemm_kernel::run<Avx2>(g);
#endif
#if defined(OCTET_ORDERED_GEMM_AVX512)
    case OrderedGemmPath::Avx512:
      check(has_avx512(), "ordered_gemm: this CPU has no AVX-512");
      return ordered_gemm_avx512(g);
#endif
    default: fail("ordered_gemm: this build has no such path");
  }
}

std::vector<float> transpose_padded(const float* w, int64_t rows, int64_t cols) {
  const int64_t padded = ordered_gemm_padded(rows);
  std::vector<float> out(static_cast<size_t>(cols * padded), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * padded + r] = w[r * cols + c];
  return out;
}

}  // namespace octet
