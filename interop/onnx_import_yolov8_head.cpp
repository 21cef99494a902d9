// YOLOv8's (and YOLO11's) Detect head as ultralytics exports it (static
// shapes): per level the box conv (4 sides x B bins) and the class conv
// concatenated over the channels, viewed as [N, C, H W]; the levels
// concatenated over the positions; Split [4 B, classes] over axis 1; the boxes'
// DFL (Reshape to [N, 4, B, P], Transpose [0, 2, 1, 3], Softmax over axis 1, a
// fixed 1x1 Conv of weights 0 .. B - 1, Reshape to [N, 4, P]) and dist2bbox
// (Split or Slice into lt, rb; x1y1 = anchors - lt, x2y2 = anchors + rb;
// Concat((x1y1 + x2y2) / 2, x2y2 - x1y1) * strides); the classes' Sigmoid;
// Concat over axis 1: output0 [N, 4 + classes, P] (a segmentation head's has
// its mask coefficients concatenated after them, a pose head its keypoints,
// decoded: yolov8_keypoints). octet keeps the convs as
// outputs, each placed in the output (graph/output_view.h) with its decode,
// applied in float where values leave octet; the steps are checked here,
// their constants against each level's cell centres and stride, and dropped.
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "graph/output_decode.h"
#include "interop/onnx_importer.h"

