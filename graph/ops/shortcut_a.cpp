// ShortcutA: He et al.'s option-A shortcut of the CIFAR ResNets: every second
// row and column, and `channels` zero channels added on each side. Exact on
// int8 values (it keeps its input's scale).
#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "graph/ops/int8_reference.h"
#include "graph/ops/shape_rules.h"

namespace octet::ops {

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  const ActShape x = in[0];
  check(n.channels >= 0, "bad channel padding");
  const int64_t c = x.c + 2 * int64_t{n.channels};
  check(within_bound(c, (x.h + 1) / 2, (x.w + 1) / 2), "output has more than 2^31 - 1 values");
  return {static_cast<int>(c), (x.h + 1) / 2, (x.w + 1) / 2};
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  const ActShape in = a.in[0], out = a.out;
  FloatTensor& y = a.y;
  std::fill(y.data.begin(), y.data.end(), 0.0f);
  for (int64_t b = 0; b < x.dim(0); ++b)
    for (int oy = 0; oy < out.h; ++oy)
      for (int ox = 0; ox < out.w; ++ox)
        std::memcpy(y.ptr() + ((b * out.h + oy) * out.w + ox) * out.c + a.node.channels,
                    x.ptr() + ((b * in.h + 2 * oy) * in.w + 2 * ox) * in.c, sizeof(float) * in.c);
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const int64_t C = x.dim(1), pad = a.node.channels, OC = C + 2 * pad, OH = (x.dim(2) + 1) / 2, OW = (x.dim(3) + 1) / 2;
  a.y = ActTensor({a.batch, OC, OH, OW});
  const auto zero = static_cast<int16_t>(a.input_zero_points.at(0));  // a real 0
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t c = 0; c < OC; ++c)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          const int64_t src = c - pad;
          at(a.y, b, c, oy, ox) = (src >= 0 && src < C) ? at(x, b, src, 2 * oy, 2 * ox) : zero;
        }
}
}  // namespace

//                               name          in train  weight image  relu   resid  scale  mult  moves
extern const OpDef shortcut_a = {{Op::ShortcutA, "shortcut_a", 1, false, false, true, false, false, false, 0, true},
                                 shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
