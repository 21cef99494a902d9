// DepthToSpace: each pixel's channels spread over a `stride` x `stride` block
// of pixels, as torch's pixel_shuffle and ONNX's DepthToSpace in mode CRD
// order them: output channel c at offset (i, j) of a block is input channel
// (c * stride + i) * stride + j. A super-resolution net's last step
// (ESPCN), and with a conv before it a transposed conv (the importer's
// ConvTranspose). It moves values, so int8 keeps the input's scale.
#include "common/error.h"
#include "graph/ops/int8_reference.h"
#include "graph/ops/shape_rules.h"

namespace octet::ops {

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  const int64_t block = n.stride;
  check(block >= 2 && block <= kMostUpsample && in[0].c % (block * block) == 0,
        "block " + std::to_string(block) + " (2 to " + std::to_string(kMostUpsample) + ", its square dividing the " +
            std::to_string(in[0].c) + " channels)");
  const ActShape spread{static_cast<int>(in[0].c / (block * block)), in[0].h, in[0].w};
  return upsampled_shape(spread, block, block);
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  const ActShape in = a.in[0], out = a.out;
  const int block = a.node.stride;
  for (int64_t b = 0; b < x.dim(0); ++b)
    for (int oy = 0; oy < out.h; ++oy)
      for (int ox = 0; ox < out.w; ++ox) {
        const float* pixel = x.data.data() + ((b * in.h + oy / block) * in.w + ox / block) * in.c;
        const int offset = oy % block * block + ox % block;
        float* y = a.y.data.data() + ((b * out.h + oy) * out.w + ox) * out.c;
        for (int c = 0; c < out.c; ++c) y[c] = pixel[c * block * block + offset];
      }
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const int64_t block = a.node.stride, channels = x.dim(1) / (block * block);
  a.y = ActTensor({a.batch, channels, x.dim(2) * block, x.dim(3) * block});
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t oy = 0; oy < a.y.dim(2); ++oy)
        for (int64_t ox = 0; ox < a.y.dim(3); ++ox)
          at(a.y, b, c, oy, ox) = at(x, b, (c * block + oy % block) * block + ox % block, oy / block, ox / block);
}
}  // namespace

//                                   name              in train  weight image  relu   resid  scale  mult  moves
extern const OpDef depth_to_space = {{Op::DepthToSpace, "depth_to_space", 1, false, false, true, false, false, false, 0,
                                      true},
                                     shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
