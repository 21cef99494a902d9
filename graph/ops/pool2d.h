// What max_pool2d and avg_pool2d share: the window's shape rule and the
// loops over each output's window (no padding; stride and kernel square).
#pragma once

#include <algorithm>

#include "common/error.h"
#include "graph/ops/int8_reference.h"
#include "graph/ops/shape_rules.h"

namespace octet::ops {

inline ActShape pool_shape(const Node& n, const std::vector<ActShape>& in) {
  const ActShape x = in[0];
  check(n.kernel > 0 && n.stride > 0, "bad pool attributes");
  const ActShape y = {x.c, static_cast<int>(window_positions(x.h, n.kernel, n.stride, 0)),
                      static_cast<int>(window_positions(x.w, n.kernel, n.stride, 0))};
  check(y.h > 0 && y.w > 0, "pool window larger than the input " + to_string(x));
  return y;
}

// y = finish(reduce over the window of each output), NHWC float.
template <typename Reduce, typename Finish>
void pool_float(const FloatOpArgs& a, float init, Reduce reduce, Finish finish) {
  const Node& n = a.node;
  const FloatTensor& x = *a.inputs[0];
  const ActShape in = a.in[0], out = a.out;
  const int64_t N = x.dim(0);
#pragma omp parallel for
  for (int64_t b = 0; b < N; ++b)
    for (int oy = 0; oy < out.h; ++oy)
      for (int ox = 0; ox < out.w; ++ox)
        for (int c = 0; c < out.c; ++c) {
          float acc = init;
          for (int ky = 0; ky < n.kernel; ++ky)
            for (int kx = 0; kx < n.kernel; ++kx)
              acc = reduce(acc, x.data[((b * in.h + oy * n.stride + ky) * in.w + ox * n.stride + kx) * in.c + c]);
          a.y.data[((b * out.h + oy) * out.w + ox) * out.c + c] = finish(acc);
        }
}

// y = finish(max and sum of each output's window), NCHW int8.
template <typename Finish>
void pool_int8_reference(const Int8ReferenceArgs& a, Finish finish) {
  const Node& n = a.node;
  const Int8Tensor& x = *a.inputs[0];
  const int64_t C = x.dim(1), OH = (x.dim(2) - n.kernel) / n.stride + 1, OW = (x.dim(3) - n.kernel) / n.stride + 1;
  a.y = Int8Tensor({a.batch, C, OH, OW});
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          int32_t best = -128, sum = 0;
          for (int ky = 0; ky < n.kernel; ++ky)
            for (int kx = 0; kx < n.kernel; ++kx) {
              const int8_t v = at(x, b, c, oy * n.stride + ky, ox * n.stride + kx);
              best = std::max<int32_t>(best, v);
              sum += v;
            }
          at(a.y, b, c, oy, ox) = static_cast<int8_t>(finish(best, sum));
        }
}

}  // namespace octet::ops
