// YOLOv5's decode as its Detect head exports it in inference mode (v6.1 and
// later, and YOLOv7's own export of the same head), after each level's
// [N, A, H, W, K] view:
//   y = Sigmoid(x); xy, wh, rest = Split(y, [2, 2, K - 4], axis -1)
//   xy = (xy * 2 + grid) * stride       grid[a, h, w] = (w - 0.5, h - 0.5)
//   wh = (wh * 2) ^ 2 * anchor_grid     anchor_grid[a, h, w] = the anchor's (width, height) in pixels
//   Concat(xy, wh, rest, axis -1), then rows and the levels' Concat as any head's.
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
}  // namespace

// The one node reading `value`, if it is an `op`.
const onnx::NodeProto* Importer::sole_reader(const std::string& value, const std::string& op) const {
  const auto readers = readers_.find(value);
  if (readers == readers_.end() || readers->second.size() != 1 || is_model_output(value)) return nullptr;
  return readers->second[0]->op_type() == op ? readers->second[0] : nullptr;
}

// The constant other than `value` that binary node n reads, or null.
const FloatTensor* Importer::other_operand(const onnx::NodeProto& n, const std::string& value) {
  if (n.input_size() != 2 || (n.input(0) != value && n.input(1) != value)) return nullptr;
  return constant_ahead(n.input(n.input(0) == value ? 1 : 0));
}

const onnx::NodeProto* Importer::yolo_decode(const std::string& permuted, const ActShape& s, int anchors,
                                             YoloDecode& decode) {
  const onnx::NodeProto* sigmoid = sole_reader(permuted, "Sigmoid");
  if (!sigmoid) return nullptr;
  const int64_t k = s.c / anchors;
  const auto unlike = [&](const onnx::NodeProto& n, const std::string& what) {
    refuse(n, "a detection head's values decoded otherwise than YOLOv5's Detect (octet decodes sigmoid, split "
              "[2, 2, K - 4] over the last axis, (xy * 2 + grid) * stride, (wh * 2) ^ 2 * anchor_grid, concat): " +
              what);
  };
  const onnx::NodeProto* split = sole_reader(sigmoid->output(0), "Split");
  if (!split) unlike(*sigmoid, "its output is not read by one Split alone");
  const int64_t axis = int_attribute(*split, "axis", 0);
  const ShapeValue* given = has_input(*split, 1) ? ints_ahead(split->input(1)) : nullptr;
  const std::vector<int64_t> sizes = given ? given->values : ints_attribute(*split, "split", {});
  if ((axis != 4 && axis != -1) || sizes != std::vector<int64_t>{2, 2, k - 4} || split->output_size() != 3)
    unlike(*split, "axis " + std::to_string(axis) + ", sizes " + ints_string(sizes));
  // xy: Mul by 2, Add the grid, Mul by the stride; wh: Mul by 2, Pow 2, Mul by the anchor grid.
  const onnx::NodeProto* xy_twice = sole_reader(split->output(0), "Mul");
  const onnx::NodeProto* xy_grid = xy_twice ? sole_reader(xy_twice->output(0), "Add") : nullptr;
  const onnx::NodeProto* xy_scaled = xy_grid ? sole_reader(xy_grid->output(0), "Mul") : nullptr;
  const onnx::NodeProto* wh_twice = sole_reader(split->output(1), "Mul");
  const onnx::NodeProto* wh_squared = wh_twice ? sole_reader(wh_twice->output(0), "Pow") : nullptr;
  const onnx::NodeProto* wh_scaled = wh_squared ? sole_reader(wh_squared->output(0), "Mul") : nullptr;
  if (!xy_scaled || !wh_scaled) unlike(*split, "its box outputs are not read by those steps");
  const onnx::NodeProto* concat = sole_reader(xy_scaled->output(0), "Concat");
  if (!concat || concat->input_size() != 3 || concat->input(1) != wh_scaled->output(0) ||
      concat->input(2) != split->output(2) || (int_attribute(*concat, "axis", 0) != 4 &&
                                                int_attribute(*concat, "axis", 0) != -1))
    unlike(*xy_scaled, "the decoded values are not concatenated back over the last axis in their order");
  const FloatTensor* xy_factor = other_operand(*xy_twice, split->output(0));
  const FloatTensor* grid = other_operand(*xy_grid, xy_twice->output(0));
  const FloatTensor* stride = other_operand(*xy_scaled, xy_grid->output(0));
  const FloatTensor* wh_factor = other_operand(*wh_twice, split->output(1));
  const FloatTensor* anchor_grid = other_operand(*wh_scaled, wh_squared->output(0));
  const auto is_two = [](const FloatTensor* t) { return t && t->numel() == 1 && matches_value(t->data[0], 2); };
  if (!is_two(xy_factor)) unlike(*xy_twice, "not a product by 2");
  if (!is_two(wh_factor)) unlike(*wh_twice, "not a product by 2");
  if (wh_squared->input(0) != wh_twice->output(0) || !is_scalar(*wh_squared, 1, 2)) unlike(*wh_squared, "not a square");
  if (!stride || stride->numel() != 1 || !(stride->data[0] > 0)) unlike(*xy_scaled, "not a product by the stride");
  if (!grid || !broadcasts_to_grid(*grid, anchors, s.h, s.w))
    unlike(*xy_grid, "not a sum with a grid of [1, A, H, W, 2]");
  if (!anchor_grid || !broadcasts_to_grid(*anchor_grid, anchors, s.h, s.w))
    unlike(*wh_scaled, "not a product by anchor sizes of [1, A, H, W, 2]");
  decode = YoloDecode{stride->data[0], {}};
  for (int64_t a = 0; a < anchors; ++a)
    for (int64_t i = 0; i < 2; ++i) decode.anchors.push_back(grid_constant_at(*anchor_grid, a, 0, 0, i));
  for (int64_t a = 0; a < anchors; ++a)
    for (int64_t h = 0; h < s.h; ++h)
      for (int64_t w = 0; w < s.w; ++w)
        for (int64_t i = 0; i < 2; ++i) {
          if (!matches_value(grid_constant_at(*grid, a, h, w, i), (i == 0 ? w : h) - 0.5))
            unlike(*xy_grid, "the grid is not YOLOv5's (w - 0.5, h - 0.5) at (h, w) = (" + std::to_string(h) + ", " +
                                 std::to_string(w) + ")");
          if (grid_constant_at(*anchor_grid, a, h, w, i) != decode.anchors[static_cast<size_t>(2 * a + i)])
            unlike(*wh_scaled, "anchor sizes that vary over the image");
        }
  try {
    check_decode(decode, anchors, s);
  } catch (const Error& e) {
    unlike(*wh_scaled, e.what());
  }
  for (const onnx::NodeProto* step : {sigmoid, split, xy_twice, xy_grid, xy_scaled, wh_twice, wh_squared, wh_scaled})
    decoded_steps_.insert(step);
  decoded_steps_.insert(concat);
  return concat;
}

}  // namespace octet::onnx_import
