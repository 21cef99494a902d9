// The walks of the SIMD depthwise kernels over output pixels and their taps
// inside the image (zero padding adds nothing, so the others are skipped):
// depthwise_vnni.cpp takes pixels in tasks shared between threads and the
// taps of each (for_each_pixel_task, for_each_inner_tap); depthwise_avx2.cpp
// takes rows (for_each_output_row) and a pixel's taps as two ranges
// (inner_taps). Internal linkage: each kernel file compiles them with its own
// instruction set, and none of it reaches another file's callers.
#pragma once

#include <cstdint>

#include "runtime/cpu/kernels.h"

namespace octet::cpu {
namespace {

// Output pixels per unit of work shared among threads.
constexpr int64_t kDepthwisePixelsPerTask = 64;
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

// Calls task(first, end) for the output pixels [first, end) of every task.
template <typename Task>
inline void for_each_pixel_task(const ConvGeometry& g, Task task) {
  const int64_t pixels = g.rows();
  const int64_t tasks = (pixels + kDepthwisePixelsPerTask - 1) / kDepthwisePixelsPerTask;
#pragma omp parallel for schedule(static) if (depthwise_in_parallel(g))
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t end = pixels < (t + 1) * kDepthwisePixelsPerTask ? pixels : (t + 1) * kDepthwisePixelsPerTask;
    task(t * kDepthwisePixelsPerTask, end);
  }
}

// An output pixel's coordinates, stepped through pixels in order without a
// division per pixel.
struct OutputPixel {
  int64_t b, oy, ox;
  OutputPixel(const ConvGeometry& g, int64_t m)
      : b(m / (int64_t(g.out_w) * g.out_h)), oy((m / g.out_w) % g.out_h), ox(m % g.out_w) {}
  void next(const ConvGeometry& g) {
    if (++ox < g.out_w) return;
    ox = 0;
    if (++oy < g.out_h) return;
    oy = 0;
    ++b;
  }
};

// Calls tap(offset, t) for every tap t (ky * kernel + kx) of output pixel p
// inside the image, `offset` being its input pixel's first value (NHWC).
template <typename Tap>
__attribute__((always_inline)) inline void for_each_inner_tap(const ConvGeometry& g, const OutputPixel& p, Tap tap) {
  const int64_t b = p.b, oy = p.oy, ox = p.ox;
  for (int64_t ky = 0; ky < g.kernel; ++ky) {
    const int64_t iy = oy * g.stride - g.padding + ky * g.dilation;
    if (iy < 0 || iy >= g.in_h) continue;
    for (int64_t kx = 0; kx < g.kernel; ++kx) {
      const int64_t ix = ox * g.stride - g.padding + kx * g.dilation;
      if (ix < 0 || ix >= g.in_w) continue;
      tap(((b * g.in_h + iy) * g.in_w + ix) * g.in_c, ky * g.kernel + kx);
    }
  }
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
