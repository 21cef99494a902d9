// MaxPool2d on the CPU: the largest int8 value of each window. Each output
// pixel's channels at once, one window pixel at a time: restrict-qualified
// adjacent bytes, so the loop vectorizes (int8 pointers may otherwise alias,
// which kept it scalar: ResNet-50's 3x3 pool took 8% of its batch-1 time).
// Channels in whole sixteens keep each sixteen's running maximum in a
// register over the window instead (a U-Net's 16-channel 2x2 pools spent
// more on the loop's set-up, per window pixel, than on its maxima).
// Output rows are shared between threads, so that batch 1 uses them all.
#include <algorithm>
#include <cstring>

#include "graph/ops/pool2d.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel_for.h"

namespace octet::cpu {

namespace {
void max_into(int8_t* __restrict dst, const int8_t* __restrict src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], src[i]);
}

using Bytes16 = int8_t __attribute__((vector_size(16)));  // GCC's and Clang's vectors: SSE2, NEON

Bytes16 load16(const int8_t* p) {
  Bytes16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The window's maxima of `channels` (a multiple of 16) at `dst`: `rows` x `columns` pixels from `first`, rows
// `row_stride` values apart.
void max_window16(const int8_t* first, int rows, int columns, int64_t row_stride, int64_t channels, int8_t* dst) {
  for (int64_t c = 0; c < channels; c += 16) {
    Bytes16 best = load16(first + c);
    for (int iy = 0; iy < rows; ++iy)
      for (int ix = 0; ix < columns; ++ix) {
        const Bytes16 v = load16(first + iy * row_stride + ix * channels + c);
        const Bytes16 greater = v > best;  // each lane all ones or zeros
        best = (v & greater) | (best & ~greater);
      }
    std::memcpy(dst + c, &best, sizeof best);
  }
}

void run(const KernelArgs& a) {
  const ActShape in = a.node.input(), out = a.node.output();
  const Node& n = a.node.node();
  const PoolAxis down = pool_rows(n), across = pool_columns(n);
  const int64_t c = in.c, rows = a.batch * out.h;
  const int64_t work = rows * out.w * c * n.kernel * kernel_width(n);
  parallel_for(rows, work >= kMinParallelWork, [&](int64_t row) {
    const int64_t b = row / out.h;
    const ops::PoolSpan sy = ops::pool_span(static_cast<int>(row % out.h), in.h, down);
    for (int ox = 0; ox < out.w; ++ox) {
      const ops::PoolSpan sx = ops::pool_span(ox, in.w, across);
      int8_t* dst = a.y + (row * out.w + ox) * c;
      if (c % 16 == 0 && sy.end > sy.begin && sx.end > sx.begin) {
        max_window16(a.inputs[0] + ((b * in.h + sy.begin) * in.w + sx.begin) * c, sy.end - sy.begin,
                     sx.end - sx.begin, in.w * c, c, dst);
        continue;
      }
      std::memset(dst, -128, static_cast<size_t>(c));
      for (int iy = sy.begin; iy < sy.end; ++iy)
        for (int ix = sx.begin; ix < sx.end; ++ix) max_into(dst, a.inputs[0] + ((b * in.h + iy) * in.w + ix) * c, c);
    }
  });
}
}  // namespace

extern const Kernel max_pool2d_kernel = {Op::MaxPool2d, "max_pool2d", KernelPath::Reference, runs_every_node, nullptr,
                                         run};

}  // namespace octet::cpu
