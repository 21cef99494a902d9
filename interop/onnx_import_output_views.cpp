// The importer's detection-head outputs: convs' values rearranged without
// computing (graph/output_view.h). Each level's A x K channels viewed as
// [N, A, K, H, W] (a Reshape) and permuted (a Transpose), or permuted to
// channels last first, then flattened to rows and concatenated over the
// levels: RetinaNet's, SSD's, FCOS's and YOLO's heads as exported. Such a value
// may only be returned; each of its convs becomes an output node.
#include <algorithm>

#include "common/error.h"
#include "interop/onnx_importer.h"

namespace octet::onnx_import {

bool batch_first_view(const std::vector<int64_t>& dims, const std::vector<int64_t>& features, int64_t file_batch) {
  if (dims.size() != features.size() + 1 || (dims[0] != kBatchDim && dims[0] != 0 && dims[0] != -1 &&
                                             dims[0] != file_batch))
    return false;
  for (size_t d = 0; d < features.size(); ++d)
    if (dims[d + 1] != features[d] && !(d + 1 == features.size() && dims[d + 1] == -1)) return false;
  return true;
}

namespace {
// Whether `target` (one sample's dimensions, the first possibly -1) merges the leading axes of `v` (merged 1) and
// keeps the rest; then sets v.merged.
bool merges_leading(OutputView& v, const ActShape& s, const std::vector<int64_t>& target) {
  for (int merged = 1; merged <= 4; ++merged) {
    OutputView candidate = v;
    candidate.merged = merged;
    std::vector<int64_t> dims = output_part_dims(candidate, s);
    if (target.size() == dims.size() && (target[0] == -1 || target[0] == dims[0]) &&
        std::equal(target.begin() + 1, target.end(), dims.begin() + 1))
      return v.merged = merged, true;
  }
  return false;
}
}  // namespace

// Whether `value` is returned, as it is or through Reshapes, Flattens and Concats alone (the steps to a head's
// rows); else the importer refuses the step that makes it by the step's own rule.
bool Importer::returned_as_rows(const std::string& value, int depth) const {
  if (is_model_output(value)) return true;
  const auto readers = readers_.find(value);
  if (readers == readers_.end() || depth > g_.node_size()) return false;
  for (const onnx::NodeProto* r : readers->second) {
    const std::string& op = r->op_type();
    if ((op != "Reshape" && op != "Flatten" && op != "Concat") || !returned_as_rows(r->output(0), depth + 1))
      return false;
  }
  return true;
}

// A Transpose of an image's channels viewed in groups ([N, A, K, H, W]) other than a channel shuffle's.
bool Importer::permuted_groups(const onnx::NodeProto& n) {
  const auto view = grouped_views_.find(n.input(0));
  const std::vector<int64_t> perm = ints_attribute(n, "perm", {});
  if (view == grouped_views_.end() || view->second.step != GroupedStep::Split || perm.size() != 5 || perm[0] != 0)
    return false;
  OutputView v{"", view->second.groups, "", 1, {}, 1, {}};
  for (size_t i = 1; i < 5; ++i) {
    if (perm[i] < 1 || perm[i] > 4) return false;
    v.order += "akhw"[perm[i] - 1];
  }
  const int x = view->second.node;
  const onnx::NodeProto* decoded = v.order == "ahwk" ? yolo_decode(n.output(0), shape_of(x), v.groups, v.decode)
                                                     : nullptr;
  const std::string& rows = decoded ? decoded->output(0) : n.output(0);
  if (!returned_as_rows(rows)) return false;
  arranged_[rows] = {{x, v}};
  return true;
}

// A Reshape or Flatten of a permuted view (its leading axes merged into rows), or of a channels-last image (rows of
// K of its H, W, C values: A = C / K).
bool Importer::arranged_rows(const onnx::NodeProto& n) {
  const bool channels_last = channels_last_.count(n.input(0)) > 0;
  const auto arranged = arranged_.find(n.input(0));
  if (!channels_last && (arranged == arranged_.end() || arranged->second.size() != 1)) return false;
  if (channels_last && !returned_as_rows(n.output(0))) return false;
  std::vector<int64_t> target;
  if (n.op_type() == "Flatten") {
    if (int_attribute(n, "axis", 1) != 1) refuse(n, "axis other than 1");
    target = {-1};
  } else {
    const ShapeValue* shape = shape_value(n, 1);
    const bool copies_batch = shape && !shape->values.empty() && shape->values[0] == 0 &&
                              int_attribute(n, "allowzero", 0) == 0;  // ONNX's 0: the input's dimension
    if (!shape || shape->values.empty() ||
        (shape->values[0] != kBatchDim && shape->values[0] != file_batch_ && !copies_batch))
      return false;
    target.assign(shape->values.begin() + 1, shape->values.end());
  }
  const int x = channels_last ? value_node(n, 0) : arranged->second[0].node;
  const ActShape s = shape_of(x);
  OutputView v = channels_last ? OutputView{"", 1, "hwak", 1, {}, 1, {}} : arranged->second[0].view;
  if (v.merged != 1) return false;
  if (channels_last && target.size() >= 2 && target.back() > 0 && s.c % target.back() == 0 &&
      !merges_leading(v, s, target))
    v.groups = static_cast<int>(s.c / target.back());
  if (!merges_leading(v, s, target)) return false;
  arranged_[n.output(0)] = {{channels_last ? activation(n, 0) : x, v}};
  summary_.dropped.push_back(n.op_type());
  return true;
}

// A conv's [N, C, H, W] viewed as [N, C, H W], concatenated over the positions (axis 2) and returned, as YOLOv8's
// segmentation head returns its mask coefficients, or viewed again (a pose head's keypoints, yolov8_keypoints): a
// part of that output, which the Concat places.
bool Importer::positions_view(const onnx::NodeProto& n) {
  const onnx::NodeProto* levels = sole_reader_of(n.output(0), "Concat");
  const int64_t axis = levels ? int_attribute(*levels, "axis", 0) : 0;
  if (!levels || (axis != 2 && axis != -1) || !values_.count(n.input(0)) || is_flat(value_node(n, 0)) ||
      is_one_row(n, 0) || !(returned_as_rows(n.output(0)) || sole_reader_of(levels->output(0), "Reshape")))
    return false;
  const ActShape s = shape_of(value_node(n, 0));
  const ShapeValue* shape = shape_value(n, 1);
  if (!shape || !batch_first_view(shape->values, {s.c, int64_t(s.h) * s.w}, file_batch_)) return false;
  arranged_[n.output(0)] = {{activation(n, 0), {"", 1, "akhw", 2, {}, 2, {}}}};
  summary_.dropped.push_back(n.op_type());
  return true;
}

// A Concat over axis 1 of such rows: their parts, one after another; of [K, H W] parts (YOLOv8's) over either axis:
// concat_placed.
bool Importer::concat_arranged(const onnx::NodeProto& n) {
  if (n.input_size() == 0 || !arranged_.count(n.input(0))) return false;
  const ArrangedPart& first_part = arranged_.at(n.input(0)).front();
  const std::vector<int64_t> first = output_part_dims(first_part.view, shape_of(first_part.node));
  const int64_t given = int_attribute(n, "axis", 0), rank = 1 + static_cast<int64_t>(first.size());
  std::vector<std::vector<ArrangedPart>> inputs;
  for (int i = 0; i < n.input_size(); ++i) {
    const auto in = arranged_.find(n.input(i));
    if (in == arranged_.end()) refuse(n, "a concat of a detection head's rows and other values");
    inputs.push_back(in->second);
  }
  if (concat_placed(n, inputs, given < 0 ? given + rank : given)) return true;
  if (given != 1 && given != 1 - rank)
    refuse(n, "a concat over axis " + std::to_string(given) + " of a detection head's rows: octet concatenates them "
              "over axis 1 (the rows) only");
  std::vector<ArrangedPart> parts;
  for (const std::vector<ArrangedPart>& in : inputs) parts.insert(parts.end(), in.begin(), in.end());
  for (const ArrangedPart& p : parts) {
    const std::vector<int64_t> dims = output_part_dims(p.view, shape_of(p.node));
    if (!std::equal(first.begin() + 1, first.end(), dims.begin() + 1, dims.end()))
      refuse(n, "a concat of rows of different lengths");
  }
  arranged_[n.output(0)] = parts;
  summary_.dropped.push_back(n.op_type());
  return true;
}

// A Concat of [K, H W] parts over the positions (axis 2), or over the values (axis 1) of ones placed so: each
// input's parts placed after the previous inputs' along that axis (YOLOv8's output0: its boxes and classes, then a
// segmentation head's mask coefficients). False for other parts, and for rows after rows (concat_arranged's).
bool Importer::concat_placed(const onnx::NodeProto& n, const std::vector<std::vector<ArrangedPart>>& inputs,
                             int64_t axis) {
  bool positions = true, placed = false;
  for (const std::vector<ArrangedPart>& in : inputs)
    for (const ArrangedPart& p : in) {
      const OutputView& v = p.view;
      positions &= v.order == "akhw" && v.groups == 1 && v.merged == 2 && v.merged_last == 2;
      placed |= !v.at.empty();
    }
  if (!positions && placed) refuse(n, "a concat of YOLOv8's placed values and a detection head's rows");
  if (!positions || (!placed && axis != 2)) return false;
  if (axis != 1 && axis != 2)
    refuse(n, "a concat over axis " + std::to_string(axis) + " of [N, K, H W] views: octet concatenates them over "
              "axis 1 or 2");
  std::vector<ArrangedPart> parts;
  int64_t offset = 0, across = -1;  // along the axis; the other axis' size, the same for every input
  for (const std::vector<ArrangedPart>& in : inputs) {
    int64_t extent[2] = {0, 0}, rows = 0;
    for (ArrangedPart p : in) {
      const std::vector<int64_t> dims = output_part_dims(p.view, shape_of(p.node));
      if (p.view.at.empty()) p.view.at = {rows, 0}, rows += dims[0];  // rows after rows
      for (int d = 0; d < 2; ++d) extent[d] = std::max(extent[d], p.view.at[d] + dims[d]);
      p.view.at[axis - 1] += offset;
      parts.push_back(p);
    }
    const int64_t other = extent[2 - axis];
    if (across >= 0 && other != across)
      refuse(n, "a concat over axis " + std::to_string(axis) + " of [N, K, H W] views of " + std::to_string(across) +
                    " and " + std::to_string(other) + " along axis " + std::to_string(3 - axis));
    across = other;
    offset += extent[axis - 1];
  }
  arranged_[n.output(0)] = parts;
  summary_.dropped.push_back(n.op_type());
  return true;
}

}  // namespace octet::onnx_import
