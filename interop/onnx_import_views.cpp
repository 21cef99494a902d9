// The ONNX importer's nodes that move values without computing: Reshape and
// Transpose (flatten, a channel shuffle, a change of view), Slice, Concat,
// Split and Gather of channels, Squeeze of height and width, Cast to a floating type.
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "common/error.h"
#include "interop/onnx_importer.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

// To (batch, features): octet's flatten; a [N, C, H, W] value as it is; the
// steps of a channel shuffle and of torch's GroupNorm (GroupedView).
void Importer::reshape(const onnx::NodeProto& n) {
  if (space_to_depth_step(n) || radix_softmax_step(n) || positions_view(n) || yolov8_keypoints(n)) return;
  if (arranged_.count(n.input(0)) && !arranged_rows(n))
    refuse(n, "a reshape of a detection head's permuted view other than merging its leading axes into rows");
  if (arranged_.count(n.input(0))) return;
  const auto view = grouped_views_.find(n.input(0));
  const int x = view != grouped_views_.end() ? view->second.node : activation(n, 0);
  const ShapeValue* target = shape_value(n, 1);
  if (!target) refuse(n, "a target shape octet cannot evaluate");
  std::vector<int64_t> dims = target->values;
  const ActShape in = shape_of(x);
  const bool flat = is_flat(x), one_row = is_one_row(n, 0);
  const std::vector<int64_t> in_dims = flat      ? std::vector<int64_t>{kBatchDim, in.numel()}
                                       : one_row ? std::vector<int64_t>{kBatchDim, in.c, in.w}
                                                 : std::vector<int64_t>{kBatchDim, in.c, in.h, in.w};
  for (size_t k = 0; k < dims.size(); ++k)  // 0 copies the input's dimension
    if (dims[k] == 0 && k < in_dims.size() && int_attribute(n, "allowzero", 0) == 0) dims[k] = in_dims[k];
  if (dims.size() == 5 && dims[1] == -1 && dims[2] > 0 && in.c % dims[2] == 0)  // view(N, -1, K, H, W): A x K
    dims[1] = in.c / dims[2];
  if (dims.empty() || (dims[0] != kBatchDim && dims[0] != -1 && dims[0] != file_batch_))
    refuse(n, "a reshape to " + shape_value_string(*target) + ", which does not keep the batch first");
  if (view == grouped_views_.end() && radix_view(n, dims)) return;
  const bool groups_divide = view == grouped_views_.end() && !flat && dims.size() > 2 && dims[1] > 0 &&
                             in.c % dims[1] == 0;
  if (groups_divide && dims.size() == 5 && dims[2] == in.c / dims[1] && dims[3] == in.h && dims[4] == in.w) {
    grouped_views_[n.output(0)] = {x, static_cast<int>(dims[1]), GroupedStep::Split};
    return;
  }
  if (groups_divide && dims.size() == 3 && (dims[2] == -1 || dims[2] == in.numel() / dims[1])) {
    grouped_views_[n.output(0)] = {x, static_cast<int>(dims[1]), GroupedStep::Runs};
    return;
  }
  const bool back = dims.size() == 4 && (dims[1] == in.c || dims[1] == -1) && dims[2] == in.h && dims[3] == in.w;
  if (back && view != grouped_views_.end() && view->second.step == GroupedStep::Transposed)
    return define(n, builder_.channel_shuffle(view->second.node, view->second.groups));
  if (back && view != grouped_views_.end() && view->second.step == GroupedStep::NormalisedRuns)
    return define(n, view->second.node);
  if (view != grouped_views_.end())
    refuse(n, "a reshape of a view of the channels in groups other than a channel shuffle's or a GroupNorm's");
  if (dims == in_dims && !flat) {
    if (one_row) one_row_.insert(n.output(0));
    return define(n, x);
  }
  // A 1-D value as an image of one row (x.view(n, c, 1, l)): octet's own view of it.
  if (one_row && dims.size() == 4 && dims[1] == in.c && dims[2] == 1 && dims[3] == in.w) return define(n, x);
  if (flat && dims.size() == 4) return rows_as_image(n, x, dims);
  if (flat && dims.size() == 3 && dims[1] == 1 && (dims[2] == -1 || dims[2] == in.numel())) {  // timm's ECA
    define(n, x);
    channel_sequences_.insert(n.output(0));
    return;
  }
  if (dims.size() != 2 || (dims[1] != -1 && dims[1] != in.numel()))
    refuse(n, "a reshape to " + shape_value_string(*target) + " of " + (flat ? "rows" : "images") + " " +
                  to_string(in) + ": octet reshapes only to (batch, features) or to a channel shuffle");
  define(n, builder_.flatten(x));
}

