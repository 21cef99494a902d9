// Upsample: each pixel repeated `stride` times down and `stride_w` across (0:
// as down), nearest-neighbour upsampling by whole factors: ONNX's Resize in
// mode "nearest" (nn.Upsample, F.interpolate), HRNet's and FPN's way of
// bringing a coarse branch to a finer one before adding them. Or to a size,
// `height` x `width` (an FPN's F.interpolate(size=...) where a side is odd:
// 38 -> 75), each output pixel reading the input pixel upsample.h's
// nearest_source names. It moves values, so int8 keeps the input's scale and is exact.
#include "graph/ops/upsample.h"

#include "common/error.h"
#include "graph/ops/int8_reference.h"
#include "graph/ops/shape_rules.h"

namespace octet::ops {

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  if (n.height || n.width) {
    check(n.stride == 1 && n.stride_w == 0, "a size and factors " + std::to_string(n.stride) + "x" +
                                                std::to_string(n.stride_w) + " (give one or the other)");
    check(n.height >= 1 && n.height <= kMostNearestSide && n.width >= 1 && n.width <= kMostNearestSide,
          "size " + std::to_string(n.height) + "x" + std::to_string(n.width) + " outside 1 to " +
              std::to_string(kMostNearestSide) + " a side");
    check(within_bound(in[0].c, n.height, n.width), "output has more than 2^31 - 1 values");
    return {in[0].c, n.height, n.width};
  }
  const int across = upsample_across(n);
  check(n.stride >= 1 && n.stride <= kMostUpsample && across >= 1 && across <= kMostUpsample,
        "factors " + std::to_string(n.stride) + "x" + std::to_string(across) + " outside 1 to " +
            std::to_string(kMostUpsample));
  return upsampled_shape(in[0], n.stride, across);
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  const ActShape in = a.in[0], out = a.out;
  for (int64_t b = 0; b < x.dim(0); ++b)
    for (int oy = 0; oy < out.h; ++oy)
      for (int ox = 0; ox < out.w; ++ox) {
        const int iy = nearest_source(oy, in.h, out.h), ix = nearest_source(ox, in.w, out.w);
        for (int c = 0; c < out.c; ++c)
          a.y.data[static_cast<size_t>(((b * out.h + oy) * out.w + ox) * out.c + c)] =
              x.data[static_cast<size_t>(((b * in.h + iy) * in.w + ix) * in.c + c)];
      }
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const Node& n = a.node;
  const int64_t h = n.height ? n.height : x.dim(2) * n.stride, w = n.width ? n.width : x.dim(3) * upsample_across(n);
  a.y = ActTensor({a.batch, x.dim(1), h, w});
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t c = 0; c < x.dim(1); ++c)
      for (int64_t oy = 0; oy < h; ++oy)
        for (int64_t ox = 0; ox < w; ++ox)
          at(a.y, b, c, oy, ox) = at(x, b, c, nearest_source(oy, x.dim(2), h), nearest_source(ox, x.dim(3), w));
}
}  // namespace

//                           name       in train  weight image  relu   resid  scale  mult  moves
extern const OpDef upsample = {{Op::Upsample, "upsample", 1, false, false, true, false, false, false, 0, true},
                               shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
