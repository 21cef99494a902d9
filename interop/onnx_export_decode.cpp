#include "interop/onnx_export_decode.h"

#include <cstdint>
#include <map>
#include <vector>

#include "common/error.h"

namespace octet {

namespace {
// (x.xy * 2 + cells) * x.stride, with x.two = 2: YOLOv5's box centres and YOLOv8's keypoints, in cells' units.
std::string write_doubled_offsets(QdqGraphWriter& w, const std::string& x, const std::string& cells,
                                  const std::string& name) {
  return w.step(
      "Mul", {w.step("Add", {w.step("Mul", {x + ".xy", x + ".two"}, x + ".xy2"), cells}, x + ".xy_cells"),
              x + ".stride"},
      name);
}
}  // namespace

std::string write_yolo_decode(QdqGraphWriter& w, const std::string& permuted, const OutputView& v, const ActShape& s) {
  check(v.order == "ahwk", "cannot export the YOLOv5 decode of a view ordered '" + v.order +
                               "' (only [N, A, H, W, K], order ahwk)");
  const int64_t anchors = v.groups, k = s.c / v.groups, h = s.h, w_ = s.w;
  const std::string& x = permuted;
  std::vector<float> grid;  // [1, 1, H, W, 2], broadcast over the anchors
  for (int64_t y = 0; y < h; ++y)
    for (int64_t col = 0; col < w_; ++col)
      grid.insert(grid.end(), {static_cast<float>(col) - 0.5f, static_cast<float>(y) - 0.5f});
  w.initializer(x + ".grid", onnx::TensorProto::FLOAT, {1, 1, h, w_, 2}, grid);
  // [1, A, 1, 1, 2], broadcast over the image
  w.initializer(x + ".anchor_grid", onnx::TensorProto::FLOAT, {1, anchors, 1, 1, 2}, v.decode.anchors);
  w.initializer(x + ".two", onnx::TensorProto::FLOAT, {}, std::vector<float>{2.0f});
  w.initializer(x + ".stride", onnx::TensorProto::FLOAT, {}, std::vector<float>{v.decode.stride});
  w.initializer(x + ".split", onnx::TensorProto::INT64, {3}, std::vector<int64_t>{2, 2, k - 4});
  const std::string y = w.step("Sigmoid", {x}, x + ".sigmoid");
  onnx::NodeProto* split = w.node("Split", {y, x + ".split"}, x + ".xy");
  split->add_output(x + ".wh");
  split->add_output(x + ".rest");
  QdqGraphWriter::integer(split, "axis", 4);
  const std::string xy = write_doubled_offsets(w, x, x + ".grid", x + ".centre");
  const std::string twice = w.step("Mul", {x + ".wh", x + ".two"}, x + ".wh2");
  const std::string wh = w.step("Mul", {w.step("Pow", {twice, x + ".two"}, x + ".wh_squared"), x + ".anchor_grid"},
                                x + ".size");
  const std::string decoded = x + ".decoded";
  QdqGraphWriter::integer(w.node("Concat", {xy, wh, x + ".rest"}, decoded), "axis", 4);
  return decoded;
}

namespace {
// A box conv's values x [N, 4 B, H, W] decoded to [N, 4, H W]: centre and size in pixels.
std::string write_yolov8_boxes(QdqGraphWriter& w, const std::string& x, const ActShape& s, float stride) {
  const int64_t bins = s.c / 4, positions = int64_t(s.h) * s.w;
  w.initializer(x + ".sides_shape", onnx::TensorProto::INT64, {4}, std::vector<int64_t>{0, 4, bins, positions});
  std::vector<float> bin_values;
  for (int64_t b = 0; b < bins; ++b) bin_values.push_back(static_cast<float>(b));
  w.initializer(x + ".bins", onnx::TensorProto::FLOAT, {1, 1, bins, 1}, bin_values);
  w.initializer(x + ".bin_axis", onnx::TensorProto::INT64, {1}, std::vector<int64_t>{2});
  std::vector<float> centres;  // [1, 2, H W]: the cells' x, then their y
  for (int64_t axis = 0; axis < 2; ++axis)
    for (int64_t p = 0; p < positions; ++p)
      centres.push_back(static_cast<float>(axis == 0 ? p % s.w : p / s.w) + 0.5f);
  w.initializer(x + ".centres", onnx::TensorProto::FLOAT, {1, 2, positions}, centres);
  w.initializer(x + ".half", onnx::TensorProto::FLOAT, {}, std::vector<float>{0.5f});
  w.initializer(x + ".stride", onnx::TensorProto::FLOAT, {}, std::vector<float>{stride});
  w.initializer(x + ".halves", onnx::TensorProto::INT64, {2}, std::vector<int64_t>{2, 2});
  onnx::NodeProto* softmax = w.node("Softmax", {w.step("Reshape", {x, x + ".sides_shape"}, x + ".sides")}, x + ".p");
  QdqGraphWriter::integer(softmax, "axis", 2);
  onnx::NodeProto* expectation =
      w.node("ReduceSum", {w.step("Mul", {x + ".p", x + ".bins"}, x + ".weighted"), x + ".bin_axis"}, x + ".dist");
  QdqGraphWriter::integer(expectation, "keepdims", 0);
  onnx::NodeProto* split = w.node("Split", {x + ".dist", x + ".halves"}, x + ".lt");
  split->add_output(x + ".rb");
  QdqGraphWriter::integer(split, "axis", 1);
  // dist2bbox: centre = cell + (rb - lt) / 2, size = lt + rb
  const std::string centre = w.step(
      "Add", {w.step("Mul", {w.step("Sub", {x + ".rb", x + ".lt"}, x + ".shift2"), x + ".half"}, x + ".shift"),
              x + ".centres"},
      x + ".centre");
  const std::string size = w.step("Add", {x + ".lt", x + ".rb"}, x + ".size");
  QdqGraphWriter::integer(w.node("Concat", {centre, size}, x + ".box_cells"), "axis", 1);
  return w.step("Mul", {x + ".box_cells", x + ".stride"}, x + ".boxes");
}

// A keypoint conv's values x [N, 3 K, H, W] decoded to [N, 3 K, H W]: per keypoint (2 v + w, or h) x stride, then
// the visibility's sigmoid, as ultralytics' kpts_decode.
std::string write_yolov8_keypoints(QdqGraphWriter& w, const std::string& x, const ActShape& s, float stride) {
  const int64_t keypoints = s.c / 3, positions = int64_t(s.h) * s.w;
  w.initializer(x + ".keypoints_shape", onnx::TensorProto::INT64, {4},
                std::vector<int64_t>{0, keypoints, 3, positions});
  w.initializer(x + ".values_shape", onnx::TensorProto::INT64, {3}, std::vector<int64_t>{0, s.c, positions});
  std::vector<float> cells;  // [2, H W]: the cells' w, then their h
  for (int64_t axis = 0; axis < 2; ++axis)
    for (int64_t p = 0; p < positions; ++p) cells.push_back(static_cast<float>(axis == 0 ? p % s.w : p / s.w));
  w.initializer(x + ".cells", onnx::TensorProto::FLOAT, {2, positions}, cells);
  w.initializer(x + ".two", onnx::TensorProto::FLOAT, {}, std::vector<float>{2.0f});
  w.initializer(x + ".stride", onnx::TensorProto::FLOAT, {}, std::vector<float>{stride});
  w.initializer(x + ".sizes", onnx::TensorProto::INT64, {2}, std::vector<int64_t>{2, 1});
  onnx::NodeProto* split =
      w.node("Split", {w.step("Reshape", {x, x + ".keypoints_shape"}, x + ".keypoints"), x + ".sizes"}, x + ".xy");
  split->add_output(x + ".visibility_logit");
  QdqGraphWriter::integer(split, "axis", 2);
  const std::string xy = write_doubled_offsets(w, x, x + ".cells", x + ".xy_pixels");
  const std::string visibility = w.step("Sigmoid", {x + ".visibility_logit"}, x + ".visibility");
  QdqGraphWriter::integer(w.node("Concat", {xy, visibility}, x + ".decoded_keypoints"), "axis", 2);
  return w.step("Reshape", {x + ".decoded_keypoints", x + ".values_shape"}, x + ".keypoint_values");
}
}  // namespace

void write_yolov8_output(QdqGraphWriter& w, const Graph& graph, const std::vector<ActShape>& shapes,
                         const std::vector<std::string>& value, const ModelOutput& out) {
  std::map<int64_t, std::vector<std::string>> rows;  // per row offset, its parts in order of position
  std::map<int64_t, int64_t> widths, heights;
  for (int o : out.nodes) {
    const Node& node = graph.nodes[static_cast<size_t>(o)];
    const OutputView& v = node.view;
    const ActShape& s = shapes[static_cast<size_t>(o)];
    const std::vector<int64_t> dims = output_part_dims(v, s);
    const int64_t row = v.at[0];
    check(v.order == "akhw" && v.groups == 1 && v.merged == 2 && v.merged_last == 2 && dims.size() == 2 &&
              v.decode.kind != DecodeKind::Yolov5 &&
              v.at[1] == widths[row] && (!heights.count(row) || heights[row] == dims[0]),
          "cannot export output '" + node.name + "' of '" + out.name +
              "': placed otherwise than YOLOv8's parts ([K, H x W], the levels one after another over the positions)");
    const std::string& x = value[static_cast<size_t>(o)];
    std::string part;
    if (v.decode.kind == DecodeKind::Yolov8Boxes) {
      part = write_yolov8_boxes(w, x, s, v.decode.stride);
    } else if (v.decode.kind == DecodeKind::Yolov8Keypoints) {
      part = write_yolov8_keypoints(w, x, s, v.decode.stride);
    } else {
      w.initializer(x + ".part_shape", onnx::TensorProto::INT64, {3}, std::vector<int64_t>{0, dims[0], dims[1]});
      const std::string scores = v.decode.kind == DecodeKind::Sigmoid ? w.step("Sigmoid", {x}, x + ".scores") : x;
      part = w.step("Reshape", {scores, x + ".part_shape"}, x + ".part");
    }
    rows[row].push_back(part);
    widths[row] += dims[1];
    heights[row] = dims[0];
  }
  std::vector<std::string> stacked;
  int64_t next_row = 0;
  for (const auto& [row, parts] : rows) {
    check(row == next_row && widths[row] == out.dims[1],
          "cannot export output '" + out.name + "': its parts do not make whole rows one after another");
    next_row += heights[row];
    stacked.push_back(out.name + ".rows" + std::to_string(row));
    QdqGraphWriter::integer(w.node("Concat", parts, stacked.back()), "axis", 2);
  }
  QdqGraphWriter::integer(w.node("Concat", stacked, out.name), "axis", 1);
}

}  // namespace octet
