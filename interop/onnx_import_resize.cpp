// The ONNX importer's Resize in mode "nearest" (nn.Upsample, F.interpolate,
// HRNet's and FPN's way of bringing a coarse branch up to a finer one): along
// height and width, each output pixel reads the input pixel that ONNX's
// coordinate transformation and nearest mode pick. Where that is each pixel
// repeated a whole number of times it is an Upsample; where it is every k-th
// pixel from some offset, a subsample (onnx_import_space_to_depth.cpp); where
// it is pixel floor(o x in / out) (F.interpolate(size=...): an FPN's 38 -> 75),
// an Upsample to the size. All move int8 values, exactly. Mode "linear",
// centres or corners aligned, is octet's UpsampleBilinear (whole factors, or
// any size). Anything else (cubic mode, other nearest maps) is refused, saying which.
#include <algorithm>
#include <cmath>

#include "graph/ops/upsample.h"
#include "graph/ops/upsample_bilinear.h"
#include "interop/onnx_importer.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

namespace {
// The input index output index o reads along an axis of `in` values resized to `out` by `scale`, as ONNX's
// Resize says (its reference implementation, onnx/reference/ops/op_resize.py), clamped to the input.
int64_t nearest_source(int64_t o, int64_t in, int64_t out, double scale, const std::string& transformation,
                       const std::string& rounding) {
  const double center = (o + 0.5) / scale - 0.5;
  double x = center;  // half_pixel
  if (transformation == "asymmetric") x = o / scale;
  if (transformation == "pytorch_half_pixel") x = out > 1 ? center : 0;
  if (transformation == "tf_half_pixel_for_nn") x = (o + 0.5) / scale;
  if (transformation == "align_corners") x = out > 1 ? o * double(in - 1) / double(out - 1) : 0;
  if (transformation == "half_pixel_symmetric") {
    const double adjustment = double(out) / (scale * double(in));
    x = double(in) / 2 * (1 - adjustment) + center;
  }
  double i = std::floor(x);
  if (rounding == "ceil") i = std::ceil(x);
  if (rounding == "round_prefer_floor") i = x - std::floor(x) > 0.5 ? std::ceil(x) : std::floor(x);
  if (rounding == "round_prefer_ceil") i = x - std::floor(x) >= 0.5 ? std::ceil(x) : std::floor(x);
  return std::min(std::max(int64_t{0}, static_cast<int64_t>(i)), in - 1);
}

// How one axis is resized with octet's moves: each pixel repeated `repeats` times, or every `step`-th kept
// from `first` (`repeats` 0).
struct AxisResize {
  int64_t repeats = 0, first = 0, step = 1;
};

std::optional<AxisResize> axis_resize(int64_t in, int64_t out, double scale, const std::string& transformation,
                                      const std::string& rounding) {
  std::vector<int64_t> source;
  for (int64_t o = 0; o < out; ++o) source.push_back(nearest_source(o, in, out, scale, transformation, rounding));
  const auto all = [&](auto expected) {
    for (int64_t o = 0; o < out; ++o)
      if (source[static_cast<size_t>(o)] != expected(o)) return false;
    return true;
  };
  if (out >= in && out % in == 0 && out / in <= kMostUpsample && all([&](int64_t o) { return o / (out / in); }))
    return AxisResize{out / in};
  const int64_t first = source[0], step = out > 1 ? source[1] - source[0] : 1;
  if (step >= 1 && step <= 64 && all([&](int64_t o) { return first + o * step; })) return AxisResize{0, first, step};
  return std::nullopt;
}

// Whether each output pixel o along the axis reads input pixel floor(o x in / out), octet's Upsample to a size.
bool reads_as_to_size(int64_t in, int64_t out, double scale, const std::string& transformation,
                      const std::string& rounding) {
  for (int64_t o = 0; o < out; ++o)
    if (nearest_source(o, in, out, scale, transformation, rounding) != ops::nearest_source(o, in, out)) return false;
  return true;
}
}  // namespace

