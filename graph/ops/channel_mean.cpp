// ChannelMean: the mean of each pixel's channels, one channel out (ONNX's
// ReduceMean over axis 1 with keepdims: CBAM's spatial attention reads it).
// In int8 the sum of the channels' values less the zero point is requantized
// to the output's own scale, as a global average pool's plane sum.
#include "graph/ops/int8_reference.h"

namespace octet::ops {

namespace {
ActShape shape(const Node&, const std::vector<ActShape>& in) { return {1, in[0].h, in[0].w}; }

std::vector<double> windows(const Node&, const std::vector<ActShape>& in) { return {double(in[0].c)}; }

void run_float(const FloatOpArgs& a) {
  const int64_t channels = a.in[0].c, pixels = a.y.numel();
  const float* x = a.inputs[0]->ptr();
  const float inv = 1.0f / static_cast<float>(channels);
  for (int64_t p = 0; p < pixels; ++p) {
    float acc = 0;
    for (int64_t c = 0; c < channels; ++c) acc += x[p * channels + c];
    a.y.data[p] = acc * inv;
  }
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const int32_t zero_point = a.input_zero_points.at(0);
  write_by_pixel(a, 1, [&](const int16_t* x, int64_t channels, int8_t* y) {
    int32_t sum = 0;
    for (int64_t c = 0; c < channels; ++c) sum += x[c] - zero_point;  // a real 0 is 0
    *y = static_cast<int8_t>(requantize(sum, a.q.multiplier.data[0], 0, 0, a.q.shift.data[0], -128, a.q.zero_point));
  });
}
}  // namespace

//                                 name            in train  weight image  relu   resid  scale  mult  moves
extern const OpDef channel_mean = {{Op::ChannelMean, "channel_mean", 1, false, false, true, false, false, true, 1,
                                    false},
                                   shape, nullptr, nullptr, windows, run_float, run_int8_reference};

}  // namespace octet::ops