namespace octet::onnx_import {

namespace {
constexpr const char* kYolov8Pattern =
    "YOLOv8's Detect head (per level box and class convs concatenated over axis 1 and viewed as [N, C, HW], the "
    "levels concatenated over axis 2, Split [4 B, classes], DFL, dist2bbox, Sigmoid, Concat over axis 1)";

// Why a head is refused: what of it differs from kYolov8Pattern.
std::string unlike_yolov8(const std::string& what) {
  return std::string("a head read otherwise than ") + kYolov8Pattern + ": " + what;
}

// A level's box or class conv in output0 ([4 + classes, P]): [K, H W] at (row, position).
OutputView yolov8_part(DecodeKind kind, float stride, int64_t row, int64_t position) {
  OutputView v{"", 1, "akhw", 2, {}, 2, {row, position}};
  v.decode.kind = kind, v.decode.stride = stride;
  return v;
}

bool close_to(float a, double b) { return std::abs(a - b) <= 1e-5 * std::max(1.0, std::abs(b)); }
}  // namespace

// A level's Concat of its box and class convs, read only by a Reshape to [N, C, -1] that the levels' Concat over
// axis 2 reads: recorded (yolov8_levels_), nothing imported.
bool Importer::yolov8_level(const onnx::NodeProto& n) {
  const int64_t axis = int_attribute(n, "axis", 0);
  if (n.input_size() != 2 || (axis != 1 && axis != -3) || !values_.count(n.input(0)) || !values_.count(n.input(1)))
    return false;
  const ActShape boxes = shape_of(value_node(n, 0)), classes = shape_of(value_node(n, 1));
  const onnx::NodeProto* view = nullptr;
  bool shape_read = false;  // as a dynamic export does, to view the level (and to make its anchors)
  for (const onnx::NodeProto* r : readers_[n.output(0)]) {
    if (r->op_type() == "Shape")
      shape_read = true;
    else if (r->op_type() == "Reshape" && !view)
      view = r;
    else
      return false;
  }
  const onnx::NodeProto* levels = view ? sole_reader_of(view->output(0), "Concat") : nullptr;
  const int64_t levels_axis = levels ? int_attribute(*levels, "axis", 0) : 0;
  if (!levels || (levels_axis != 2 && levels_axis != -1)) return false;
  if (shape_read)
    refuse(n, "a YOLOv8 head exported with dynamic shapes (its levels' shapes read by Shape): octet takes the static "
              "export (yolo export format=onnx dynamic=False)");
  const ShapeValue* dims = ints_ahead(view->input(1));
  const int64_t channels = boxes.c + classes.c, positions = int64_t(boxes.h) * boxes.w;
  if (!dims || boxes.h != classes.h || boxes.w != classes.w || boxes.c < 4 || boxes.c % 4 != 0 ||
      !batch_first_view(dims->values, {channels, positions}, file_batch_))
    return false;
  yolov8_levels_[view->output(0)] = {activation(n, 0), activation(n, 1)};
  decoded_steps_.insert(view);
  summary_.dropped.push_back(n.op_type());
  return true;
}

// The levels' Concat over axis 2: the rest of the head matched from it, the output's parts in arranged_.
bool Importer::yolov8_head(const onnx::NodeProto& n) {
  if (n.input_size() == 0 || !yolov8_levels_.count(n.input(0))) return false;
  std::vector<Yolov8Level> levels;
  std::vector<int64_t> first_position{0};  // of each level, and the total last
  for (int i = 0; i < n.input_size(); ++i) {
    const auto level = yolov8_levels_.find(n.input(i));
    if (level == yolov8_levels_.end()) refuse(n, "a concat of a YOLOv8 level's values and other values");
    const ActShape boxes = shape_of(level->second.boxes), classes = shape_of(level->second.classes);
    const ActShape first_boxes = shape_of(levels.empty() ? level->second.boxes : levels[0].boxes);
    const ActShape first_classes = shape_of(levels.empty() ? level->second.classes : levels[0].classes);
    if (boxes.c != first_boxes.c || classes.c != first_classes.c)
      refuse(n, "YOLOv8 levels of different box or class channels");
    levels.push_back(level->second);
    first_position.push_back(first_position.back() + int64_t(boxes.h) * boxes.w);
  }
  const int64_t box_channels = shape_of(levels[0].boxes).c, classes = shape_of(levels[0].classes).c;
  const auto unlike = [&](const onnx::NodeProto& at, const std::string& what) { refuse(at, unlike_yolov8(what)); };
  const onnx::NodeProto* split = sole_reader_of(n.output(0), "Split");
  const int64_t split_axis = split ? int_attribute(*split, "axis", 0) : 0;
  const ShapeValue* sizes = split && has_input(*split, 1) ? ints_ahead(split->input(1)) : nullptr;
  const std::vector<int64_t> split_sizes = sizes ? sizes->values : split ? ints_attribute(*split, "split", {})
                                                                         : std::vector<int64_t>{};
  if (!split || (split_axis != 1 && split_axis != -2) || split->output_size() != 2 ||
      split_sizes != std::vector<int64_t>{box_channels, classes})
    unlike(n, "the levels' values are not split into " + std::to_string(box_channels) + " box and " +
                  std::to_string(classes) + " class channels by one Split over axis 1");
  std::vector<const onnx::NodeProto*> steps{split};
  const onnx::NodeProto* distances = yolov8_dfl(split->output(0), box_channels / 4, first_position.back(), steps);
  std::vector<float> strides;
  const onnx::NodeProto* boxes = yolov8_boxes(distances->output(0), levels, first_position, strides, steps);
  const onnx::NodeProto* scores = sole_reader_of(split->output(1), "Sigmoid");
  if (!scores) unlike(*split, "the class channels are not read by one Sigmoid");
  const onnx::NodeProto* output = sole_reader_of(boxes->output(0), "Concat");
  const int64_t output_axis = output ? int_attribute(*output, "axis", 0) : 0;
  bool adjacent = false;  // the boxes, then the class sigmoids
  for (int i = 0; output && i + 1 < output->input_size(); ++i)
    adjacent |= output->input(i) == boxes->output(0) && output->input(i + 1) == scores->output(0);
  if (!adjacent || (output_axis != 1 && output_axis != -2) || !returned_as_rows(output->output(0)))
    unlike(*boxes, "the boxes and the class sigmoids are not concatenated over axis 1 and returned (as they are, or "
                   "with other [N, K, H W] values concatenated over axis 1)");
  steps.push_back(scores);
  // Placed at row 0 of the boxes and of the sigmoids: the Concat places them in its output (concat_placed).
  for (size_t l = 0; l < levels.size(); ++l) {
    const int64_t at = first_position[l];
    arranged_[boxes->output(0)].push_back({levels[l].boxes, yolov8_part(DecodeKind::Yolov8Boxes, strides[l], 0, at)});
    arranged_[scores->output(0)].push_back({levels[l].classes, yolov8_part(DecodeKind::Sigmoid, 0, 0, at)});
  }
  decoded_steps_.insert(steps.begin(), steps.end());
  summary_.dropped.push_back(n.op_type());
  return true;
}

// DFL from `boxes` ([N, 4 B, P]): Reshape to [N, 4, B, P], Transpose [0, 2, 1, 3], Softmax over axis 1, the Conv
// of weights 0 .. B - 1, Reshape to [N, 4, P]; returns that Reshape.
const onnx::NodeProto* Importer::yolov8_dfl(const std::string& boxes, int64_t bins, int64_t positions,
                                            std::vector<const onnx::NodeProto*>& steps) {
  const auto unlike = [&](const onnx::NodeProto& at, const std::string& what) {
    refuse(at, unlike_yolov8("its DFL " + what));
  };
  const onnx::NodeProto* sides = sole_reader_of(boxes, "Reshape");
  const ShapeValue* sides_dims = sides ? ints_ahead(sides->input(1)) : nullptr;
  if (!sides_dims || !batch_first_view(sides_dims->values, {4, bins, positions}, file_batch_))
    unlike(sides ? *sides : *writers_.at(boxes), "does not view the box channels as [N, 4, " + std::to_string(bins) +
                                                     ", " + std::to_string(positions) + "]");
  const onnx::NodeProto* swapped = sole_reader_of(sides->output(0), "Transpose");
  if (!swapped || ints_attribute(*swapped, "perm", {}) != std::vector<int64_t>{0, 2, 1, 3})
    unlike(*sides, "does not transpose the view by perm [0, 2, 1, 3]");
  const onnx::NodeProto* softmax = sole_reader_of(swapped->output(0), "Softmax");
  const int64_t softmax_axis = softmax ? int_attribute(*softmax, "axis", -1) : 0;
  if (!softmax || (softmax_axis != 1 && softmax_axis != -3) || summary_.opset < 13)
    unlike(*swapped, "takes no softmax over the bins (axis 1, opset 13 or later)");
  const onnx::NodeProto* expectation = sole_reader_of(softmax->output(0), "Conv");
  const FloatTensor* weights = expectation ? constant_ahead(expectation->input(1)) : nullptr;
  const std::vector<int64_t> none, pads = expectation ? ints_attribute(*expectation, "pads", {0, 0, 0, 0}) : none;
  const std::vector<int64_t> strides = expectation ? ints_attribute(*expectation, "strides", {1, 1}) : none;
  bool arange = weights && weights->shape == std::vector<int64_t>{1, bins, 1, 1} && expectation->input_size() == 2 &&
                int_attribute(*expectation, "group", 1) == 1 &&
                std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; }) &&
                std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 1; });
  for (int64_t b = 0; arange && b < bins; ++b) arange = weights->data[static_cast<size_t>(b)] == static_cast<float>(b);
  if (!arange) unlike(*softmax, "expectation is not a bias-free 1x1 Conv of weights 0 .. " + std::to_string(bins - 1));
  const onnx::NodeProto* distances = sole_reader_of(expectation->output(0), "Reshape");
  const ShapeValue* dims = distances ? ints_ahead(distances->input(1)) : nullptr;
  if (!dims || !batch_first_view(dims->values, {4, positions}, file_batch_))
    unlike(*expectation, "does not view the expectations as [N, 4, " + std::to_string(positions) + "]");
  steps.insert(steps.end(), {sides, swapped, softmax, expectation, distances});
  return distances;
}