// What a value that is one of the importer's views (no octet node of its own) is, and what may read it; null
// for other values.
const char* Importer::view_of(const std::string& name) const {
  if (grouped_views_.count(name))
    return "a view of the channels in groups, which octet takes only in a channel shuffle (Reshape to [N, g, C/g, "
           "H, W], Transpose, Reshape back), a GroupNorm (Reshape to [N, g, -1], InstanceNormalization, Reshape "
           "back), ResNeSt's split attention (a Mul of two such views, a ReduceSum over axis 1) or GCNet's attention "
           "pooling (a mask's [N, 1, HW] softmaxed over axis 2, the image's [N, C, HW] in a MatMul by it)";
  if (position_weights_.count(name) || position_rows_.count(name) || pooled_views_.count(name))
    return "a step of GCNet's attention pooling, which octet takes only as a whole (a Softmax over a mask's positions, "
           "a MatMul of the image's [N, (1,) C, HW] view by it as a column, a Reshape to [N, C, 1, 1])";
  if (arranged_.count(name))
    return "a detection head's rearranged output (its convs' channels viewed as [N, A, K, H, W] or channels last, "
           "permuted, flattened to rows, concatenated over axis 1), which octet takes only as a model output";
  if (radix_views_.count(name))
    return "attention values viewed as [N, cardinality, r, C/cardinality], which octet takes only in ResNeSt's "
           "RadixSoftmax (a Transpose of perm [0, 2, 1, 3], a Softmax over axis 1)";
  if (splits_.count(name))
    return "a [N, r, C, H, W] value held as its r splits, which octet takes only in a Mul of two such, a Concat, "
           "ReduceSum or Softmax over axis 1 (ResNeSt's split attention, SKNet's selective kernel)";
  if (transposed_hw_.count(name))
    return "a column or row transposed (perm [0, 1, 3, 2]), which octet takes only in a Concat over the height "
           "(Coordinate Attention's) or a Transpose back";
  if (height_parts_.count(name))
    return "a concat over the height of columns (Coordinate Attention's), which octet takes only in 1x1 convs, "
           "batch norms, element-wise operators and a Slice or Split back into its parts";
  if (blocks_views_.count(name))
    return "an image viewed as [N, C, H/b, b, W/b, b], which octet takes only in a space-to-depth (a Transpose and "
           "a Reshape to [N, C b^2, H/b, W/b])";
  return nullptr;
}

// Rows read as a 1 x 1 image, channels first ([batch, C, 1, 1]: a squeeze-
// and-excitation gate as torch's view(b, c, 1, 1) writes it) or last ([batch,
// 1, 1, C]: Keras's Reshape((1, 1, c))): a slice of all C channels, which
// moves the values as they are (exact in int8) and makes the value an image.
void Importer::rows_as_image(const onnx::NodeProto& n, int x, const std::vector<int64_t>& dims) {
  const int64_t c = shape_of(x).numel();
  const auto is_c = [&](int64_t d) { return d == c || d == -1; };
  const bool first = is_c(dims[1]) && dims[2] == 1 && dims[3] == 1;
  const bool last = dims[1] == 1 && dims[2] == 1 && is_c(dims[3]);
  if (!first && !last)
    refuse(n, "a reshape of " + std::to_string(c) + " features to " + ints_string(dims) +
                  ": octet reshapes rows only to a 1 x 1 image ([batch, C, 1, 1] or [batch, 1, 1, C])");
  define(n, builder_.channel_slice(x, 0, static_cast<int>(c)));
  if (!first) channels_last_.insert(n.output(0));
}

