// UpsampleBilinear: bilinear upsampling by whole factors, `stride` down and
// `stride_w` across (0: as down), each 1 to 64, or to a size of `height` x
// `width` (LRASPP's 33 -> 65 pixels, DeepLab's 65 -> 513): ONNX's Resize in
// mode "linear" (F.interpolate(mode="bilinear"), a segmentation head's scores
// brought back to the input's size, a U-Net's decoder), pixel centres aligned
// or, with `align_corners`, corners (upsample_bilinear.h). Each output is a
// weighted mean of four input pixels, so int8 keeps the input's scale: the
// integer weighted sum of the stored values divided by the weights' sum,
// rounded half up (common/requantize.h's requantize_by_division: exact).
#include "graph/ops/upsample_bilinear.h"

#include "common/error.h"
#include "common/requantize.h"
#include "graph/ops/int8_reference.h"
#include "graph/ops/shape_rules.h"

namespace octet::ops {

namespace {
ActShape shape(const Node& n, const std::vector<ActShape>& in) {
  const int across = upsample_across(n);
  ActShape out;
  if (n.height != 0 || n.width != 0) {
    check(n.height >= 1 && n.height <= kMostBilinearSide && n.width >= 1 && n.width <= kMostBilinearSide,
          "size " + std::to_string(n.height) + "x" + std::to_string(n.width) + " is outside 1 to " +
              std::to_string(kMostBilinearSide));
    check(n.stride == 1 && across == 1, "a size and factors both");
    check(in[0].h <= kMostBilinearSide && in[0].w <= kMostBilinearSide,
          "an input of " + to_string(in[0]) + ": resized to a size, its sides are at most " +
              std::to_string(kMostBilinearSide));
    check(within_bound(in[0].c, n.height, n.width), "output has more than 2^31 - 1 values");
    out = {in[0].c, n.height, n.width};
  } else {
    check(n.stride >= 1 && n.stride <= kMostUpsample && across >= 1 && across <= kMostUpsample,
          "factors " + std::to_string(n.stride) + "x" + std::to_string(across) + " are outside 1 to " +
              std::to_string(kMostUpsample));
    out = upsampled_shape(in[0], n.stride, across);
  }
  const int64_t total = bilinear_span(bilinear_rows(n, in[0].h)) * bilinear_span(bilinear_columns(n, in[0].w));
  check(total <= kMostBilinearTotal, "an output pixel's weights sum to " + std::to_string(total) +
                                         " units, more than int8's exact division takes (2^22: outputs of up to "
                                         "2048 x 2048 pixels)");
  return out;
}

void run_float(const FloatOpArgs& a) {
  const FloatTensor& x = *a.inputs[0];
  const ActShape in = a.in[0], out = a.out;
  const BilinearAxis rows = bilinear_rows(a.node, in.h), columns = bilinear_columns(a.node, in.w);
  const float unit = 1.0f / float(bilinear_span(rows) * bilinear_span(columns));
  for (int64_t b = 0; b < x.dim(0); ++b)
    for (int oy = 0; oy < out.h; ++oy) {
      const BilinearTaps ty = bilinear_taps(oy, rows);
      for (int ox = 0; ox < out.w; ++ox) {
        const BilinearTaps tx = bilinear_taps(ox, columns);
        const auto pixel = [&](int y, int xx) { return x.data.data() + ((b * in.h + y) * in.w + xx) * in.c; };
        const float *p00 = pixel(ty.first, tx.first), *p01 = pixel(ty.first, tx.second);
        const float *p10 = pixel(ty.second, tx.first), *p11 = pixel(ty.second, tx.second);
        float* y = a.y.data.data() + ((b * out.h + oy) * out.w + ox) * out.c;
        for (int c = 0; c < out.c; ++c)
          y[c] = (float(ty.first_weight) * (float(tx.first_weight) * p00[c] + float(tx.second_weight) * p01[c]) +
                  float(ty.second_weight) * (float(tx.first_weight) * p10[c] + float(tx.second_weight) * p11[c])) *
                 unit;
      }
    }
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const ActTensor& x = *a.inputs[0];
  const int in_h = static_cast<int>(x.dim(2)), in_w = static_cast<int>(x.dim(3));
  const BilinearAxis rows = bilinear_rows(a.node, in_h), columns = bilinear_columns(a.node, in_w);
  const auto total = static_cast<int32_t>(bilinear_span(rows) * bilinear_span(columns));
  const int32_t zero_point = a.input_zero_points.at(0);
  a.y = ActTensor({a.batch, x.dim(1), rows.out_length, columns.out_length});
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t c = 0; c < x.dim(1); ++c)
      for (int oy = 0; oy < a.y.dim(2); ++oy)
        for (int ox = 0; ox < a.y.dim(3); ++ox) {
          const BilinearTaps ty = bilinear_taps(oy, rows), tx = bilinear_taps(ox, columns);
          const auto v = [&](int y, int xx) { return int32_t{at(x, b, c, y, xx)} - zero_point; };
          const int32_t sum = ty.first_weight * (tx.first_weight * v(ty.first, tx.first) +
                                                 tx.second_weight * v(ty.first, tx.second)) +
                              ty.second_weight * (tx.first_weight * v(ty.second, tx.first) +
                                                  tx.second_weight * v(ty.second, tx.second));
          at(a.y, b, c, oy, ox) = static_cast<int16_t>(requantize_by_division(sum, total, zero_point));
        }
}
}  // namespace

//                                    name                in train  weight image  relu   resid  scale  mult  moves
extern const OpDef upsample_bilinear = {
    {Op::UpsampleBilinear, "upsample_bilinear", 1, false, false, true, false, false, false, 0, false},
    shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
