// GlobalAvgPool: the mean of each channel's plane. In int8 the plane's sum is
// requantized to the output's own scale.
#include "graph/ops/int8_reference.h"

namespace octet::ops {

namespace {
ActShape shape(const Node&, const std::vector<ActShape>& in) { return {in[0].c, 1, 1}; }

std::vector<double> windows(const Node&, const std::vector<ActShape>& in) { return {double(in[0].h) * in[0].w}; }

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  const ActShape in = a.in[0];
  const int64_t plane = static_cast<int64_t>(in.h) * in.w;
  const float inv = 1.0f / static_cast<float>(plane);
  for (int64_t b = 0; b < x.dim(0); ++b)
    for (int c = 0; c < in.c; ++c) {
      float acc = 0;
      for (int64_t p = 0; p < plane; ++p) acc += x.data[(b * plane + p) * in.c + c];
      a.y.data[b * in.c + c] = acc * inv;
    }
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3);
  a.y = ActTensor({a.batch, C, 1, 1});
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t c = 0; c < C; ++c) {
      int32_t sum = 0;
      for (int64_t y = 0; y < H; ++y)
        for (int64_t w = 0; w < W; ++w) sum += centered(a, 0, b, c, y, w);
      at(a.y, b, c, 0, 0) = static_cast<int16_t>(
          requantize(sum, a.q.multiplier.data[0], 0, 0, a.q.shift.data[0], -128, a.q.zero_point));
    }
}
}  // namespace

//                                    name               in train  weight image  relu   resid  scale  mult  moves
extern const OpDef global_avg_pool = {{Op::GlobalAvgPool, "global_avg_pool", 1, false, false, true, false, false, true, 1, false},
                                      shape, nullptr, nullptr, windows, run_float, run_int8_reference};

}  // namespace octet::ops
