// ChannelSlice: the channels [offset, offset + channels) of its input (one
// output of ONNX's Split on channels, as ShuffleNet's chunk exports it). It
// moves values, so int8 keeps the input's scale.
#include "common/error.h"
#include "graph/ops/int8_reference.h"

namespace octet::ops {

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  check(n.offset >= 0 && n.channels > 0 && n.offset + int64_t{n.channels} <= in[0].c,
        "channels " + std::to_string(n.offset) + " to " + std::to_string(int64_t{n.offset} + n.channels) +
            " of an input of " + std::to_string(in[0].c));
  return {n.channels, in[0].h, in[0].w};
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  const int64_t channels = a.in[0].c, pixels = x.numel() / channels;
  for (int64_t p = 0; p < pixels; ++p)
    for (int c = 0; c < a.node.channels; ++c) a.y.data[p * a.node.channels + c] = x.data[p * channels + a.node.offset + c];
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const int64_t H = x.dim(2), W = x.dim(3);
  a.y = ActTensor({a.batch, a.node.channels, H, W});
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t c = 0; c < a.node.channels; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t w = 0; w < W; ++w) at(a.y, b, c, y, w) = at(x, b, a.node.offset + c, y, w);
}
}  // namespace

//                                  name             in train  weight image  relu   resid  scale  mult  moves
extern const OpDef channel_slice = {{Op::ChannelSlice, "channel_slice", 1, false, false, false, false, false, false, 0, true},
                                    shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
