// YOLOv5's decode as its Detect head exports it in inference mode (v6.1 and
// later), after each level's [N, A, H, W, K] view:
//   y = Sigmoid(x); xy, wh, rest = Split(y, [2, 2, K - 4], axis -1)
//   xy = (xy * 2 + grid) * stride       grid[a, h, w] = (w - 0.5, h - 0.5)
//   wh = (wh * 2) ^ 2 * anchor_grid     anchor_grid[a, h, w] = the anchor's (width, height) in pixels
//   Concat(xy, wh, rest, axis -1), then rows and the levels' Concat as any head's.
// YOLOv7's IDetect exports the same values as xy * (2 stride) + stride (grid - 0.5) and wh ^ 2 * (4 anchor_grid).
// octet keeps the conv as an output and applies the decode in float where the
// values leave it (graph/output_decode.h): the steps are checked here, their
// constants against YOLOv5's grid and anchors, and then dropped.
#include <cmath>

#include "graph/output_decode.h"
#include "interop/onnx_importer.h"

namespace octet::onnx_import {

namespace {
bool matches_value(float a, double b) { return std::abs(a - b) <= 1e-5 * std::max(1.0, std::abs(b)); }

// Element (a, h, w, k) of `t` broadcast, as ONNX does (dimensions aligned at the end), to [1, A, H, W, 2].
float grid_constant_at(const FloatTensor& t, int64_t a, int64_t h, int64_t w, int64_t k) {
  const int64_t index[4] = {a, h, w, k};
  int64_t at = 0, stride = 1;
  const size_t rank = t.shape.size();
  for (size_t d = 0; d < std::min<size_t>(rank, 4); ++d) {
    const int64_t size = t.shape[rank - 1 - d];
    at += (size == 1 ? 0 : index[3 - d]) * stride;
    stride *= size;
  }
  return t.data[static_cast<size_t>(at)];
}

// Whether `t` broadcasts to [1, A, H, W, 2].
bool broadcasts_to_grid(const FloatTensor& t, int64_t a, int64_t h, int64_t w) {
  const int64_t target[5] = {1, a, h, w, 2};
  if (t.shape.size() > 5) return false;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    const int64_t size = t.shape[t.shape.size() - 1 - d];
    if (size != 1 && size != target[4 - d]) return false;
  }
  return true;
}

bool is_one_value(const FloatTensor* t) { return t && t->numel() == 1 && std::isfinite(t->data[0]); }
}  // namespace

// The constant other than `value` that binary node n reads, or null.
const FloatTensor* Importer::other_operand(const onnx::NodeProto& n, const std::string& value) {
  if (n.input_size() != 2 || (n.input(0) != value && n.input(1) != value)) return nullptr;
  return constant_ahead(n.input(n.input(0) == value ? 1 : 0));
}

// The box centres' steps from `xy` (the Split's first output), in either form: their last node, the stride set.
const onnx::NodeProto* Importer::yolo_centres(const std::string& xy, const ActShape& s, int anchors,
                                              YoloDecode& decode, std::vector<const onnx::NodeProto*>& steps) {
  const onnx::NodeProto* scaled = sole_reader_of(xy, "Mul");
  const onnx::NodeProto* shifted = scaled ? sole_reader_of(scaled->output(0), "Add") : nullptr;
  if (!shifted) return nullptr;
  const FloatTensor* factor = other_operand(*scaled, xy);
  const FloatTensor* grid = other_operand(*shifted, scaled->output(0));
  if (!is_one_value(factor) || !grid || !broadcasts_to_grid(*grid, anchors, s.h, s.w)) return nullptr;
  const onnx::NodeProto* end = shifted;
  double offset_scale = 1;  // YOLOv5's grid is in cells, YOLOv7's in pixels
  if (matches_value(factor->data[0], 2)) {  // YOLOv5: (xy * 2 + grid) * stride
    end = sole_reader_of(shifted->output(0), "Mul");
    const FloatTensor* stride = end ? other_operand(*end, shifted->output(0)) : nullptr;
    if (!is_one_value(stride)) return nullptr;
    decode.stride = stride->data[0];
  } else {  // YOLOv7: xy * (2 stride) + stride (grid - 0.5)
    decode.stride = factor->data[0] / 2;
    offset_scale = decode.stride;
  }
  if (!(decode.stride > 0)) return nullptr;
  for (int64_t a = 0; a < anchors; ++a)
    for (int64_t h = 0; h < s.h; ++h)
      for (int64_t w = 0; w < s.w; ++w)
        for (int64_t i = 0; i < 2; ++i)
          if (!matches_value(grid_constant_at(*grid, a, h, w, i), ((i == 0 ? w : h) - 0.5) * offset_scale))
            refuse(*shifted, "a detection head's box centres offset by a grid other than YOLOv5's (w - 0.5, h - 0.5) "
                             "cells, at (h, w) = (" + std::to_string(h) + ", " + std::to_string(w) + ")");
  steps.insert(steps.end(), {scaled, shifted, end});
  return end;
}