// dist2bbox from `distances` ([N, 4, P]) and the stride's Mul; returns that Mul; `strides` set per level from it,
// the anchors checked against each level's cell centres (w + 0.5, h + 0.5).
const onnx::NodeProto* Importer::yolov8_boxes(const std::string& distances, const std::vector<Yolov8Level>& levels,
                                              const std::vector<int64_t>& first_position, std::vector<float>& strides,
                                              std::vector<const onnx::NodeProto*>& steps) {
  const onnx::NodeProto& from = *writers_.at(distances);
  const auto unlike = [&](const onnx::NodeProto& at, const std::string& what) {
    refuse(at, unlike_yolov8("its dist2bbox " + what));
  };
  const std::vector<std::string> sides = yolov8_sides(distances, steps);
  if (sides.empty()) unlike(from, "does not split the distances into lt and rb (a Split [2, 2] or two Slices)");
  const int64_t positions = first_position.back();
  const auto anchors_of = [&](const onnx::NodeProto* step, const std::string& value) -> const onnx::NodeProto* {
    const FloatTensor* anchors = step ? other_operand(*step, value) : nullptr;
    if (!anchors || anchors->numel() != 2 * positions) return nullptr;
    for (size_t l = 0; l < levels.size(); ++l) {
      const ActShape s = shape_of(levels[l].boxes);
      for (int64_t p = 0; p < int64_t(s.h) * s.w; ++p)
        for (int64_t axis = 0; axis < 2; ++axis)
          if (!close_to(anchors->data[static_cast<size_t>(axis * positions + first_position[l] + p)],
                        static_cast<double>(axis == 0 ? p % s.w : p / s.w) + 0.5))
            refuse(*step, "YOLOv8 anchors other than the cells' centres (w + 0.5, h + 0.5), at position " +
                              std::to_string(first_position[l] + p));
    }
    return step;
  };
  const onnx::NodeProto* top_left = anchors_of(sole_reader_of(sides[0], "Sub"), sides[0]);
  const onnx::NodeProto* bottom_right = anchors_of(sole_reader_of(sides[1], "Add"), sides[1]);
  if (!top_left || top_left->input(1) != sides[0] || !bottom_right)
    unlike(from, "does not take anchors - lt and anchors + rb");
  const std::string &x1y1 = top_left->output(0), &x2y2 = bottom_right->output(0);
  const onnx::NodeProto *sum = nullptr, *size = nullptr;
  for (const onnx::NodeProto* r : readers_[x1y1]) {
    if (r->op_type() == "Add" && r->input_size() == 2 && (r->input(0) == x2y2 || r->input(1) == x2y2)) sum = r;
    if (r->op_type() == "Sub" && r->input_size() == 2 && r->input(0) == x2y2 && r->input(1) == x1y1) size = r;
  }
  const onnx::NodeProto* half = sum ? sole_reader_of(sum->output(0), "Div") : nullptr;
  if (sum && !half) half = sole_reader_of(sum->output(0), "Mul");
  const bool halved = half && (half->op_type() == "Div" ? half->input(0) == sum->output(0) && is_scalar(*half, 1, 2.0)
                                                        : is_scalar(*half, half->input(0) == sum->output(0), 0.5));
  if (readers_[x1y1].size() != 2 || readers_[x2y2].size() != 2 || !size || !halved)
    unlike(*top_left, "does not take (x1y1 + x2y2) / 2 and x2y2 - x1y1");
  const onnx::NodeProto* box = sole_reader_of(half->output(0), "Concat");
  const int64_t box_axis = box ? int_attribute(*box, "axis", 0) : 0;
  if (!box || box->input_size() != 2 || box->input(1) != size->output(0) || (box_axis != 1 && box_axis != -2))
    unlike(*half, "does not concatenate the centres and sizes over axis 1");
  const onnx::NodeProto* scaled = sole_reader_of(box->output(0), "Mul");
  const FloatTensor* stride = scaled ? other_operand(*scaled, box->output(0)) : nullptr;
  if (!stride || stride->numel() != positions) unlike(*box, "does not multiply the boxes by a stride per position");
  for (size_t l = 0; l < levels.size(); ++l) {
    strides.push_back(stride->data[static_cast<size_t>(first_position[l])]);
    for (int64_t p = first_position[l]; p < first_position[l + 1]; ++p)
      if (stride->data[static_cast<size_t>(p)] != strides.back() || !(strides.back() > 0))
        refuse(*scaled, "YOLOv8 strides that are not one positive value per level, at position " + std::to_string(p));
  }
  steps.insert(steps.end(), {top_left, bottom_right, sum, half, size, box, scaled});
  return scaled;
}

