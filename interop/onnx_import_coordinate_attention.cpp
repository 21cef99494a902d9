// The ONNX importer's Coordinate Attention (Hou et al. 2021), as its authors
// write it: x pooled along its width to [N, C, H, 1] and along its height to
// [N, C, 1, W], the second transposed to [N, C, W, 1], the two concatenated
// over the height, one 1x1 conv, batch norm and activation over both, split
// back, the second transposed back, and each gate (a 1x1 conv and a sigmoid)
// multiplying x, broadcast over the other direction.
//
// octet holds a value of one column or one row the same way ([N, C, L, 1] and
// [N, C, 1, L] are the same NHWC bytes), so a Transpose of perm [0, 1, 3, 2] of
// one is a view of its node (transposed_hw_). A Concat of such columns over
// the height is held as its parts (height_parts_): each node reading it is
// per pixel (a 1x1 conv, a batch norm, an element-wise operator), so it is
// imported once per part, and a Slice or Split back into the parts gives them
// back. A Mul by a gate of one column or row upsamples it to the image first.
#include <algorithm>

#include "interop/onnx_importer.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

namespace {
const std::vector<int64_t> kSwapHeightWidth = {0, 1, 3, 2};
// What a concat over the height may be read by: operators of each pixel alone (a Conv: 1x1, stride 1, unpadded).
const std::set<std::string> kPerPixelOps = {"Conv",    "BatchNormalization", "Relu", "Clip", "Sigmoid", "HardSigmoid",
                                            "HardSwish", "LeakyRelu", "Tanh", "Add", "Sub", "Mul", "Div",
                                            "Identity", "Dropout"};

bool pointwise_conv(const onnx::NodeProto& n) {
  const auto all = [](const std::vector<int64_t>& v, int64_t e) {
    return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == e; });
  };
  return all(ints_attribute(n, "kernel_shape", {1, 1}), 1) && all(ints_attribute(n, "strides", {1}), 1) &&
         all(ints_attribute(n, "pads", {0}), 0) && string_attribute(n, "auto_pad", "NOTSET") == "NOTSET";
}
}  // namespace

bool Importer::dispatch_height_parts(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (op == "Transpose" && ints_attribute(n, "perm", {}) == kSwapHeightWidth) return swap_height_width(n);
  if (op == "Concat" && int_attribute(n, "axis", 0) == 2) return concat_columns(n);
  const auto reads_parts = [&](int i) { return has_input(n, i) && height_parts_.count(n.input(i)) > 0; };
  int first = -1;
  for (int i = n.input_size() - 1; i >= 0; --i)
    if (reads_parts(i)) first = i;
  if (first < 0) return false;
  if (op == "Slice" || op == "Split") return split_columns(n), true;
  if (!kPerPixelOps.count(op) || (op == "Conv" && !pointwise_conv(n)) || first != 0)
    refuse(n, "reads a concat over the height of columns (Coordinate Attention's), where octet takes 1x1 convs, "
              "batch norms, element-wise operators and a Slice or Split back into its parts");
  const std::vector<HeightPart> parts = height_parts_.at(n.input(0));
  for (int i = 1; i < n.input_size(); ++i) {
    if (reads_parts(i) && height_parts_.at(n.input(i)).size() != parts.size())
      refuse(n, "reads two concats over the height of different parts");
    if (!reads_parts(i) && has_input(n, i) && values_.count(n.input(i)))
      refuse(n, "reads a concat over the height of columns and another computed value");
  }
  // Each part in turn stands for the concat: n imported on it, its pending constant affine made a node.
  std::vector<HeightPart> out;
  for (size_t k = 0; k < parts.size(); ++k) {
    for (int i = 0; i < n.input_size(); ++i)
      if (reads_parts(i)) values_[n.input(i)] = height_parts_.at(n.input(i))[k].node;
    const size_t fused = fused_nodes_.size();
    if (!dispatch_channels_last(n)) import_op(n);
    if (fused_nodes_.size() != fused || !values_.count(n.output(0)))
      refuse(n, "a pattern of several nodes over a concat over the height");
    out.push_back({apply_pending(n.output(0)), parts[k].transposed, parts[k].length});
    values_.erase(n.output(0));
    for (int i = 0; i < n.input_size(); ++i)
      if (reads_parts(i)) values_.erase(n.input(i));
  }
  height_parts_[n.output(0)] = out;
  return true;
}