// The box sizes' steps from `wh` (the Split's second output), in either form: their last node, the anchors set.
const onnx::NodeProto* Importer::yolo_sizes(const std::string& wh, const ActShape& s, int anchors, YoloDecode& decode,
                                            std::vector<const onnx::NodeProto*>& steps) {
  const onnx::NodeProto* twice = sole_reader_of(wh, "Mul");  // YOLOv5: (wh * 2) ^ 2 * anchor_grid
  const FloatTensor* factor = twice ? other_operand(*twice, wh) : nullptr;
  if (twice && (!is_one_value(factor) || !matches_value(factor->data[0], 2))) return nullptr;
  const std::string& base = twice ? twice->output(0) : wh;  // YOLOv7: wh ^ 2 * (4 anchor_grid)
  const onnx::NodeProto* squared = sole_reader_of(base, "Pow");
  const onnx::NodeProto* scaled = squared ? sole_reader_of(squared->output(0), "Mul") : nullptr;
  if (!scaled || squared->input(0) != base || !is_scalar(*squared, 1, 2)) return nullptr;
  const FloatTensor* anchor_grid = other_operand(*scaled, squared->output(0));
  if (!anchor_grid || !broadcasts_to_grid(*anchor_grid, anchors, s.h, s.w)) return nullptr;
  const float per_size = twice ? 1.0f : 0.25f;  // YOLOv7's sizes are 4 anchors
  for (int64_t a = 0; a < anchors; ++a)
    for (int64_t i = 0; i < 2; ++i) decode.anchors.push_back(grid_constant_at(*anchor_grid, a, 0, 0, i) * per_size);
  for (int64_t a = 0; a < anchors; ++a)
    for (int64_t h = 0; h < s.h; ++h)
      for (int64_t w = 0; w < s.w; ++w)
        for (int64_t i = 0; i < 2; ++i)
          if (grid_constant_at(*anchor_grid, a, h, w, i) != grid_constant_at(*anchor_grid, a, 0, 0, i))
            refuse(*scaled, "a detection head's box sizes scaled by anchor sizes that vary over the image");
  if (twice) steps.push_back(twice);
  steps.insert(steps.end(), {squared, scaled});
  return scaled;
}

const onnx::NodeProto* Importer::yolo_decode(const std::string& permuted, const ActShape& s, int anchors,
                                             YoloDecode& decode) {
  const onnx::NodeProto* sigmoid = sole_reader_of(permuted, "Sigmoid");
  if (!sigmoid) return nullptr;
  const int64_t k = s.c / anchors;
  const auto unlike = [&](const onnx::NodeProto& n, const std::string& what) {
    refuse(n, "a detection head's values decoded otherwise than YOLOv5's Detect (octet decodes sigmoid, split "
              "[2, 2, K - 4] over the last axis, (xy * 2 + grid) * stride, (wh * 2) ^ 2 * anchor_grid, concat, or "
              "YOLOv7's form of them): " + what);
  };
  const onnx::NodeProto* split = sole_reader_of(sigmoid->output(0), "Split");
  if (!split) unlike(*sigmoid, "its output is not read by one Split alone");
  const int64_t axis = int_attribute(*split, "axis", 0);
  const ShapeValue* given = has_input(*split, 1) ? ints_ahead(split->input(1)) : nullptr;
  const std::vector<int64_t> sizes = given ? given->values : ints_attribute(*split, "split", {});
  if ((axis != 4 && axis != -1) || sizes != std::vector<int64_t>{2, 2, k - 4} || split->output_size() != 3)
    unlike(*split, "axis " + std::to_string(axis) + ", sizes " + ints_string(sizes));
  std::vector<const onnx::NodeProto*> steps{sigmoid, split};
  decode.kind = DecodeKind::Yolov5;
  const onnx::NodeProto* centres = yolo_centres(split->output(0), s, anchors, decode, steps);
  if (!centres) unlike(*split, "its first output (the box centres) is not read by those steps");
  const onnx::NodeProto* sizes_end = yolo_sizes(split->output(1), s, anchors, decode, steps);
  if (!sizes_end) unlike(*split, "its second output (the box sizes) is not read by those steps");
  const onnx::NodeProto* concat = sole_reader_of(centres->output(0), "Concat");
  const int64_t concat_axis = concat ? int_attribute(*concat, "axis", 0) : 0;
  if (!concat || concat->input_size() != 3 || concat->input(1) != sizes_end->output(0) ||
      concat->input(2) != split->output(2) || (concat_axis != 4 && concat_axis != -1))
    unlike(*centres, "the decoded values are not concatenated back over the last axis in their order");
  try {
    check_decode(decode, anchors, s);
  } catch (const Error& e) {
    unlike(*sizes_end, e.what());
  }
  steps.push_back(concat);
  decoded_steps_.insert(steps.begin(), steps.end());
  return concat;
}

}  // namespace octet::onnx_import
