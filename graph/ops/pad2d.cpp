// Pad2d: zero rows above and below the image and zero columns left and right
// of it, as many on each side as pad_top, pad_bottom, pad_left and pad_right
// say: the padding of a convolution or average pool that pads its sides
// unalike (TensorFlow's "SAME" padding at stride 2 pads only bottom and
// right), or ONNX's Pad with zeros. Exact on int8 values: zero is int8 zero
// (symmetric quantization), so it keeps its input's scale. A negative side
// removes rows or columns: ONNX's Pad so, or a Slice of height or width (a
// TCN's Chomp1d, x[:, :, :-k]), or the Gather of one column.
#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "graph/ops/int8_reference.h"
#include "graph/ops/pad2d.h"
#include "graph/ops/shape_rules.h"

namespace octet::ops {

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  const ActShape x = in[0];
  const int64_t h = int64_t{x.h} + n.pad_top + n.pad_bottom, w = int64_t{x.w} + n.pad_left + n.pad_right;
  // Each side at most all but one row or column removed: a crop from one side past the other's padding is no crop.
  check(h >= 1 && w >= 1 && -int64_t{std::min(n.pad_top, n.pad_bottom)} < x.h &&
            -int64_t{std::min(n.pad_left, n.pad_right)} < x.w,
        "pads [" + std::to_string(n.pad_top) + "," + std::to_string(n.pad_left) + "," + std::to_string(n.pad_bottom) +
            "," + std::to_string(n.pad_right) + "] leave nothing of the input " + to_string(x));
  check(within_bound(x.c, h, w), "output has more than 2^31 - 1 values");
  return {x.c, static_cast<int>(h), static_cast<int>(w)};
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  const ActShape in = a.in[0], out = a.out;
  const PadOverlap o = pad_overlap(a.node, in, out);
  std::fill(a.y.data.begin(), a.y.data.end(), 0.0f);
  for (int64_t b = 0; b < x.dim(0); ++b)
    for (int oy = o.first_row; oy < o.end_row; ++oy)
      std::memcpy(a.y.ptr() + ((b * out.h + oy) * out.w + o.first_column) * out.c,
                  x.ptr() + ((b * in.h + oy - a.node.pad_top) * in.w + o.first_column - a.node.pad_left) * in.c,
                  sizeof(float) * o.columns() * in.c);
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const Node& n = a.node;
  const ActTensor& x = *a.inputs[0];
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3);
  a.y = ActTensor({a.batch, C, H + n.pad_top + n.pad_bottom, W + n.pad_left + n.pad_right});
  const auto zero = static_cast<int16_t>(a.input_zero_points.at(0));  // a real 0
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oy = 0; oy < a.y.dim(2); ++oy)
        for (int64_t ox = 0; ox < a.y.dim(3); ++ox) {
          const int64_t iy = oy - n.pad_top, ix = ox - n.pad_left;
          at(a.y, b, c, oy, ox) = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? at(x, b, c, iy, ix) : zero;
        }
}
}  // namespace

//                          name     in train  weight image  relu   resid  scale  mult  moves
extern const OpDef pad2d = {{Op::Pad2d, "pad2d", 1, false, false, true, false, false, false, 0, true},
                            shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