// Mode "linear" as octet's UpsampleBilinear, pixel centres aligned as F.interpolate(align_corners=False) aligns them
// (half_pixel; pytorch_half_pixel, the same but for an output of one pixel) or corners as align_corners=True
// (nn.UpsamplingBilinear2d): every axis upsampled by a whole factor up to 64 (an axis of one pixel is that pixel
// repeated: nearest), else resized to its size (ONNX reads the scale: it must be the sizes' ratio).
int Importer::bilinear(const onnx::NodeProto& n, int x, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                       const std::vector<double>& scales, const std::string& transformation) {
  const bool align_corners = transformation == "align_corners";
  if (transformation != "half_pixel" && transformation != "pytorch_half_pixel" && !align_corners)
    refuse(n, "mode 'linear' with coordinate_transformation_mode '" + transformation +
                  "': octet's bilinear upsampling aligns pixel centres (half_pixel: F.interpolate's "
                  "align_corners=False) or corners (align_corners)");
  bool whole = true;  // every axis a whole factor
  for (size_t a = 0; a < in.size(); ++a) {
    const int64_t factor = out[a] / in[a];
    whole = whole && out[a] == in[a] * factor && factor <= kMostUpsample;
    // ONNX places pixels by the scale, the unrounded in x scale (align_corners' length too): octet by the sizes.
    if (scales[a] != double(out[a]) / double(in[a]))
      refuse(n, "mode 'linear' resizing " + std::to_string(in[a]) + " pixels to " + std::to_string(out[a]) +
                    " by scale " + std::to_string(scales[a]) + ": octet places the pixels by the sizes' ratio, and "
                    "ONNX by the scale (give sizes, or a scale whose product is a whole size)");
    if (out[a] == 1 && transformation == "pytorch_half_pixel") refuse(n, "pytorch_half_pixel to one pixel");
  }
  std::vector<int> nearest, linear;  // per axis: whole factors, nearest where the axis is one pixel
  for (size_t a = 0; a < in.size(); ++a) {
    const int factor = whole ? static_cast<int>(out[a] / in[a]) : 1;
    nearest.push_back(in[a] == 1 ? factor : 1);
    linear.push_back(in[a] == 1 ? 1 : factor);
  }
  if (in.size() == 1) nearest.insert(nearest.begin(), 1), linear.insert(linear.begin(), 1);  // a row: its width
  int y = x;
  if (nearest[0] > 1 || nearest[1] > 1) y = builder_.upsample(y, nearest[0], nearest[1]);
  const ActShape image = shape_of(y);
  const int out_h = in.size() == 1 ? 1 : static_cast<int>(out[0]), out_w = static_cast<int>(out.back());
  const ops::BilinearAxis rows = {image.h, whole ? image.h * linear[0] : out_h, align_corners};
  const ops::BilinearAxis columns = {image.w, whole ? image.w * linear[1] : out_w, align_corners};
  if (rows.out_length == image.h && columns.out_length == image.w) {
    if (y == x) summary_.dropped.push_back(n.op_type());
    return y;
  }
  const int64_t total = ops::bilinear_span(rows) * ops::bilinear_span(columns);
  const int most_side = ops::kMostBilinearSide;
  const bool long_side = std::max({rows.out_length, columns.out_length, whole ? 0 : image.h, whole ? 0 : image.w}) >
                         most_side;
  if (total > ops::kMostBilinearTotal || long_side)
    refuse(n, "mode 'linear' from " + std::to_string(image.h) + " x " + std::to_string(image.w) + " to " +
                  std::to_string(rows.out_length) + " x " + std::to_string(columns.out_length) + " pixels: each "
                  "pixel's weights would sum to " + std::to_string(total) + " units, more than int8's exact division "
                  "takes (2^22), or a side over " + std::to_string(ops::kMostBilinearSide));
  return whole ? builder_.upsample_bilinear(y, linear[0], linear[1], align_corners)
               : builder_.resize_bilinear(y, rows.out_length, columns.out_length, align_corners);
}