// The middle step of a channel shuffle (see GroupedView), or a change of view
// between an image and its channels-last form (transpose_view).
void Importer::transpose(const onnx::NodeProto& n) {
  if (transpose_view(n) || space_to_depth_step(n) || radix_softmax_step(n)) return;
  const auto view = grouped_views_.find(n.input(0));
  const bool shuffle = view != grouped_views_.end() && view->second.step == GroupedStep::Split &&
                       ints_attribute(n, "perm", {}) == std::vector<int64_t>{0, 2, 1, 3, 4};
  if (!shuffle && permuted_groups(n)) return;
  if (!shuffle)
    refuse(n, "a transpose other than a channel shuffle's (Reshape to [N, g, C/g, H, W], perm [0,2,1,3,4]), a "
              "detection head's (that view permuted, batch first, and returned as rows) or one between an image and "
              "its channels-last view (perm [0,2,3,1], and [0,3,1,2] back)");
  grouped_views_[n.output(0)] = {view->second.node, view->second.groups, GroupedStep::Transposed};
}

// Of channels (axis 1), step 1: octet's channel slice. Of height and width
// (a 1-D value's length: a TCN's Chomp1d, x[:, :, :-k]): a Pad2d whose
// negative sides remove the rest, and with a step from 2 to 64 (YOLOv5's
// Focus) a max pool of 1 x 1 windows striding it (subsample).
void Importer::slice(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const ShapeValue *starts = shape_value(n, 1), *ends = shape_value(n, 2), *axes = shape_value(n, 3),
                   *steps = shape_value(n, 4);
  if (!starts || !ends || (has_input(n, 3) && !axes) || (has_input(n, 4) && !steps))
    refuse(n, "bounds octet cannot evaluate");
  const ActShape shape = shape_of(x);
  const bool one_row = is_one_row(n, 0);
  const int64_t rank = one_row ? 3 : 4, count = static_cast<int64_t>(starts->values.size());
  std::vector<int64_t> axis(axes ? axes->values : std::vector<int64_t>{});
  for (int64_t& a : axis) a = a < 0 ? a + rank : a;
  if (one_row)  // N, C, L: the length is octet's width
    for (int64_t& a : axis) a = a == 2 ? 3 : a;
  const bool channels = axis == std::vector<int64_t>{1};
  const bool image =
      !axis.empty() && std::all_of(axis.begin(), axis.end(), [](int64_t a) { return a == 2 || a == 3; });
  const bool stepped = steps && steps->values != std::vector<int64_t>(axis.size(), 1);
  const bool fair_steps = !steps || std::all_of(steps->values.begin(), steps->values.end(),
                                                [](int64_t s) { return s >= 1 && s <= 64; });
  if (!(channels || image) || std::set<int64_t>(axis.begin(), axis.end()).size() != axis.size() ||
      ends->values.size() != axis.size() || count != static_cast<int64_t>(axis.size()) ||
      (steps && steps->values.size() != axis.size()) || (stepped && (channels || !fair_steps)) || is_flat(x))
    refuse(n, "a slice other than of channels (axis 1) with step 1, or of height and width with a step from 1 to 64");
  int64_t first[4] = {0, 0, 0, 0}, end[4] = {0, shape.c, shape.h, shape.w}, step[4] = {1, 1, 1, 1};
  for (int64_t k = 0; k < count; ++k) {
    const int64_t size = end[axis[k]];
    const auto bound = [&](int64_t b) {
      if (b == kBatchDim || b == kUnknownDim) refuse(n, "bounds octet cannot evaluate");
      return std::min<int64_t>(std::max<int64_t>(b < 0 ? b + size : b, 0), size);
    };
    first[axis[k]] = bound(starts->values[k]), end[axis[k]] = bound(ends->values[k]);
    if (steps) step[axis[k]] = steps->values[k];
    if (end[axis[k]] <= first[axis[k]]) refuse(n, "an empty slice");
  }
  if (channels)
    return define(n, builder_.channel_slice(x, static_cast<int>(first[1]), static_cast<int>(end[1] - first[1])));
  define(n, subsample(x, first[2], first[3], end[2], end[3], step[2], step[3]));
}