// YOLOv8's pose head's keypoint decode of its keypoint convs' [N, K x 3, P] (placed parts; `n` the Reshape of them
// to [N, K, 3, P]): y[:, :, :2] * 2 + (anchors - 0.5) (the cells, w and h), times the strides; y[:, :, 2:3]'s
// Sigmoid; Concat over axis 2; Reshape to [N, K x 3, P]. Whether n is that Reshape (then the parts, decoded, are
// that last Reshape's); refused, naming the step, where the rest differs.
bool Importer::yolov8_keypoints(const onnx::NodeProto& n) {
  const auto arranged = arranged_.find(n.input(0));
  if (arranged == arranged_.end()) return false;
  std::vector<ArrangedPart> parts = arranged->second;
  int64_t values = -1, positions = 0;  // per position; all parts'
  for (const ArrangedPart& p : parts) {
    const OutputView& v = p.view;
    const ActShape s = shape_of(p.node);
    if (v.at.size() != 2 || v.at[0] != 0 || v.decode.kind != DecodeKind::None || (values >= 0 && s.c != values))
      return false;
    values = s.c;
    positions = std::max(positions, v.at[1] + int64_t(s.h) * s.w);
  }
  const ShapeValue* dims = shape_value(n, 1);
  if (!dims || values % 3 != 0 || !batch_first_view(dims->values, {values / 3, 3, positions}, file_batch_))
    return false;
  const auto unlike = [&](const onnx::NodeProto& at, const std::string& what) {
    refuse(at, "a keypoint decode read otherwise than YOLOv8's pose head (Reshape to [N, K, 3, P]; Slice [0, 2) of "
               "axis 2, Mul by 2, Add of the cells, Mul by the strides; Slice [2, 3)'s Sigmoid; Concat over axis 2; "
               "Reshape to [N, 3 K, P]): " + what);
  };
  const onnx::NodeProto *xy = nullptr, *visibility = nullptr;
  for (const onnx::NodeProto* r : readers_[n.output(0)]) {
    const std::optional<std::pair<int64_t, int64_t>> range = unit_slice(*r, 2, 4);
    if (range == std::pair<int64_t, int64_t>{0, 2}) xy = r;
    if (range == std::pair<int64_t, int64_t>{2, 3}) visibility = r;
  }
  if (readers_[n.output(0)].size() != 2 || !xy || !visibility)
    unlike(n, "its (x, y) and visibility are not two Slices of axis 2");
  const onnx::NodeProto* twice = sole_reader_of(xy->output(0), "Mul");
  if (!twice || !is_scalar(*twice, twice->input(0) == xy->output(0) ? 1 : 0, 2.0)) unlike(*xy, "no Mul by 2");
  const onnx::NodeProto* shifted = sole_reader_of(twice->output(0), "Add");
  const FloatTensor* cells = shifted ? other_operand(*shifted, twice->output(0)) : nullptr;
  const onnx::NodeProto* scaled = cells ? sole_reader_of(shifted->output(0), "Mul") : nullptr;
  const FloatTensor* strides = scaled ? other_operand(*scaled, shifted->output(0)) : nullptr;
  if (!strides || cells->numel() != 2 * positions || strides->numel() != positions)
    unlike(*twice, "no Add of a cell per position, then Mul by a stride per position");
  for (ArrangedPart& p : parts) {
    const ActShape s = shape_of(p.node);
    const int64_t first = p.view.at[1];
    p.view.decode.kind = DecodeKind::Yolov8Keypoints, p.view.decode.stride = strides->data[static_cast<size_t>(first)];
    for (int64_t q = 0; q < int64_t(s.h) * s.w; ++q) {
      if (strides->data[static_cast<size_t>(first + q)] != p.view.decode.stride || !(p.view.decode.stride > 0))
        refuse(*scaled, "YOLOv8 keypoint strides that are not one positive value per level, at position " +
                            std::to_string(first + q));
      if (!close_to(cells->data[static_cast<size_t>(first + q)], static_cast<double>(q % s.w)) ||
          !close_to(cells->data[static_cast<size_t>(positions + first + q)], static_cast<double>(q / s.w)))
        refuse(*shifted, "YOLOv8 keypoint cells other than (w, h), at position " + std::to_string(first + q));
    }
  }
  const onnx::NodeProto* sigmoid = sole_reader_of(visibility->output(0), "Sigmoid");
  const onnx::NodeProto* joined = sole_reader_of(scaled->output(0), "Concat");
  const int64_t axis = joined ? int_attribute(*joined, "axis", 0) : 0;
  if (!sigmoid || !joined || joined->input_size() != 2 || joined->input(1) != sigmoid->output(0) ||
      (axis != 2 && axis != -2))
    unlike(*scaled, "(x, y) and the visibility's Sigmoid are not concatenated over axis 2");
  const onnx::NodeProto* flat = sole_reader_of(joined->output(0), "Reshape");
  const ShapeValue* flat_dims = flat ? ints_ahead(flat->input(1)) : nullptr;
  if (!flat_dims || !batch_first_view(flat_dims->values, {values, positions}, file_batch_))
    unlike(*joined, "the keypoints are not viewed back as [N, " + std::to_string(values) + ", " +
                        std::to_string(positions) + "]");
  decoded_steps_.insert({xy, visibility, twice, shifted, scaled, sigmoid, joined, flat});
  arranged_[flat->output(0)] = parts;
  summary_.dropped.push_back(n.op_type());
  return true;
}

