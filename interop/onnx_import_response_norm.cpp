// The ONNX importer's norms computed on the image (ConvNeXt-V2's Global
// Response Normalization, GRN: x_g = ||x|| over height and width per channel,
// n = x_g / (mean of x_g over the channels + eps), y = gamma x n + beta + x):
// ReduceL2 over height and width is octet's square, global average pool and
// square root of H W times the mean (three int8 steps); a Div by a computed
// value with a gate's shape (one value per channel, or per pixel) is a Mul by
// its reciprocal, an int8 table with the divisor's pending constant affine
// (GRN's + eps) folded in. The rest of GRN (a ReduceMean over the channels,
// Mul of a per-channel gate, constant Mul and Add, the residual Add) the
// importer takes already, on channels-last values as on channels-first ones.
#include <algorithm>

#include "interop/onnx_importer.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

void Importer::reduce_l2(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const std::vector<int64_t> image_axes = is_one_row(n, 0)                 ? std::vector<int64_t>{2}
                                          : channels_last_.count(n.input(0)) ? std::vector<int64_t>{1, 2}
                                                                             : std::vector<int64_t>{2, 3};
  if (is_flat(x) || reduce_axes(n) != image_axes)
    refuse(n, "an L2 norm over axes other than height and width (" + std::to_string(image_axes.front()) + ", " +
                  std::to_string(image_axes.back()) + ")");
  const ActShape s = shape_of(x);
  const int mean_square = builder_.global_avg_pool(builder_.activation(x, "square"));
  const int norm = builder_.activation(mean_square, "sqrt", static_cast<float>(int64_t{s.h} * s.w));
  define(n, int_attribute(n, "keepdims", 1) != 0 ? norm : builder_.flatten(norm));
}

void Importer::divide_by_computed(const onnx::NodeProto& n) {
  if (!values_.count(n.input(0))) refuse(n, "a constant divided by a computed value");
  if (channels_last_.count(n.input(0)) != channels_last_.count(n.input(1)))
    refuse(n, "divides a channels-last value by a channels-first one");
  const int a = activation(n, 0);
  float alpha = 1, beta = 0;
  int b = value_node(n, 1);
  const auto pending = pending_affines_.find(n.input(1));
  const auto uniform = [](const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [&](float e) { return e == v[0]; });
  };
  if (pending != pending_affines_.end() && uniform(pending->second.scale) && uniform(pending->second.shift))
    alpha = pending->second.scale[0], beta = pending->second.shift[0];
  else
    b = activation(n, 1);
  const ActShape sa = shape_of(a), sb = shape_of(b);
  const bool per_channel = sb.h == 1 && sb.w == 1 && (sb.c == 1 || sb.c == sa.c);
  const bool per_pixel = sb.c == 1 && sb.h == sa.h && sb.w == sa.w;
  if (is_flat(a) || is_flat(b) || !(per_channel || per_pixel))
    refuse(n, "a division of " + to_string(sa) + " values by " + to_string(sb) + " computed ones: octet divides by "
                  "one value per channel or per pixel");
  define(n, builder_.mul(a, builder_.activation(b, "reciprocal", alpha, beta)));
}

}  // namespace octet::onnx_import
