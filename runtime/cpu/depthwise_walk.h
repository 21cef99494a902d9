// The walk of the SIMD depthwise kernels (depthwise_vnni.cpp,
// depthwise_avx2.cpp) over output rows shared between threads
// (for_each_output_row) and, for depthwise_vnni.cpp, a pixel's taps inside
// the image as two ranges (inner_taps; zero padding adds nothing, so the
// others are skipped).
// Internal linkage: each kernel file compiles them with its own instruction
// set, and none of it reaches another file's callers.
#pragma once

#include <cstdint>

#include "runtime/cpu/kernels.h"

namespace octet::cpu {
namespace {

// Smaller layers run on the calling thread: waking the others would cost
// more than they save. Their work counts each output's requantization as
// kEpilogueMacs multiply-adds besides its taps': a 1x1 depthwise conv (a batch
// norm on its own, as DenseNet's import) is nearly all epilogue, and counted
// by its taps alone most of DenseNet-121's ran on one thread.
constexpr int64_t kDepthwiseMinParallelWork = int64_t{1} << 22;
constexpr int64_t kEpilogueMacs = 16;

inline bool depthwise_in_parallel(const ConvGeometry& g) {
  return g.rows() * g.out_c * (g.kernel * g.kernel + kEpilogueMacs) >= kDepthwiseMinParallelWork;
}

// The kernel indices [first, end) of output coordinate `o` whose input
// coordinate o * stride - padding + k * dilation lies inside [0, size).
struct InnerTaps {
  int first, end;
};
inline InnerTaps inner_taps(int64_t o, int64_t size, const ConvGeometry& g) {
  const int64_t origin = o * g.stride - g.padding;
  InnerTaps t{0, g.kernel};
  while (t.first < t.end && origin + int64_t(t.first) * g.dilation < 0) ++t.first;
  while (t.end > t.first && origin + int64_t(t.end - 1) * g.dilation >= size) --t.end;
  return t;
}

// Calls row(b, oy) for every output row oy of every image b, rows shared
// between threads.
template <typename Row>
inline void for_each_output_row(const ConvGeometry& g, Row row) {
  const int64_t rows = g.batch * g.out_h;
#pragma omp parallel for schedule(static) if (depthwise_in_parallel(g))
  for (int64_t r = 0; r < rows; ++r) row(r / g.out_h, r % g.out_h);
}

}  // namespace
}  // namespace octet::cpu