// lt and rb of `distances` ([N, 4, P]): a Split [2, 2] over axis 1, or Slices [0, 2) and [2, 4) of axis 1; empty
// where neither reads it.
std::vector<std::string> Importer::yolov8_sides(const std::string& distances,
                                                std::vector<const onnx::NodeProto*>& steps) {
  const std::vector<const onnx::NodeProto*>& readers = readers_[distances];
  if (const onnx::NodeProto* split = sole_reader_of(distances, "Split")) {
    const int64_t axis = int_attribute(*split, "axis", 0);
    const ShapeValue* sizes = has_input(*split, 1) ? ints_ahead(split->input(1)) : nullptr;
    const std::vector<int64_t> given = sizes ? sizes->values : ints_attribute(*split, "split", {2, 2});
    if ((axis != 1 && axis != -2) || split->output_size() != 2 || given != std::vector<int64_t>{2, 2}) return {};
    steps.push_back(split);
    return {split->output(0), split->output(1)};
  }
  std::vector<std::string> sides(2);
  for (const onnx::NodeProto* r : readers) {
    const std::optional<std::pair<int64_t, int64_t>> range = unit_slice(*r, 1, 3);
    if (!range) return {};
    if (*range == std::pair<int64_t, int64_t>{0, 2}) sides[0] = r->output(0);
    if (range->first == 2 && range->second >= 4) sides[1] = r->output(0);
    steps.push_back(r);
  }
  if (readers.size() != 2 || sides[0].empty() || sides[1].empty()) return {};
  return sides;
}

}  // namespace octet::onnx_import