std::optional<std::pair<int64_t, int64_t>> Importer::unit_slice(const onnx::NodeProto& r, int64_t axis,
                                                                int64_t rank) {
  const ShapeValue* starts = r.op_type() == "Slice" && r.input_size() >= 4 ? ints_ahead(r.input(1)) : nullptr;
  const ShapeValue* ends = starts ? ints_ahead(r.input(2)) : nullptr;
  const ShapeValue* axes = ends ? ints_ahead(r.input(3)) : nullptr;
  const ShapeValue* steps = r.input_size() >= 5 ? ints_ahead(r.input(4)) : nullptr;
  const std::vector<int64_t> one{1};
  const bool unit_step = r.input_size() < 5 || (steps && steps->values == one);
  if (!axes || (axes->values != std::vector<int64_t>{axis} && axes->values != std::vector<int64_t>{axis - rank}) ||
      starts->values.size() != 1 || ends->values.size() != 1 || !unit_step)
    return std::nullopt;
  return std::make_pair(starts->values[0], ends->values[0]);
}

void Importer::concat(const onnx::NodeProto& n) {
  if (stack_step(n) || concat_arranged(n) || yolov8_head(n) || yolov8_level(n)) return;
  const int64_t axis = int_attribute(n, "axis", 0);
  if (axis != 1 && axis != -3) refuse(n, "axis " + std::to_string(axis) + ": octet concatenates channels (axis 1)");
  std::vector<int> xs;
  for (int i = 0; i < n.input_size(); ++i) xs.push_back(activation(n, i));
  define(n, builder_.concat(xs));
}

void Importer::split(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const int64_t axis = int_attribute(n, "axis", 0);
  if (axis != 1 && axis != -3) refuse(n, "axis " + std::to_string(axis) + ": octet splits channels (axis 1)");
  const int channels = shape_of(x).c;
  const ShapeValue* given = shape_value(n, 1);
  if (has_input(n, 1) && !given) refuse(n, "split sizes that are not a constant");
  std::vector<int64_t> sizes = given ? given->values : ints_attribute(n, "split", {});
  const int parts = n.output_size();
  if (const auto* given_parts = attribute(n, "num_outputs"); given_parts && given_parts->i() != parts)
    refuse(n, "num_outputs " + std::to_string(given_parts->i()) + " for " + std::to_string(parts) + " outputs");
  if (sizes.empty() && attribute(n, "num_outputs")) {  // opset 18: equal parts, the last smaller
    const int part = (channels + parts - 1) / parts;
    sizes.assign(static_cast<size_t>(parts), part);
    sizes.back() = channels - part * (parts - 1);
  } else if (sizes.empty()) {
    if (channels % parts != 0) refuse(n, "channels that do not divide into equal parts");
    sizes.assign(static_cast<size_t>(parts), channels / parts);
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 1 || s > channels) refuse(n, "split sizes " + ints_string(sizes) + " for " + std::to_string(channels) + " channels");
    total += s;
  }
  if (static_cast<int>(sizes.size()) != n.output_size() || total != channels)
    refuse(n, "split sizes " + ints_string(sizes) + " for " + std::to_string(channels) + " channels");
  int offset = 0;
  for (int k = 0; k < n.output_size(); ++k) {
    const int size = static_cast<int>(sizes[static_cast<size_t>(k)]);
    values_[n.output(k)] = builder_.channel_slice(x, offset, size);
    offset += size;
  }
}

// An integer constant's values, also one whose Constant node comes after the
// node looking ahead at it (LayerNorm's second mean comes before the Constant
// of its axes, torch's Unsqueeze of a Gather after the Gather); null if none.
const ShapeValue* Importer::ints_ahead(const std::string& name) {
  if (const auto known = shape_values_.find(name); known != shape_values_.end()) return &known->second;
  const std::string what = where_ + ": tensor '" + name + "'";
  if (const auto t = initializers_.find(name); t != initializers_.end() && !is_float(*t->second))
    return &(shape_values_[name] = constant_shape_value(int_tensor(*t->second, what), t->second->dims_size() == 0));
  const auto made = constant_nodes_.find(name);
  const onnx::AttributeProto* value = made == constant_nodes_.end() ? nullptr : attribute(*made->second, "value");
  if (!value || !value->has_t() || is_float(value->t())) return nullptr;
  return &(shape_values_[name] = constant_shape_value(int_tensor(value->t(), what), value->t().dims_size() == 0));
}

