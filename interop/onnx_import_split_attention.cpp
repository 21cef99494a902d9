// The ONNX importer's split attention (ResNeSt, as timm writes it): a grouped
// conv's r x C channels viewed as [N, r, C, H, W] (a view of the channels in
// groups, GroupedView), summed over the r splits (ReduceSum of axis 1), their
// pooled sum through two 1x1 convs to r x C attention values, a softmax over
// the r splits of each channel (RadixSoftmax: a Reshape to [N, cardinality,
// r, -1] and a Transpose to [N, r, cardinality, -1] before it), and each split
// gated by its attention and the products summed again. octet holds each
// split as a channel slice, a product as a Mul and the sums as Adds; a softmax
// over two splits is the sigmoid of their difference, sigmoid(a - b) and
// sigmoid(b - a), each difference a 1x1 conv of weights 1 and -1. SKNet's
// selective kernel, as timm writes it, stacks its paths (torch.stack: an
// Unsqueeze of axis 1 of each, a Concat over axis 1), sums them, and gates
// each by a softmax over the paths of the Reshape of one conv's values to
// [N, paths, C, 1, 1]: held as splits too, the softmax over two alike.
#include <algorithm>

#include "interop/onnx_importer.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

// The splits of a view of channels in groups (a Reshape to [N, g, C/g, H, W]), made once, or of a stack or
// products.
std::vector<int> Importer::splits_of(const onnx::NodeProto& n, int i) {
  const std::string& name = n.input(i);
  if (const auto products = splits_.find(name); products != splits_.end()) return products->second;
  const auto view = grouped_views_.find(name);
  if (view == grouped_views_.end() || view->second.step != GroupedStep::Split)
    refuse(n, "reads '" + name + "', which is not a view of the channels in splits ([N, r, C, H, W])");
  const int x = view->second.node, splits = view->second.groups, channels = shape_of(x).c / splits;
  std::vector<int> slices;
  for (int k = 0; k < splits; ++k) slices.push_back(builder_.channel_slice(x, k * channels, channels));
  return splits_[name] = slices;  // once: a view read by the sum and by the gate Mul shares its slices
}

bool Importer::is_split_view(const std::string& name) const {
  const auto view = grouped_views_.find(name);
  return splits_.count(name) || (view != grouped_views_.end() && view->second.step == GroupedStep::Split);
}

// Splits times splits (x * attention.reshape(N, r, C, 1, 1)): the products of each pair.
void Importer::split_product(const onnx::NodeProto& n) {
  const std::vector<int> a = splits_of(n, 0), b = splits_of(n, 1);
  if (a.size() != b.size())
    refuse(n, "multiplies " + std::to_string(a.size()) + " splits by " + std::to_string(b.size()));
  std::vector<int> products;
  for (size_t k = 0; k < a.size(); ++k) {
    const bool b_smaller = shape_of(b[k]).numel() < shape_of(a[k]).numel();
    products.push_back(b_smaller ? builder_.mul(a[k], b[k]) : builder_.mul(b[k], a[k]));
  }
  splits_[n.output(0)] = products;
}

// A ReduceSum over the splits (axis 1, not kept): their Adds.
void Importer::reduce_sum(const onnx::NodeProto& n) {
  if (!is_split_view(n.input(0))) {  // over an image's height and width, kept (SimAM's): a global pool times H W
    const int x = activation(n, 0);
    const ActShape s = shape_of(x);
    if (is_flat(x) || is_one_row(n, 0) || channels_last_.count(n.input(0)) ||
        axes_of(n, 4) != std::vector<int64_t>{2, 3} || int_attribute(n, "keepdims", 1) == 0)
      refuse(n, "a sum other than over an image's height and width (axes 2, 3, kept) or over the splits of a [N, r, "
                "C, H, W] view (axis 1, not kept: ResNeSt's)");
    define(n, builder_.global_avg_pool(x));
    const auto channels = static_cast<size_t>(s.c);
    pending_affines_[n.output(0)] = {std::vector<float>(channels, static_cast<float>(s.h) * static_cast<float>(s.w)),
                                     std::vector<float>(channels, 0.0f), &n};
    return;
  }
  const std::optional<std::vector<int64_t>> axes = axes_of(n, 5);
  if (!is_split_view(n.input(0)) || axes != std::vector<int64_t>{1} || int_attribute(n, "keepdims", 1) != 0)
    refuse(n, "a sum other than over the splits of a [N, r, C, H, W] view (axis 1, not kept: ResNeSt's)");
  const std::vector<int> splits = splits_of(n, 0);
  int total = splits[0];
  for (size_t k = 1; k < splits.size(); ++k) total = builder_.add(total, splits[k]);
  define(n, total);
}

// torch.stack of images over axis 1: an Unsqueeze of axis 1 (one split), a Concat over axis 1 of splits.
bool Importer::stack_step(const onnx::NodeProto& n) {
  if (n.op_type() == "Unsqueeze") {
    const auto in = values_.find(n.input(0));
    if (in == values_.end() || is_flat(in->second) || is_one_row(n, 0) || channels_last_.count(n.input(0)) ||
        axes_of(n, 5) != std::vector<int64_t>{1})
      return false;
    splits_[n.output(0)] = {activation(n, 0)};
    return true;
  }
  if (n.op_type() != "Concat" || !std::any_of(n.input().begin(), n.input().end(),
                                              [&](const std::string& in) { return is_split_view(in); }))
    return false;
  const int64_t axis = int_attribute(n, "axis", 0);
  if (axis != 1 && axis != -4) refuse(n, "a concat of [N, r, C, H, W] splits other than over axis 1 (torch.stack's)");
  std::vector<int> splits;
  for (int i = 0; i < n.input_size(); ++i) {
    const std::vector<int> more = splits_of(n, i);
    splits.insert(splits.end(), more.begin(), more.end());
  }
  splits_[n.output(0)] = splits;
  return true;
}