void Importer::resize(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const ActShape s = shape_of(x);
  const std::string mode = string_attribute(n, "mode", "nearest");
  if (mode != "nearest" && mode != "linear")
    refuse(n, "mode '" + mode + "': octet resizes in modes 'nearest' and 'linear' only");
  if (is_flat(x) || channels_last_.count(n.input(0))) refuse(n, "a resize of a value that is not an image");
  const std::string transformation = string_attribute(n, "coordinate_transformation_mode", "half_pixel");
  const std::string rounding = string_attribute(n, "nearest_mode", "round_prefer_floor");
  if (transformation == "tf_crop_and_resize") refuse(n, "coordinate_transformation_mode 'tf_crop_and_resize'");
  const bool one_row = is_one_row(n, 0);  // N, C, L: the length is octet's width
  const int64_t rank = one_row ? 3 : 4;
  const std::vector<int64_t> axes = ints_attribute(n, "axes", {});
  const std::vector<int64_t> spatial = one_row ? std::vector<int64_t>{2} : std::vector<int64_t>{2, 3},
                             from_end = one_row ? std::vector<int64_t>{-1} : std::vector<int64_t>{-2, -1};
  if (!axes.empty() && axes != spatial && axes != from_end)
    refuse(n, "axes other than the image's height and width");
  const size_t first_given = axes.empty() ? 2 : 0;  // scales and sizes: of every axis, or of those in axes
  std::vector<int64_t> in = one_row ? std::vector<int64_t>{s.w} : std::vector<int64_t>{s.h, s.w}, out = in;
  std::vector<double> scales(in.size(), 1.0);
  if (has_input(n, 3)) {
    const ShapeValue* sizes = shape_value(n, 3);
    if (!sizes || sizes->values.size() != (axes.empty() ? size_t(rank) : axes.size()))
      refuse(n, "sizes that are not " + std::to_string(rank) + " values octet can evaluate");
    if (axes.empty() && (sizes->values[1] != s.c || (sizes->values[0] != kBatchDim && sizes->values[0] != file_batch_)))
      refuse(n, "sizes " + shape_value_string(*sizes) + " that change the batch or the channels");
    if (string_attribute(n, "keep_aspect_ratio_policy", "stretch") != "stretch")
      refuse(n, "keep_aspect_ratio_policy other than 'stretch'");
    for (size_t a = 0; a < in.size(); ++a) {
      out[a] = sizes->values[first_given + a];
      if (out[a] < 1 || out[a] > int64_t{1} << 20) refuse(n, "sizes " + shape_value_string(*sizes));
      scales[a] = double(out[a]) / double(in[a]);
    }
  } else {
    const FloatTensor given = has_input(n, 2) ? constant(n, 2) : FloatTensor();
    if (given.numel() != (axes.empty() ? rank : int64_t(axes.size())))
      refuse(n, "neither sizes nor " + std::to_string(rank) + " scales");
    if (axes.empty() && (given.data[0] != 1 || given.data[1] != 1)) refuse(n, "scales of the batch or the channels");
    for (size_t a = 0; a < in.size(); ++a) {
      scales[a] = given.data[first_given + a];
      const double size = std::floor(double(in[a]) * scales[a]);
      if (!(scales[a] > 0) || size < 1 || size > double(int64_t{1} << 20))
        refuse(n, "scale " + std::to_string(scales[a]) + " of " + std::to_string(in[a]) + " pixels");
      out[a] = static_cast<int64_t>(size);
    }
  }
  if (mode == "linear") return define(n, bilinear(n, x, in, out, scales, transformation));
  std::vector<AxisResize> how;
  for (size_t a = 0; a < in.size(); ++a)
    if (const std::optional<AxisResize> r = axis_resize(in[a], out[a], scales[a], transformation, rounding))
      how.push_back(*r);
  if (how.size() < in.size()) {  // some axis by no whole factor nor step: an Upsample to the size, where it reads so
    for (size_t a = 0; a < in.size(); ++a)
      if (!reads_as_to_size(in[a], out[a], scales[a], transformation, rounding) || out[a] > ops::kMostNearestSide)
        refuse(n, "resizing " + std::to_string(in[a]) + " pixels to " + std::to_string(out[a]) + " (scale " +
                      std::to_string(scales[a]) + ", " + transformation + ", " + rounding + ") reads pixels neither "
                      "each repeated a whole number of times (up to 64), nor each step-th, nor pixel floor(o x in / "
                      "out) (up to " + std::to_string(ops::kMostNearestSide) + " pixels): octet resizes only so");
    return define(n, builder_.resize_nearest(x, one_row ? 1 : static_cast<int>(out[0]), static_cast<int>(out.back())));
  }
  if (one_row) how.insert(how.begin(), AxisResize{1});
  const AxisResize rows = how[0], columns = how[1];
  const auto kept = [](const AxisResize& r, int64_t out_size) { return r.first + (out_size - 1) * r.step + 1; };
  int y = x;
  if (!rows.repeats || !columns.repeats)
    y = subsample(y, rows.first, columns.first, rows.repeats ? s.h : kept(rows, out[0]),
                  columns.repeats ? s.w : kept(columns, out.back()), rows.step, columns.step);
  const int down = rows.repeats ? static_cast<int>(rows.repeats) : 1;
  const int across = columns.repeats ? static_cast<int>(columns.repeats) : 1;
  if (down > 1 || across > 1) y = builder_.upsample(y, down, across);
  if (y == x) summary_.dropped.push_back(n.op_type());
  define(n, y);
}

namespace {
// Factors of n, each from 2 to kMostUpsample, whose product is n (the largest first); none for n of 1, and
// nullopt where n has a prime factor above kMostUpsample.
std::optional<std::vector<int>> upsample_factors(int64_t n) {
  std::vector<int> factors;
  while (n > 1) {
    int f = static_cast<int>(std::min<int64_t>(n, kMostUpsample));
    while (f > 1 && n % f != 0) --f;
    if (f == 1) return std::nullopt;
    factors.push_back(f);
    n /= f;
  }
  return factors;
}
}  // namespace

int Importer::repeated(int x, int64_t down, int64_t across) {
  const std::optional<std::vector<int>> rows = upsample_factors(down), columns = upsample_factors(across);
  if (!rows || !columns) return -1;
  for (size_t k = 0; k < std::max(rows->size(), columns->size()); ++k)
    x = builder_.upsample(x, k < rows->size() ? (*rows)[k] : 1, k < columns->size() ? (*columns)[k] : 1);
  return x;
}

}  // namespace octet::onnx_import