// Expand as expand_as(x) writes it before a product (SENet's x *
// y.expand_as(x), y a gate per channel or per pixel): nothing, where every
// reader is a Mul by a value of the expanded shape, which broadcasts the
// unexpanded value alike.
void Importer::expand(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const ShapeValue* target = shape_value(n, 1);
  const auto has_target_shape = [&](const std::string& name) {
    const auto value = values_.find(name);
    if (!target || value == values_.end()) return false;
    const ActShape s = shape_of(value->second);
    const std::vector<int64_t> dims = is_flat(value->second) ? std::vector<int64_t>{s.c}
                                      : is_one_row(n, 0)     ? std::vector<int64_t>{s.c, s.w}
                                                             : std::vector<int64_t>{s.c, s.h, s.w};
    return target->values.size() == dims.size() + 1 && std::equal(dims.begin(), dims.end(), target->values.begin() + 1);
  };
  const std::vector<const onnx::NodeProto*>& readers = readers_[n.output(0)];
  const bool before_products = !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](const auto* r) {
    if (r->op_type() == "Div")  // F.normalize's x / norm.expand_as(x)
      return r->input_size() == 2 && r->input(1) == n.output(0) && has_target_shape(r->input(0));
    if (r->op_type() != "Mul" || r->input_size() != 2) return false;
    const std::string& other = r->input(0) == n.output(0) ? r->input(1) : r->input(0);
    return has_target_shape(other) || writer_of(other, "Expand");  // BAM's: both gates expand_as(x) (mul() checks them)
  });
  if (!before_products)
    refuse(n, "an Expand other than before a Mul by a value of the expanded shape (x * y.expand_as(x)) or by another "
              "Expand (BAM's gates), or a Div of one by it (x / y.expand_as(x))");
  summary_.dropped.push_back(n.op_type());
  define(n, x);
}

// x[:, k], as torchvision's GoogLeNet and Inception-v3 take each colour for
// transform_input (on with their pretrained weights): a Gather of one channel,
// its axis restored by the Unsqueeze that alone reads it, or kept (an index
// of shape [1]); octet's channel slice. And y[:, :, k] of a 1-D value (a
// TCN's classifier reads the last step): that column, a Pad2d removing the
// others, flattened.
void Importer::gather(const onnx::NodeProto& n) {
  const ShapeValue* index = shape_value(n, 1);
  const int64_t axis = int_attribute(n, "axis", 0);
  if (is_one_row(n, 0) && (axis == 2 || axis == -1) && index && index->scalar && index->values.size() == 1) {
    const int x = activation(n, 0);
    const int64_t length = shape_of(x).w, given = index->values[0], k = given < 0 ? given + length : given;
    if (k < 0 || k >= length) refuse(n, "index " + std::to_string(given) + " of a length of " + std::to_string(length));
    return define(n, builder_.flatten(builder_.pad(x, 0, static_cast<int>(-k), 0, static_cast<int>(k + 1 - length))));
  }
  const onnx::NodeProto* unsqueeze = sole_reader_of(n.output(0), "Unsqueeze");
  if (unsqueeze && unsqueeze->input(0) != n.output(0)) unsqueeze = nullptr;
  const auto axes = unsqueeze ? axes_of(*unsqueeze, 4) : std::nullopt;
  const bool restored = index && index->scalar && axes == std::vector<int64_t>{1};
  const bool kept = index && !index->scalar && index->columns == 0;
  if (axis != 1 || !index || index->values.size() != 1 || !(restored || kept))
    refuse(n, "a gather other than of one channel (axis 1, one index), its axis kept or restored by an Unsqueeze, "
              "or of one step of a 1-D value");
  const int x = activation(n, 0);
  if (is_flat(x)) refuse(n, "a gather of rows");
  const int64_t channels = shape_of(x).c, given = index->values[0], k = given < 0 ? given + channels : given;
  if (k < 0 || k >= channels)
    refuse(n, "index " + std::to_string(given) + " of " + std::to_string(channels) + " channels");
  const int y = builder_.channel_slice(x, static_cast<int>(k), 1);
  if (restored) {
    fused_nodes_[unsqueeze] = y;
    summary_.dropped.push_back(unsqueeze->op_type());
  } else {
    define(n, y);
  }
}