// A Softmax over axis 1 of two splits (SKNet's paths): sigmoid(a - b), sigmoid(b - a) (two_split_softmax).
bool Importer::split_softmax(const onnx::NodeProto& n) {
  if (!is_split_view(n.input(0))) return false;
  const int64_t axis = int_attribute(n, "axis", -1);
  const std::vector<int> splits = splits_of(n, 0);
  if ((axis != 1 && axis != -4) || summary_.opset < 13)
    refuse(n, "a softmax of [N, r, C, H, W] splits other than over them (axis 1, from opset 13)");
  if (splits.size() != 2)
    refuse(n, "a softmax over " + std::to_string(splits.size()) + " splits: octet takes 2 (ResNeSt's, SKNet's)");
  const auto view = grouped_views_.find(n.input(0));
  const int both = view != grouped_views_.end() ? view->second.node : builder_.concat(splits);
  grouped_views_[n.output(0)] = {two_split_softmax(n, RadixView{both, 1, 2, true}), 2, GroupedStep::Split};
  return true;
}

// A Reshape of r x C attention values ([N, rC, 1, 1]) to [N, cardinality, r,
// -1] (RadixSoftmax's first step): whether n is one (then recorded).
bool Importer::radix_view(const onnx::NodeProto& n, const std::vector<int64_t>& dims) {
  const auto in = values_.find(n.input(0));
  if (dims.size() != 4 || in == values_.end() || is_flat(in->second)) return false;
  const ActShape s = shape_of(in->second);
  const int64_t cardinality = dims[1], radix = dims[2];
  if (s.h != 1 || s.w != 1 || cardinality < 1 || radix < 2 || s.c % (cardinality * radix) != 0 ||
      (dims[3] != -1 && dims[3] != s.c / (cardinality * radix)))
    return false;
  radix_views_[n.output(0)] = {activation(n, 0), static_cast<int>(cardinality), static_cast<int>(radix), false};
  return true;
}

// RadixSoftmax's Transpose (perm [0, 2, 1, 3]) and Softmax over the splits (axis 1).
bool Importer::radix_softmax_step(const onnx::NodeProto& n) {
  const auto view = radix_views_.find(n.input(0));
  if (view == radix_views_.end()) return false;
  const RadixView v = view->second;
  const bool swaps_middle = ints_attribute(n, "perm", {}) == std::vector<int64_t>{0, 2, 1, 3};
  if (n.op_type() == "Transpose" && !v.transposed && swaps_middle) {
    radix_views_[n.output(0)] = {v.node, v.cardinality, v.radix, true};
    return true;
  }
  const int64_t axis = int_attribute(n, "axis", -1);
  if (n.op_type() != "Softmax" || !v.transposed || (axis != 1 && axis != -3) || summary_.opset < 13)
    refuse(n, "reads attention values viewed as [N, cardinality, r, C/cardinality] other than as RadixSoftmax does "
              "(a Transpose of perm [0, 2, 1, 3], then a Softmax over axis 1, from opset 13: below, a Softmax "
              "normalises every axis from its own on)");
  if (v.radix != 2)
    refuse(n, "a softmax over " + std::to_string(v.radix) + " splits: octet takes 2 (ResNeSt's, SKNet's)");
  define(n, two_split_softmax(n, v));
  return true;
}

// softmax(a, b) over two splits = sigmoid(a - b), sigmoid(b - a): each difference a 1x1 conv of weights 1 and
// -1 (exact in int8) in the cardinal groups, then their sigmoids, [split][group][channel] as RadixSoftmax lays
// them out.
int Importer::two_split_softmax(const onnx::NodeProto& n, const RadixView& v) {
  const int64_t channels = shape_of(v.node).c, per_group = channels / v.cardinality / 2;
  const int out = static_cast<int>(channels / 2);
  std::vector<int> gates;
  for (const float sign : {1.0f, -1.0f}) {
    const std::string name = layer_name(n) + (sign > 0 ? ".first_less_second" : ".second_less_first");
    const int d = builder_.conv(name, v.node, out, 1, 1, 0, true, v.cardinality);
    FloatTensor w(Shape{out, 2 * per_group, 1, 1}, 0.0f);
    for (int64_t o = 0; o < out; ++o) {
      const int64_t j = o % per_group;  // the channel within its group; its inputs there: j, per_group + j
      w.data[o * 2 * per_group + j] = sign;
      w.data[o * 2 * per_group + per_group + j] = -sign;
    }
    params_[name + ".weight"] = std::move(w);
    params_[name + ".bias"] = FloatTensor(Shape{out}, 0.0f);
    gates.push_back(builder_.activation(d, "sigmoid"));
  }
  return builder_.concat(gates);
}

}  // namespace octet::onnx_import
