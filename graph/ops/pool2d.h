// What max_pool2d and avg_pool2d share: the window's shape rule and the
// loops over each output's window. A window of kernel x kernel_width, its
// stride and padding each the same on either side of its direction
// (graph.h's pool_rows and pool_columns), and ceil_mode as torch and ONNX
// define them: the output size rounded up, the last window allowed past the
// input (not past its padding), and never one that starts in the padding alone.
#pragma once

#include <algorithm>

#include "common/error.h"
#include "graph/ops/int8_reference.h"
#include "graph/ops/shape_rules.h"

namespace octet::ops {

// Output positions along one direction.
inline int64_t pool_positions(int64_t size, const PoolAxis& a, bool ceil_mode) {
  const int64_t span = size + 2 * a.padding - a.kernel;
  if (!ceil_mode) return span / a.stride + 1;
  int64_t out = (span + a.stride - 1) / a.stride + 1;
  if ((out - 1) * a.stride >= size + a.padding) --out;  // the last window would start in the padding
  return out;
}

inline ActShape pool_shape(const Node& n, const std::vector<ActShape>& in) {
  const ActShape x = in[0];
  const PoolAxis rows = pool_rows(n), columns = pool_columns(n);
  for (const PoolAxis& a : {rows, columns}) {
    check(a.kernel > 0 && a.stride > 0 && a.padding >= 0, "bad pool attributes");
    check(2 * a.padding <= a.kernel, "padding " + std::to_string(a.padding) + " is more than half the kernel " +
                                         std::to_string(a.kernel));
  }
  check(x.h + 2 * rows.padding >= rows.kernel && x.w + 2 * columns.padding >= columns.kernel,
        "pool window larger than the padded input " + to_string(x));
  return {x.c, static_cast<int>(pool_positions(x.h, rows, n.ceil_mode)),
          static_cast<int>(pool_positions(x.w, columns, n.ceil_mode))};
}

// One output's window along one direction: [begin, end) inside the input,
// and `counted`, its length with padding (not past it), which torch divides by.
struct PoolSpan {
  int begin, end, counted;
};

inline PoolSpan pool_span(int out_index, int size, const PoolAxis& a) {
  const int start = out_index * a.stride - a.padding;
  const int stop = std::min(start + a.kernel, size + a.padding);
  return {std::max(start, 0), std::min(stop, size), stop - start};
}

// The values an average divides a window's sum by: those inside the input,
// and the padding too unless exclude_padding.
inline int pool_count(const PoolSpan& sy, const PoolSpan& sx, const Node& n) {
  return n.exclude_padding ? (sy.end - sy.begin) * (sx.end - sx.begin) : sy.counted * sx.counted;
}

// Whether every window holds kernel x kernel_width counted values: no window
// cut short by ceil_mode, and the padding counted where there is some.
inline bool pool_windows_uniform(const Node& n, const ActShape& in, const ActShape& out) {
  const PoolAxis rows = pool_rows(n), columns = pool_columns(n);
  if ((rows.padding > 0 || columns.padding > 0) && n.exclude_padding) return false;
  return pool_span(out.h - 1, in.h, rows).counted == rows.kernel &&
         pool_span(out.w - 1, in.w, columns).counted == columns.kernel;
}

// An int8 average pool requantizes each window's sum with the multiplier of
// its count: one multiplier where every window counts kernel x kernel_width
// values, else one for each count from 1 to that (entry count - 1).
constexpr int kMostUnevenPoolKernel = 64;
inline int64_t avg_pool_multiplier_count(const Node& n, const ActShape& in, const ActShape& out) {
  return pool_windows_uniform(n, in, out) ? 1 : int64_t{n.kernel} * kernel_width(n);
}
inline int32_t avg_pool_multiplier(const Int32Tensor& multipliers, int count) {
  return multipliers.data[multipliers.numel() == 1 ? 0 : static_cast<size_t>(count - 1)];
}

// y = finish(reduce over the window of each output, its counted size), NHWC float.
template <typename Reduce, typename Finish>
void pool_float(const FloatOpArgs& a, float init, Reduce reduce, Finish finish) {
  const Node& n = a.node;
  const FloatTensor& x = *a.inputs[0];
  const ActShape in = a.in[0], out = a.out;
  const int64_t N = x.dim(0);
#pragma omp parallel for
  for (int64_t b = 0; b < N; ++b)
    for (int oy = 0; oy < out.h; ++oy)
      for (int ox = 0; ox < out.w; ++ox) {
        const PoolSpan sy = pool_span(oy, in.h, pool_rows(n)), sx = pool_span(ox, in.w, pool_columns(n));
        const int count = pool_count(sy, sx, n);
        for (int c = 0; c < out.c; ++c) {
          float acc = init;
          for (int iy = sy.begin; iy < sy.end; ++iy)
            for (int ix = sx.begin; ix < sx.end; ++ix) acc = reduce(acc, x.data[((b * in.h + iy) * in.w + ix) * in.c + c]);
          a.y.data[((b * out.h + oy) * out.w + ox) * out.c + c] = finish(acc, count);
        }
      }
}

// y = finish(max and sum of each output's window, its count), NCHW int8; the
// sum is of values less the input's zero point, so the padding adds nothing.
template <typename Finish>
void pool_int8_reference(const Int8ReferenceArgs& a, Finish finish) {
  const Node& n = a.node;
  const ActTensor& x = *a.inputs[0];
  const int64_t C = x.dim(1);
  const int H = static_cast<int>(x.dim(2)), W = static_cast<int>(x.dim(3));
  const int64_t OH = pool_positions(H, pool_rows(n), n.ceil_mode), OW = pool_positions(W, pool_columns(n), n.ceil_mode);
  a.y = ActTensor({a.batch, C, OH, OW});
  const int32_t zero_point = a.input_zero_points.at(0);
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int oy = 0; oy < OH; ++oy)
        for (int ox = 0; ox < OW; ++ox) {
          const PoolSpan sy = pool_span(oy, H, pool_rows(n)), sx = pool_span(ox, W, pool_columns(n));
          int32_t best = -128, sum = 0;
          for (int iy = sy.begin; iy < sy.end; ++iy)
            for (int ix = sx.begin; ix < sx.end; ++ix) {
              const int16_t v = at(x, b, c, iy, ix);
              best = std::max<int32_t>(best, v);
              sum += v - zero_point;
            }
          at(a.y, b, c, oy, ox) = static_cast<int16_t>(finish(best, sum, pool_count(sy, sx, n)));
        }
}

}  // namespace octet::ops