// A node's axes, counted from 0 in a value of `rank` dimensions and in order:
// the attribute (Squeeze and Unsqueeze below opset 13, ReduceMean below 18),
// else the constant input 1, looked for ahead; nullopt where that input is
// not a constant. An axis outside the rank is refused.
std::optional<std::vector<int64_t>> Importer::axes_of(const onnx::NodeProto& n, int64_t rank) {
  std::vector<int64_t> axes = ints_attribute(n, "axes", {});
  if (has_input(n, 1)) {
    const ShapeValue* given = ints_ahead(n.input(1));
    if (!given) return std::nullopt;
    axes = given->values;
  }
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) refuse(n, "axis " + std::to_string(a) + " of a " + std::to_string(rank) + "-D value");
    a = a < 0 ? a + rank : a;
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

// A Squeeze of height and width of size 1, in one node (TensorFlow's exports
// end their global pooling so) or two, one axis each, the second the first's
// only reader (PyTorch's x.squeeze(-1).squeeze(-1)): octet's flatten.
void Importer::squeeze(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const bool last = channels_last_.count(n.input(0)) > 0;
  const int64_t height = last ? 1 : 2;  // the axis of height; width's next
  const ActShape s = shape_of(x);
  const std::optional<std::vector<int64_t>> axes = axes_of(n, is_one_row(n, 0) ? 3 : 4);
  if (!axes) refuse(n, "axes that are not a constant");
  if (is_one_row(n, 0)) {  // a 1-D value's length of 1 (after its global pooling)
    if (s.w != 1 || *axes != std::vector<int64_t>{2})
      refuse(n, "a squeeze other than of the length of size 1 (axis 2) of a 1-D value, to batch and features");
    return define(n, builder_.flatten(x));
  }
  const onnx::NodeProto* then = sole_reader_of(n.output(0), "Squeeze");
  const bool one_axis = axes->size() == 1 && ((*axes)[0] == height || (*axes)[0] == height + 1);
  const bool one_of_two = one_axis && then && then->input(0) == n.output(0) &&
                          axes_of(*then, 3) == std::vector<int64_t>{height};
  if (one_axis && !one_of_two && !last && !is_flat(x) && s.h == 1 && s.w == 1) {
    define(n, x);  // [N, C, 1]: a 1-D value of length 1 (ECA-Net's y.squeeze(-1))
    one_row_.insert(n.output(0));
    return;
  }
  if (is_flat(x) || s.h != 1 || s.w != 1 || (*axes != std::vector<int64_t>{height, height + 1} && !one_of_two))
    refuse(n, "a squeeze other than of height and width of size 1 (axes " + std::to_string(height) + ", " +
                  std::to_string(height + 1) + ", in one node or two, to batch and features)");
  const int y = builder_.flatten(x);
  if (one_of_two) {
    fused_nodes_[then] = y;
    summary_.dropped.push_back(n.op_type());
  } else {
    define(n, y);
  }
}

