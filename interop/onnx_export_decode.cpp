#include "interop/onnx_export_decode.h"

#include <cstdint>
#include <vector>

#include "common/error.h"

namespace octet {

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
  const std::string xy = w.step(
      "Mul", {w.step("Add", {w.step("Mul", {x + ".xy", x + ".two"}, x + ".xy2"), x + ".grid"}, x + ".xy_grid"),
              x + ".stride"},
      x + ".centre");
  const std::string twice = w.step("Mul", {x + ".wh", x + ".two"}, x + ".wh2");
  const std::string wh = w.step("Mul", {w.step("Pow", {twice, x + ".two"}, x + ".wh_squared"), x + ".anchor_grid"},
                                x + ".size");
  const std::string decoded = x + ".decoded";
  QdqGraphWriter::integer(w.node("Concat", {xy, wh, x + ".rest"}, decoded), "axis", 4);
  return decoded;
}

}  // namespace octet
