// ChannelShuffle: ShuffleNet's channel shuffle, ONNX's Reshape [N, g, C/g,
// H, W] -> Transpose(1, 2) -> Reshape [N, C, H, W]: output channel c is input
// channel (c % g) * (C / g) + c / g. Attribute: groups (g). It moves values,
// so int8 keeps the input's scale.
#include "common/error.h"
#include "graph/ops/int8_reference.h"

namespace octet::ops {

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  check(n.groups > 0 && in[0].c % n.groups == 0,
        std::to_string(n.groups) + " groups do not divide its " + std::to_string(in[0].c) + " channels");
  return in[0];
}

// The input channel of output channel c.
int64_t source_channel(int64_t c, int64_t channels, int64_t groups) {
  return c % groups * (channels / groups) + c / groups;
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  const int64_t channels = a.out.c, pixels = x.numel() / channels;
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c)
      a.y.data[p * channels + c] = x.data[p * channels + source_channel(c, channels, a.node.groups)];
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3);
  a.y = ActTensor(x.shape);
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t w = 0; w < W; ++w) at(a.y, b, c, y, w) = at(x, b, source_channel(c, C, a.node.groups), y, w);
}
}  // namespace

//                                    name               in train  weight image  relu   resid  scale  mult  moves
extern const OpDef channel_shuffle = {{Op::ChannelShuffle, "channel_shuffle", 1, false, false, true, false, false, false, 0, true},
                                      shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