// An Unsqueeze of a 1-D value of length 1 ([N, C, 1]) to [N, C, 1, 1]: the image of C x 1 x 1 it is; of
// axis 1 of an image, a split of a stack (stack_step).
void Importer::unsqueeze(const onnx::NodeProto& n) {
  if (stack_step(n)) return;
  const int x = activation(n, 0);
  if (is_flat(x)) {  // BAM's gate: rows unsqueezed at axis 2 (a 1-D value of length 1), then 3; or at both
    const std::optional<std::vector<int64_t>> given = axes_of(n, 4);  // how many: the output's rank is 2 more
    const std::optional<std::vector<int64_t>> axes = given ? axes_of(n, 2 + int64_t(given->size())) : std::nullopt;
    const bool one_row = axes == std::vector<int64_t>{2}, image = axes == std::vector<int64_t>{2, 3};
    if (!one_row && !image)
      refuse(n, "an unsqueeze of rows other than at axis 2, or 2 and 3 (a value per channel as an image)");
    define(n, builder_.channel_slice(x, 0, shape_of(x).c));
    if (one_row) one_row_.insert(n.output(0));
    return;
  }
  const std::optional<std::vector<int64_t>> axes = axes_of(n, 4);
  if (!is_one_row(n, 0) || shape_of(x).w != 1 || !axes || (*axes != std::vector<int64_t>{2} &&
                                                          *axes != std::vector<int64_t>{3}))
    refuse(n, "an unsqueeze other than of a 1-D value of length 1 to an image of 1 x 1 (axis 2 or 3), of a "
              "reduction's axis, or of axis 1 of images stacked by a Concat (torch.stack)");
  define(n, x);
}

bool Importer::is_model_output(const std::string& value) const {
  std::string v = value;
  for (int steps = 0; steps <= g_.node_size(); ++steps) {  // bounded: a file's Casts may form a cycle
    const auto uses = uses_.find(v);
    if (uses == uses_.end() || uses->second == 0)
      return std::any_of(g_.output().begin(), g_.output().end(), [&](const auto& out) { return out.name() == v; });
    const onnx::NodeProto& reader = *readers_.at(v).front();
    if (uses->second != 1 || reader.op_type() != "Cast" || reader.output_size() != 1 ||
        !is_float_type(int_attribute(reader, "to", 0)))
      return false;
    v = reader.output(0);
  }
  return false;
}

void Importer::note_computed_in_float32(int64_t type) {
  if (!is_float_type(type) || type == onnx::TensorProto::FLOAT) return;
  const std::string name = onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(type));
  std::vector<std::string>& noted = summary_.computed_in_float32;
  if (std::find(noted.begin(), noted.end(), name) == noted.end()) noted.push_back(name);
}

// Cast to a floating type of a value already float (iresnet's x.float(), a
// float16 model's casts at its input and output): the value itself, any
// pending affine kept with it; octet computes every floating type in float32.
// A weight is taken as float32 or refused by constant(); casts of integer
// shapes are evaluated (shape_node).
void Importer::cast(const onnx::NodeProto& n) {
  const int64_t to = int_attribute(n, "to", 0);
  note_computed_in_float32(to);
  const std::string& in = n.input(0);
  const bool constant_input = !values_.count(in) && (initializers_.count(in) || constants_.count(in));
  if (constant_input && (to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32)) {
    // Shape arithmetic as exporters wrote it before opset 9: a float constant cast to integers.
    const FloatTensor c = constant(n, 0);
    std::vector<int64_t> ints;
    for (float v : c.data) {
      if (v != std::floor(v) || std::fabs(v) > float(1 << 30))
        refuse(n, "Cast to " + onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(to)) +
                      " of a constant that is not whole numbers: octet reads such a cast as shape arithmetic only");
      ints.push_back(static_cast<int64_t>(v));
    }
    shape_values_[n.output(0)] = constant_shape_value(std::move(ints), c.shape.empty());
    summary_.dropped.push_back(n.op_type());
    return;
  }
  if (!is_float_type(to)) {
    const bool named = onnx::TensorProto::DataType_IsValid(static_cast<int>(to));
    refuse(n, "Cast to " +
                  (named ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(to))
                         : "type " + std::to_string(to)) +
                  ": octet values are floating-point");
  }
  if (constant_input) {
    constants_[n.output(0)] = constant(n, 0);
    return;
  }
  define(n, value_node(n, 0));
  if (const auto p = pending_affines_.find(in); p != pending_affines_.end()) pending_affines_[n.output(0)] = p->second;
  summary_.dropped.push_back(n.op_type());
}

}  // namespace octet::onnx_import
