// OrderedGemm's AVX-512 tiles: only this file is compiled for AVX-512, and
// ordered_gemm() calls it where the CPU has it.
#include <immintrin.h>

#include "graph/ordered_gemm.h"
#include "graph/ordered_gemm_kernel.h"

namespace octet {

namespace {
// 32 zmm registers: 24 accumulators, the B vectors and a broadcast.
struct Avx512 {
  using Reg = __m512;
  static constexpr int kLanes = 16, kAccumulators = 24, kMaxVectors = 4;
  static __mmask16 mask(int lanes) { return static_cast<__mmask16>((1u << lanes) - 1); }
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg load(const float* p, int lanes) { return _mm512_maskz_loadu_ps(mask(lanes), p); }
  static Reg load_full(const float* p) { return _mm512_loadu_ps(p); }
  static Reg broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static void store(float* p, Reg v, int lanes) { _mm512_mask_storeu_ps(p, mask(lanes), v); }
};
}  // namespace

void ordered_gemm_avx512(const OrderedGemm& g) { ordered_gemm_kernel::run<Avx512>(g); }

}  // namespace octet
