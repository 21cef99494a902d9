// ChannelMax: the largest of each pixel's channels, one channel out (ONNX's
// ReduceMax over axis 1 with keepdims: CBAM's spatial attention reads it).
// int8 values keep their scale: the maximum of int8 values is exact.
#include <algorithm>

#include "graph/ops/int8_reference.h"

namespace octet::ops {

namespace {
ActShape shape(const Node&, const std::vector<ActShape>& in) { return {1, in[0].h, in[0].w}; }

void run_float(const FloatOpArgs& a) {
  const int64_t channels = a.in[0].c, pixels = a.y.numel();
  const float* x = a.inputs[0]->ptr();
  for (int64_t p = 0; p < pixels; ++p) a.y.data[p] = *std::max_element(x + p * channels, x + (p + 1) * channels);
}

// Its own loop, not write_by_pixel: the maximum keeps its input's levels, which may be wider than 8 bits.
void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3);
  a.y = ActTensor({a.batch, 1, H, W});
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t y = 0; y < H; ++y)
      for (int64_t w = 0; w < W; ++w) {
        int16_t best = at(x, b, 0, y, w);
        for (int64_t c = 1; c < C; ++c) best = std::max(best, at(x, b, c, y, w));
        at(a.y, b, 0, y, w) = best;
      }
}
}  // namespace

//                                name           in train  weight image  relu   resid  scale  mult  moves
extern const OpDef channel_max = {{Op::ChannelMax, "channel_max", 1, false, false, true, false, false, false, 0, false},
                                  shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