bool Importer::swap_height_width(const onnx::NodeProto& n) {
  if (const auto view = transposed_hw_.find(n.input(0)); view != transposed_hw_.end()) {
    define(n, view->second);  // back to the node's own orientation
    summary_.dropped.push_back(n.op_type());
    return true;
  }
  const auto in = values_.find(n.input(0));
  if (in == values_.end() || is_flat(in->second) || channels_last_.count(n.input(0)) || is_one_row(n, 0))
    return false;
  const ActShape s = shape_of(in->second);
  if (s.h != 1 && s.w != 1) return false;  // transpose() refuses it
  transposed_hw_[n.output(0)] = activation(n, 0);
  summary_.dropped.push_back(n.op_type());
  return true;
}

bool Importer::concat_columns(const onnx::NodeProto& n) {
  std::vector<HeightPart> parts;
  for (int i = 0; i < n.input_size(); ++i) {
    const std::string& in = n.input(i);
    if (const auto view = transposed_hw_.find(in); view != transposed_hw_.end()) {
      parts.push_back({view->second, true, shape_of(view->second).w});
      continue;
    }
    const auto value = values_.find(in);
    if (value == values_.end() || is_flat(value->second) || channels_last_.count(in) || one_row_.count(in) ||
        shape_of(value->second).w != 1)
      return false;  // concat() refuses it
    parts.push_back({activation(n, i), false, shape_of(value->second).h});
  }
  for (const HeightPart& p : parts)
    if (shape_of(p.node).c != shape_of(parts[0].node).c) refuse(n, "columns of different channel counts");
  height_parts_[n.output(0)] = parts;
  summary_.dropped.push_back(n.op_type());
  return true;
}

void Importer::split_columns(const onnx::NodeProto& n) {
  const std::vector<HeightPart>& parts = height_parts_.at(n.input(0));
  std::vector<std::pair<int64_t, int64_t>> ranges;  // [begin, end) of the height, per output
  if (n.op_type() == "Slice") {
    const ShapeValue *starts = shape_value(n, 1), *ends = shape_value(n, 2);
    const ShapeValue* axes = has_input(n, 3) ? shape_value(n, 3) : nullptr;
    const ShapeValue* steps = has_input(n, 4) ? shape_value(n, 4) : nullptr;
    if (!starts || !ends || starts->values.size() != 1 || ends->values.size() != 1 || !axes ||
        axes->values != std::vector<int64_t>{2} || (steps && steps->values != std::vector<int64_t>{1}))
      refuse(n, "a slice of a concat over the height other than of the height (axis 2), step 1");
    ranges.push_back({starts->values[0], ends->values[0]});
  } else {
    const ShapeValue* sizes = has_input(n, 1) ? shape_value(n, 1) : nullptr;
    const std::vector<int64_t> given = sizes ? sizes->values : ints_attribute(n, "split", {});
    if (int_attribute(n, "axis", 0) != 2 || given.size() != static_cast<size_t>(n.output_size()))
      refuse(n, "a split of a concat over the height other than over the height (axis 2) in given sizes");
    int64_t begin = 0;
    for (const int64_t size : given) ranges.push_back({begin, begin += size});
  }
  for (size_t k = 0; k < ranges.size(); ++k) {
    int64_t offset = 0;
    const HeightPart* match = nullptr;
    for (size_t p = 0; p < parts.size(); ++p) {
      const int64_t end = offset + parts[p].length;
      const bool last = p + 1 == parts.size();  // a slice's end may be past it
      if (ranges[k].first == offset && (ranges[k].second == end || (last && ranges[k].second > end)))
        match = &parts[p];
      offset = end;
    }
    if (!match) refuse(n, "a slice or split of a concat over the height other than into its parts");
    const std::string& out = n.output(static_cast<int>(k));
    if (match->transposed)
      transposed_hw_[out] = match->node;
    else
      values_[out] = match->node;
  }
  summary_.dropped.push_back(n.op_type());
}

// A gate of one column ([C, H, 1]) or one row ([C, 1, W]) of an image `x` ([C, H, W]): repeated to its size.
int Importer::broadcast_gate(const onnx::NodeProto& n, int x, int gate) {
  const ActShape sx = shape_of(x), sg = shape_of(gate);
  if (sg.c != sx.c || (sg.h == 1 && sg.w == 1) || sx == sg) return gate;
  const bool column = sg.h == sx.h && sg.w == 1, row = sg.w == sx.w && sg.h == 1;
  const int y = !column && !row ? -1 : column ? repeated(gate, 1, sx.w) : repeated(gate, sx.h, 1);
  if (y < 0)
    refuse(n, "multiplies " + to_string(sx) + " values by " + to_string(sg) + " ones: octet broadcasts a gate of "
                  "one column or row over a number of pixels whose prime factors are at most " +
                  std::to_string(kMostUpsample));
  return y;
}

}  // namespace octet::onnx_import
