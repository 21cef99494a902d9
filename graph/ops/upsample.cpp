// Upsample: each pixel repeated `stride` times down and `stride_w` across (0:
// as down), nearest-neighbour upsampling by whole factors: ONNX's Resize in
// mode "nearest" (nn.Upsample, F.interpolate), HRNet's and FPN's way of
// bringing a coarse branch to a finer one before adding them. It moves
// values, so int8 keeps the input's scale and is exact.
#include "common/error.h"
#include "graph/ops/int8_reference.h"
#include "graph/ops/shape_rules.h"

namespace octet::ops {

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  const int across = upsample_across(n);
  check(n.stride >= 1 && n.stride <= kMostUpsample && across >= 1 && across <= kMostUpsample,
        "factors " + std::to_string(n.stride) + "x" + std::to_string(across) + " outside 1 to " +
            std::to_string(kMostUpsample));
  return upsampled_shape(in[0], n.stride, across);
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  const ActShape in = a.in[0], out = a.out;
  const int down = a.node.stride, across = upsample_across(a.node);
  for (int64_t b = 0; b < x.dim(0); ++b)
    for (int oy = 0; oy < out.h; ++oy)
      for (int ox = 0; ox < out.w; ++ox)
        for (int c = 0; c < out.c; ++c)
          a.y.data[static_cast<size_t>(((b * out.h + oy) * out.w + ox) * out.c + c)] =
              x.data[static_cast<size_t>(((b * in.h + oy / down) * in.w + ox / across) * in.c + c)];
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const int64_t down = a.node.stride, across = upsample_across(a.node);
  a.y = ActTensor({a.batch, x.dim(1), x.dim(2) * down, x.dim(3) * across});
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t c = 0; c < x.dim(1); ++c)
      for (int64_t oy = 0; oy < a.y.dim(2); ++oy)
        for (int64_t ox = 0; ox < a.y.dim(3); ++ox) at(a.y, b, c, oy, ox) = at(x, b, c, oy / down, ox / across);
}
}  // namespace

//                           name       in train  weight image  relu   resid  scale  mult  moves
extern const OpDef upsample = {{Op::Upsample, "upsample", 1, false, false, true, false, false, false, 0, true},
                               shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
