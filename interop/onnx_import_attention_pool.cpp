// The ONNX importer's attention pooling (GCNet's context modelling: mmcv's
// ContextBlock, timm's GlobalContext): a one-channel mask m of an image x,
// viewed as [N, 1, HW], a Softmax over its positions, then the MatMul of x
// viewed as [N, C, HW] (or [N, 1, C, HW]) by the weights as a column ([N, HW,
// 1] or [N, 1, HW, 1]), viewed back as [N, C, 1, 1]: each channel's mean
// weighted by softmax(m). octet computes it with its own operators:
// e = exp(m - max m) (a global max pool brought back to the mask's size by an
// Upsample, subtracted; the int8 exp table's values then lie in (0, 1]
// whatever m's range), and sum(x e) / sum(e) = GAP(x * e) * reciprocal(GAP(e)).
// Also GCNet's fusion by addition (a value per channel added to every pixel)
// and BAM's product of a value per channel and one per pixel, both expanded
// to the image: values are brought back over it by Upsamples (repeated()).
#include "interop/onnx_importer.h"

namespace octet::onnx_import {

namespace {
const char kPattern[] =
    "GCNet's attention pooling (a mask of one channel viewed as [N, 1, HW], a Softmax over axis 2, unsqueezed or "
    "reshaped to a column; the image viewed as [N, C, HW], perhaps unsqueezed at axis 1; their MatMul viewed as "
    "[N, C, 1, 1])";
}  // namespace

bool Importer::dispatch_attention_pool(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  const auto runs = grouped_views_.find(n.input_size() > 0 ? n.input(0) : std::string());
  const bool reads_runs = runs != grouped_views_.end() && runs->second.step == GroupedStep::Runs;
  if (op == "Softmax" && reads_runs && runs->second.groups == 1 && shape_of(runs->second.node).c == 1) {
    // Before opset 13 a softmax's axis 1 takes every axis after the batch: the positions too.
    const int64_t axis = int_attribute(n, "axis", summary_.opset < 13 ? 1 : -1);
    if (axis != 2 && axis != -1 && (axis != 1 || summary_.opset >= 13))
      refuse(n, "a softmax over axis " + std::to_string(axis) + " of " + kPattern);
    position_weights_[n.output(0)] = {runs->second.node, false};
    return true;
  }
  const auto weights = position_weights_.find(n.input_size() > 0 ? n.input(0) : std::string());
  if ((op == "Unsqueeze" || op == "Reshape") && weights != position_weights_.end()) {
    const ActShape s = shape_of(weights->second.mask);
    const std::optional<std::vector<int64_t>> axes = op == "Unsqueeze" ? axes_of(n, 4) : std::nullopt;
    const ShapeValue* target = op == "Reshape" ? shape_value(n, 1) : nullptr;
    const int64_t positions = int64_t{s.h} * s.w;
    const bool column = axes ? *axes == std::vector<int64_t>{3}
                             : target && target->values.size() >= 3 && target->values.back() == 1 &&
                                   (target->values.end()[-2] == positions || target->values.end()[-2] == -1);
    if (weights->second.column || !column)
      refuse(n, "takes the softmax of positions other than as a column ([N, HW, 1] or [N, 1, HW, 1]) in " +
                    std::string(kPattern));
    position_weights_[n.output(0)] = {weights->second.mask, true};
    return true;
  }
  if (op == "Unsqueeze" && reads_runs && runs->second.groups == shape_of(runs->second.node).c) {
    if (axes_of(n, 4) != std::vector<int64_t>{1}) return false;  // unsqueeze() refuses it
    position_rows_[n.output(0)] = runs->second.node;
    return true;
  }
  if (op == "MatMul") return attention_pool(n);
  const auto pooled = pooled_views_.find(n.input_size() > 0 ? n.input(0) : std::string());
  if (op != "Reshape" || pooled == pooled_views_.end()) return false;
  const ShapeValue* target = shape_value(n, 1);
  const int64_t channels = shape_of(pooled->second).c;
  const std::vector<int64_t> tail = target && !target->values.empty()
                                        ? std::vector<int64_t>(target->values.begin() + 1, target->values.end())
                                        : std::vector<int64_t>{0};
  const bool image = tail == std::vector<int64_t>{channels, 1, 1} || tail == std::vector<int64_t>{-1, 1, 1};
  if (!image && tail != std::vector<int64_t>{channels} && tail != std::vector<int64_t>{-1})
    refuse(n, "a reshape other than to [N, C, 1, 1] or [N, C] of the result of " + std::string(kPattern));
  define(n, image ? pooled->second : builder_.flatten(pooled->second));
  return true;
}

// The MatMul of the image's view by the softmax's column: whether n is one (then imported).
bool Importer::attention_pool(const onnx::NodeProto& n) {
  const auto rows = position_rows_.find(n.input(0));
  const auto runs = grouped_views_.find(n.input(0));
  const auto weights = position_weights_.find(n.input(1));
  const bool image_rows = rows != position_rows_.end() ||
                          (runs != grouped_views_.end() && runs->second.step == GroupedStep::Runs &&
                           runs->second.groups == shape_of(runs->second.node).c);
  if (!image_rows && weights == position_weights_.end()) return false;
  if (!image_rows || weights == position_weights_.end() || !weights->second.column)
    refuse(n, "a MatMul other than of an image's view by a softmax's column in " + std::string(kPattern));
  const int x = rows != position_rows_.end() ? rows->second : runs->second.node, mask = weights->second.mask;
  const ActShape s = shape_of(mask);
  if (shape_of(x).h != s.h || shape_of(x).w != s.w)
    refuse(n, "weights " + to_string(s) + " of positions of an image " + to_string(shape_of(x)));
  // Negated before it is brought back: a conv of one value per image, not of every position.
  const int negated = affine_conv(layer_name(n), global_max_pool_of(mask), {-1.0f}, {0.0f});
  const int spread = repeated(negated, s.h, s.w);
  if (spread < 0)
    refuse(n, "a softmax over " + std::to_string(s.h) + " x " + std::to_string(s.w) + " positions: octet brings the "
                  "largest back over heights and widths whose prime factors are at most " +
                  std::to_string(kMostUpsample));
  const int centred = builder_.add(mask, spread);
  const int e = builder_.activation(centred, "exp");
  const int weighted_sum = builder_.global_avg_pool(builder_.mul(x, e));
  const int total = builder_.activation(builder_.global_avg_pool(e), "reciprocal", 1.0f, 0.0f);
  pooled_views_[n.output(0)] = builder_.mul(weighted_sum, total);
  return true;
}

bool Importer::per_channel_of(int image, int value) const {
  const ActShape si = shape_of(image), sv = shape_of(value);
  return !is_flat(image) && !is_flat(value) && sv.c == si.c && sv.h == 1 && sv.w == 1 && !(si == sv);
}

int Importer::spread_value(const onnx::NodeProto& n, int image, int value) {
  const ActShape s = shape_of(image);
  const int spread = repeated(value, s.h, s.w);
  if (spread < 0)
    refuse(n, "a value per channel over an image of " + to_string(s) + ": octet brings it over heights and widths "
                  "whose prime factors are at most " + std::to_string(kMostUpsample));
  return spread;
}

// GCNet's channel_add fusion: of an Add of an image and a value per channel ([C, 1, 1]) of the same channels,
// the latter repeated over the image's pixels (Upsamples); other shapes are left to add() to refuse.
void Importer::spread_over_image(const onnx::NodeProto& n, int& a, int& b) {
  if (per_channel_of(a, b)) b = spread_value(n, a, b);
  if (per_channel_of(b, a)) a = spread_value(n, b, a);
}

// BAM's attention, channel_att(x) * spatial_att(x), each expand_as(x) ([C, 1, 1] and [1, H, W] before), or the
// two broadcast by the Mul itself: the value per channel repeated over the pixels (Upsamples), times the one per
// pixel; an Expand's target must be that shape.
bool Importer::spread_for_product(const onnx::NodeProto& n, int a, int b) {
  if (shape_of(a).c == 1) std::swap(a, b);
  const ActShape channel = shape_of(a), pixel = shape_of(b);
  if (is_flat(a) || is_flat(b) || channel.h != 1 || channel.w != 1 || channel.c == 1 || pixel.c != 1 ||
      pixel.h * pixel.w == 1)
    return false;
  const int y = builder_.mul(spread_value(n, b, a), b);
  const std::vector<int64_t> dims = {channel.c, pixel.h, pixel.w};
  for (int i = 0; i < 2; ++i) {
    const onnx::NodeProto* expand = writer_of(n.input(i), "Expand");
    const ShapeValue* target = expand ? shape_value(*expand, 1) : nullptr;
    if (expand && (!target || target->values.size() != 4 ||
                   !std::equal(dims.begin(), dims.end(), target->values.begin() + 1)))
      refuse(n, "a product of a value per channel and one per pixel, one expanded to other than " +
                    to_string(shape_of(y)) + " (BAM's gates, expand_as(x))");
  }
  define(n, y);
  return true;
}

}  // namespace octet::onnx_import
