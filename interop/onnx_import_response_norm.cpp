// The ONNX importer's norms and element-wise powers computed on the image:
// ConvNeXt-V2's Global Response Normalization (GRN: x_g = ||x|| over height
// and width per channel, n = x_g / (mean of x_g over the channels + eps), y =
// gamma x n + beta + x), F.normalize of features (x / max(||x||, eps) over the
// channels), PixelNorm (x * rsqrt(mean of x^2 over the channels + eps)), and
// Pow, Sqrt and Reciprocal of any value. A ReduceL2 is octet's square, a mean
// (a global average pool over height and width, a channel mean over the
// channels) and the square root of the count times it (int8 tables); a Div by
// a computed value with a gate's shape (one value per channel, or per pixel)
// is a Mul by its reciprocal, an int8 table with the divisor's pending
// constant affine (GRN's + eps) folded in. The rest (means over the channels,
// Mul by a gate, constant Mul and Add, the residual Add) the importer takes
// already, on channels-last values as on channels-first ones.
#include <algorithm>
#include <cmath>

#include "interop/onnx_importer.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

void Importer::reduce_l2(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const bool last = channels_last_.count(n.input(0)) > 0, one_row = is_one_row(n, 0), rows = is_flat(x);
  const std::optional<std::vector<int64_t>> axes = axes_of(n, rows ? 2 : one_row ? 3 : 4);
  if (!axes) refuse(n, "axes that are not a constant");
  const std::vector<int64_t> channels = {last ? 3 : 1};
  const std::vector<int64_t> image = one_row ? std::vector<int64_t>{2}
                                     : last  ? std::vector<int64_t>{1, 2}
                                             : std::vector<int64_t>{2, 3};
  const bool keepdims = int_attribute(n, "keepdims", 1) != 0;
  const bool over_channels = *axes == channels && keepdims;  // F.normalize's, PixelNorm's: per pixel or row
  if (!over_channels && (rows || *axes != image))
    refuse(n, "an L2 norm over axes other than height and width (" + std::to_string(image.front()) + ", " +
                  std::to_string(image.back()) + ") or the channels (" + std::to_string(channels[0]) + ", kept)");
  const ActShape s = shape_of(x);
  const int squares = builder_.activation(x, "square");
  const int mean_square = over_channels ? builder_.channel_mean(squares) : builder_.global_avg_pool(squares);
  const int64_t count = over_channels ? s.c : int64_t{s.h} * s.w;
  const int norm = builder_.activation(mean_square, "sqrt", static_cast<float>(count));
  define(n, keepdims ? norm : builder_.flatten(norm));
}

int Importer::reciprocal_of(const onnx::NodeProto& n, int i, float factor) {
  const auto uniform = [](const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [&](float e) { return e == v[0]; });
  };
  const auto pending = pending_affines_.find(n.input(i));
  if (pending == pending_affines_.end() || !uniform(pending->second.scale) || !uniform(pending->second.shift))
    return builder_.activation(activation(n, i), "reciprocal", factor, 0.0f);
  const PendingAffine& a = pending->second;
  return builder_.activation(value_node(n, i), "reciprocal", factor * a.scale[0], factor * a.shift[0]);
}

void Importer::divide_by_computed(const onnx::NodeProto& n) {
  if (!values_.count(n.input(0))) {  // c / x: 1 / (x / c)
    const float c = scalar(n, 0);
    if (c == 0 || !std::isfinite(1.0f / c)) refuse(n, "a constant 0, or too small, divided by a computed value");
    return define(n, reciprocal_of(n, 1, 1.0f / c));
  }
  if (channels_last_.count(n.input(0)) != channels_last_.count(n.input(1)))
    refuse(n, "divides a channels-last value by a channels-first one");
  const int a = activation(n, 0), b = value_node(n, 1);
  const ActShape sa = shape_of(a), sb = shape_of(b);
  const bool per_channel = sb.h == 1 && sb.w == 1 && (sb.c == 1 || sb.c == sa.c);
  const bool per_pixel = sb.c == 1 && sb.h == sa.h && sb.w == sa.w;
  const bool per_sample = sb == ActShape{1, 1, 1};  // rows by their norm (F.normalize)
  if (is_flat(b) || (is_flat(a) && !per_sample) || !(per_channel || per_pixel))
    refuse(n, "a division of " + to_string(sa) + " values by " + to_string(sb) + " computed ones: octet divides by "
                  "one value per channel or per pixel");
  define(n, builder_.mul(a, reciprocal_of(n, 1, 1.0f)));
}

void Importer::power(const onnx::NodeProto& n) {
  if (n.op_type() == "Sqrt") return define(n, builder_.activation(activation(n, 0), "sqrt", 1.0f));
  if (n.op_type() == "Reciprocal") return define(n, reciprocal_of(n, 0, 1.0f));
  const float exponent = scalar(n, 1);
  if (exponent == 2) return define(n, builder_.activation(activation(n, 0), "square"));
  if (exponent == 0.5f) return define(n, builder_.activation(activation(n, 0), "sqrt", 1.0f));
  if (exponent == -1) return define(n, reciprocal_of(n, 0, 1.0f));
  if (exponent != 1) refuse(n, "an exponent other than 2, 0.5, 1 or -1");
  summary_.dropped.push_back(n.op_type());
  define(n, activation(n, 0));
}

}  // namespace octet::onnx_import
