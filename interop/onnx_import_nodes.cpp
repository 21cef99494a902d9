#include "interop/onnx_importer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"
#include "graph/ops/local_response_norm.h"
#include "graph/ops/pool2d.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

// A conv's or pool's pads: its own, or those of auto_pad SAME_UPPER /
// SAME_LOWER, with which the output is ceil(input / stride) and the odd one of
// the padding goes at the end (UPPER) or at the start (LOWER).
Importer::Pads Importer::window_pads(const onnx::NodeProto& n, int64_t extent_h, int64_t extent_w,
                                     int64_t stride_h, int64_t stride_w) const {
  const std::string auto_pad = string_attribute(n, "auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") return spatial_pads(n);
  if (auto_pad == "VALID") return {};
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") refuse(n, "auto_pad " + auto_pad);
  if (pending_pads_.count(n.input(0))) refuse(n, "auto_pad " + auto_pad + " after a Pad: give explicit pads");
  const ActShape in = shape_of(value_node(n, 0));
  Pads pads;
  const auto split = [&](int64_t size, int64_t extent, int64_t stride, int64_t* begin, int64_t* end) {
    const int64_t total = std::max<int64_t>(((size + stride - 1) / stride - 1) * stride + extent - size, 0);
    *begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    *end = total - *begin;
  };
  split(in.h, extent_h, stride_h, &pads[0], &pads[2]);
  split(in.w, extent_w, stride_w, &pads[1], &pads[3]);
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p > 64; }))
    refuse(n, "auto_pad " + auto_pad + " needs pads " + ints_string({pads[0], pads[1], pads[2], pads[3]}) +
                  ": octet pads each side by 0 to 64");
  return pads;
}

void Importer::conv(const onnx::NodeProto& n) {
  FloatTensor w = constant(n, 1);
  if (is_one_row(n, 0) && w.shape.size() == 3) w.shape.insert(w.shape.begin() + 2, 1);  // [O, I, K]: a 1 x K kernel
  if (w.shape.size() != 4) refuse(n, "a weight of shape " + shape_string(w.shape) + ": octet imports 2-D convolutions");
  const int64_t out = w.dim(0), kernel = w.dim(2), kernel_w = w.dim(3);
  const auto strides = window_ints(n, "strides", {1, 1}, true);
  const auto dilations = window_ints(n, "dilations", {1, 1}, true);
  const int64_t groups = int_attribute(n, "group", 1);
  if (kernel < 1 || kernel_w < 1 || kernel > 64 || kernel_w > 64)
    refuse(n, "a weight of shape " + shape_string(w.shape) + ": octet's kernels are 1 to 64 pixels high and wide");
  if (strides.size() != 2 || strides[0] != strides[1] || strides[0] < 1 || strides[0] > 64)
    refuse(n, "strides " + ints_string(strides) + ": octet's are alike in both directions");
  if (dilations.size() != 2 || dilations[0] != dilations[1] || dilations[0] < 1 || dilations[0] > 64)
    refuse(n, "dilations " + ints_string(dilations) + ": octet's are alike in both directions");
  const Pads pads =
      window_pads(n, (kernel - 1) * dilations[0] + 1, (kernel_w - 1) * dilations[0] + 1, strides[0], strides[0]);
  if (groups < 1 || groups > out || out % groups != 0) refuse(n, "group " + std::to_string(groups));
  FloatTensor bias(Shape{out}, 0.0f);
  if (has_input(n, 2)) bias = constant(n, 2);
  if (bias.shape != Shape{out}) refuse(n, "a bias of shape " + shape_string(bias.shape));
  // A pending affine (LayerNorm's, before ConvNeXt's downsampling) folds into an unpadded dense conv's weights.
  const bool fold = pending_affines_.count(n.input(0)) && groups == 1 && pads == Pads{};
  const PaddedInput in = fold ? PaddedInput{value_node(n, 0)} : padded_input(n, pads, 64, 64, false);
  const std::string name = layer_name(n);
  define(n, builder_.conv_rect(name, in.node, static_cast<int>(out), static_cast<int>(kernel),
                               static_cast<int>(kernel_w), static_cast<int>(strides[0]), in.padding_h, true,
                               static_cast<int>(groups), static_cast<int>(dilations[0])));
  params_[name + ".weight"] = std::move(w);
  params_[name + ".bias"] = std::move(bias);
  if (fold) fold_pending_into(n.input(0), name);
}

// y = gamma (x - mean) / sqrt(var + eps) + beta, folded into the conv before it
// where nothing else reads that conv; else (DenseNet's norm before each ReLU
// and conv) a depthwise 1x1 conv of its own. Of rows: batch_norm_of_rows.
void Importer::batch_norm(const onnx::NodeProto& n) {
  if (int_attribute(n, "training_mode", 0) != 0) refuse(n, "training_mode 1: export the model in eval() mode");
  if (is_flat(value_node(n, 0))) return batch_norm_of_rows(n);
  int x = activation(n, 0);
  if (fold_batch_norm_into_phases(n, x)) return;
  const bool own_conv = node_at(x).op != Op::Conv2d || uses_[n.input(0)] != 1;
  if (own_conv) {
    const int channels = shape_of(x).c;
    const std::string name = layer_name(n);
    x = builder_.conv(name, x, channels, 1, 1, 0, true, channels);
    params_[name + ".weight"] = FloatTensor({channels, 1, 1, 1}, 1.0f);
    params_[name + ".bias"] = FloatTensor({channels}, 0.0f);
  }
  FloatTensor& w = params_[node_at(x).name + ".weight"];
  FloatTensor& b = params_[node_at(x).name + ".bias"];
  const int64_t out = w.dim(0), per_channel = w.numel() / out;
  const BatchNormAffine a = batch_norm_affine(n, out);
  for (int64_t c = 0; c < out; ++c) {
    for (int64_t k = 0; k < per_channel; ++k)
      w.data[c * per_channel + k] = static_cast<float>(w.data[c * per_channel + k] * a.scale[c]);
    b.data[c] = static_cast<float>(b.data[c] * a.scale[c] + a.shift[c]);
  }
  if (!own_conv) ++summary_.folded_batch_norms;
  define(n, x);
}

// scale = gamma / sqrt(var + eps) and shift = beta - mean * scale, per channel.
Importer::BatchNormAffine Importer::batch_norm_affine(const onnx::NodeProto& n, int64_t channels) const {
  const FloatTensor gamma = constant(n, 1), beta = constant(n, 2), mean = constant(n, 3), var = constant(n, 4);
  const double eps = float_attribute(n, "epsilon", 1e-5f);
  for (const FloatTensor* t : {&gamma, &beta, &mean, &var})
    if (t->shape != Shape{channels}) refuse(n, "a parameter of shape " + shape_string(t->shape) + " for " +
                                                   std::to_string(channels) + " channels");
  BatchNormAffine a;
  for (int64_t c = 0; c < channels; ++c) {
    if (!(var.data[c] + eps > 0)) refuse(n, "channel " + std::to_string(c) + " has a variance + epsilon <= 0");
    a.scale.push_back(gamma.data[c] / std::sqrt(double{var.data[c]} + eps));
    a.shift.push_back(beta.data[c] - mean.data[c] * a.scale.back());
  }
  return a;
}

// BatchNorm1d of rows: a constant affine per feature, folded into the linear
// layer computing its input where nothing else reads that (ArcFace's
// embedding, iresnet's `features`), else into the linear layers reading it
// (fastai's head: pooled features, BatchNorm1d, Dropout, Linear); octet has no
// per-feature scale of rows to keep it apart, so another reader is refused.
void Importer::batch_norm_of_rows(const onnx::NodeProto& n) {
  const BatchNormAffine a = batch_norm_affine(n, shape_of(value_node(n, 0)).c);
  constant_affine(n, 0, std::vector<float>(a.scale.begin(), a.scale.end()),
                  std::vector<float>(a.shift.begin(), a.shift.end()));
  ++summary_.folded_batch_norms;
}

// Before opset 10 torch wrote a ceil-mode max pool as more padding at the
// bottom and right than at the top and left (alike there), as tf2onnx writes
// TensorFlow's SAME pools: where that gives ceil_mode's output size, it is
// ceil_mode, padding never being a max pool's maximum nor counted by an
// average pool of count_include_pad 0.
bool Importer::is_ceil_mode_padding(const onnx::NodeProto& n, const Pads& pads, PoolAxis rows,
                                    PoolAxis columns) const {
  rows.padding = static_cast<int>(pads[0]), columns.padding = static_cast<int>(pads[1]);
  if (pads[2] < pads[0] || pads[3] < pads[1] || 2 * pads[0] > rows.kernel || 2 * pads[1] > columns.kernel ||
      pending_pads_.count(n.input(0)))
    return false;
  const ActShape in = shape_of(value_node(n, 0));
  const auto agree = [](int64_t size, int64_t end, const PoolAxis& a) {
    const int64_t padded = size + a.padding + end;
    return padded >= a.kernel && (padded - a.kernel) / a.stride + 1 == ops::pool_positions(size, a, true);
  };
  return agree(in.h, pads[2], rows) && agree(in.w, pads[3], columns);
}

void Importer::pool(const onnx::NodeProto& n) {
  const auto kernel = window_ints(n, "kernel_shape", {}, false);
  const auto strides = window_ints(n, "strides", {1, 1}, false);
  const auto one_to_64 = [](const std::vector<int64_t>& v) {
    return v.size() == 2 && std::all_of(v.begin(), v.end(), [](int64_t k) { return k >= 1 && k <= 64; });
  };
  if (!one_to_64(kernel))
    refuse(n, "kernel_shape " + ints_string(kernel) + ": octet's windows are 1 to 64 high and wide");
  if (!one_to_64(strides)) refuse(n, "strides " + ints_string(strides) + ": octet's are 1 to 64 down and across");
  if (window_ints(n, "dilations", {1, 1}, false) != std::vector<int64_t>{1, 1}) refuse(n, "dilated pooling");
  if (n.op_type() == "MaxPool" && n.output_size() > 1 && uses_[n.output(1)] > 0) refuse(n, "its indices are read");
  PoolAxis rows{static_cast<int>(kernel[0]), static_cast<int>(strides[0]), 0};
  PoolAxis columns{static_cast<int>(kernel[1]), static_cast<int>(strides[1]), 0};
  const bool max = n.op_type() == "MaxPool", ceil_mode = int_attribute(n, "ceil_mode", 0) != 0;
  if (ceil_mode && string_attribute(n, "auto_pad", "NOTSET") != "NOTSET") refuse(n, "auto_pad with ceil_mode");
  const Pads pads = window_pads(n, rows.kernel, columns.kernel, rows.stride, columns.stride);
  const bool alike = pads[0] == pads[2] && pads[1] == pads[3];  // both ends of each direction
  const bool counts_padding = int_attribute(n, "count_include_pad", 0) != 0;
  const auto pool_of = [&](const PaddedInput& in, bool ceil, bool exclude_padding) {
    rows.padding = in.padding_h, columns.padding = in.padding_w;
    return max ? builder_.max_pool(in.node, rows, columns, ceil)
               : builder_.avg_pool(in.node, rows, columns, ceil, exclude_padding);
  };
  if (!ceil_mode && !alike && !counts_padding && is_ceil_mode_padding(n, pads, rows, columns)) {
    const Pads shared{pads[0], pads[1], pads[0], pads[1]};
    return define(n, pool_of(padded_input(n, shared, rows.kernel / 2, columns.kernel / 2, true), true, true));
  }
  // Padding beyond what both ends of a direction share, or beyond half the
  // kernel, becomes zeros of a Pad2d node: right where they count as values,
  // as a max pool's padding and count_include_pad 0's do not, nor ceil_mode's
  // last window.
  if (!alike || 2 * pads[0] > rows.kernel || 2 * pads[1] > columns.kernel) {
    const std::string where = "pads " + ints_string({pads[0], pads[1], pads[2], pads[3]});
    const std::string rule = ": octet pads both ends of each direction alike, at most half the kernel";
    if (max) refuse(n, where + " of a max pool" + rule);
    if (!counts_padding) refuse(n, where + " with count_include_pad 0" + rule);
    if (ceil_mode) refuse(n, where + " with ceil_mode" + rule);
  }
  if (pending_pads_.count(n.input(0)) && pads != Pads{} && !counts_padding)
    refuse(n, "pads of its own, not counted (count_include_pad 0), after a Pad");
  const PaddedInput in = padded_input(n, pads, rows.kernel / 2, columns.kernel / 2, true);
  // A Pad's zeros are values: every window counts them.
  define(n, pool_of(in, ceil_mode, !in.after_pad && !counts_padding));
}

// Gemm (y = x W^T + b as PyTorch's Linear exports it, or x W + b) and MatMul.
void Importer::linear(const onnx::NodeProto& n) {
  const bool fold = pending_affines_.count(n.input(0)) > 0;  // a BatchNorm1d before it (fastai's head)
  const int x = fold ? value_node(n, 0) : activation(n, 0);
  FloatTensor b_matrix = constant(n, 1);
  if (b_matrix.shape.size() != 2) refuse(n, "a weight of shape " + shape_string(b_matrix.shape));
  const bool gemm = n.op_type() == "Gemm";
  if (gemm && (int_attribute(n, "transA", 0) != 0 || float_attribute(n, "alpha", 1) != 1.0f ||
               float_attribute(n, "beta", 1) != 1.0f))
    refuse(n, "transA, alpha or beta other than 0, 1, 1");
  const bool transposed = gemm && int_attribute(n, "transB", 0) != 0;  // already out x in
  const int64_t out = transposed ? b_matrix.dim(0) : b_matrix.dim(1), in = transposed ? b_matrix.dim(1) : b_matrix.dim(0);
  FloatTensor w(Shape{out, in});
  for (int64_t o = 0; o < out; ++o)
    for (int64_t k = 0; k < in; ++k) w.data[o * in + k] = transposed ? b_matrix.data[o * in + k] : b_matrix.data[k * out + o];
  FloatTensor bias(Shape{out}, 0.0f);
  if (gemm && has_input(n, 2)) {
    const FloatTensor c = constant(n, 2);
    if (c.numel() != out) refuse(n, "a bias of shape " + shape_string(c.shape) + " for " + std::to_string(out) + " outputs");
    bias.data = c.data;
  }
  const std::string name = layer_name(n);
  define(n, builder_.linear(name, x, static_cast<int>(out), true));
  params_[name + ".weight"] = std::move(w);
  params_[name + ".bias"] = std::move(bias);
  if (fold) fold_pending_into(n.input(0), name);
  columns_in_chw_order(n, params_[name + ".weight"]);
}

// Two computed values: a residual add. A value and a constant of one value or
// one per channel: a constant affine (the bias of the MatMul before it).
void Importer::add(const onnx::NodeProto& n) {
  const bool first_constant = !values_.count(n.input(0)), second_constant = !values_.count(n.input(1));
  if (!first_constant && !second_constant) {
    if (channels_last_.count(n.input(0)) != channels_last_.count(n.input(1)))
      refuse(n, "adds a channels-last value to a channels-first one");
    int a = activation(n, 0), b = activation(n, 1);
    spread_over_image(n, a, b);
    if (!(shape_of(a) == shape_of(b)))
      refuse(n, "a sum of " + to_string(shape_of(a)) + " and " + to_string(shape_of(b)) +
                    " values: octet adds computed values of one shape");
    define(n, builder_.add(a, b));
    return;
  }
  const int i = first_constant ? 1 : 0;
  const std::vector<float> shift = constant_per_channel(n, i, 1 - i);
  constant_affine(n, i, std::vector<float>(shift.size(), 1.0f), shift);
}

// Sum of computed values (Caffe2's residual adds): adds, one input after another.
void Importer::sum(const onnx::NodeProto& n) {
  int total = activation(n, 0);
  for (int i = 1; i < n.input_size(); ++i) {
    if (channels_last_.count(n.input(0)) != channels_last_.count(n.input(i)))
      refuse(n, "adds a channels-last value to a channels-first one");
    total = builder_.add(total, activation(n, i));
  }
  define(n, total);
}

// A global max pool of x: the max pool whose one window is the whole image.
int Importer::global_max_pool_of(int x) {
  const ActShape in = shape_of(x);
  return builder_.max_pool(x, PoolAxis{in.h, 1, 0}, PoolAxis{in.w, 1, 0}, false);
}

// LRN over `size` channels (Caffe's AlexNet and GoogLeNet in the ONNX Model Zoo).
void Importer::local_response_norm(const onnx::NodeProto& n) {
  const int64_t size = int_attribute(n, "size", 0);
  const float alpha = float_attribute(n, "alpha", 1e-4f), beta = float_attribute(n, "beta", 0.75f);
  const float bias = float_attribute(n, "bias", 1.0f);
  if (size < 1 || size > ops::kMostLocalResponseNormSize)
    refuse(n, "size " + std::to_string(size) + ": octet's windows hold 1 to " +
                  std::to_string(ops::kMostLocalResponseNormSize) + " channels");
  if (!(std::isfinite(alpha) && alpha >= 0 && std::isfinite(beta) && beta >= 0 && beta <= 16 && std::isfinite(bias) &&
        bias > 0))
    refuse(n, "alpha " + std::to_string(alpha) + ", beta " + std::to_string(beta) + ", bias " + std::to_string(bias) +
                  ": octet takes alpha >= 0, beta in [0, 16], bias > 0");
  define(n, builder_.local_response_norm(activation(n, 0), static_cast<int>(size), alpha, beta, bias));
}

// x - c or c - x, c one value or one per channel (a normalisation inside the
// model, (x - mean) / std): the constant affine it is.
void Importer::subtract(const onnx::NodeProto& n) {
  const bool first_constant = !values_.count(n.input(0)), second_constant = !values_.count(n.input(1));
  if (!first_constant && !second_constant) return difference(n);
  if (first_constant && second_constant) refuse(n, "a difference of two constants");
  const int i = first_constant ? 1 : 0;
  std::vector<float> shift = constant_per_channel(n, i, 1 - i);
  if (second_constant)
    for (float& v : shift) v = -v;
  constant_affine(n, i, std::vector<float>(shift.size(), second_constant ? 1.0f : -1.0f), shift);
}

// a - b of computed values (PoolFormer's pool(x) - x): a + (-b), the sign
// folded into the conv, linear layer or group norm computing b where nothing
// else reads it, else a depthwise 1x1 conv of weight -1 (exact in int8).
void Importer::difference(const onnx::NodeProto& n) {
  if (channels_last_.count(n.input(0)) != channels_last_.count(n.input(1)))
    refuse(n, "subtracts a channels-last value from a channels-first one, or the other way");
  const int a = activation(n, 0);
  int b = activation(n, 1);
  const bool spread = per_channel_of(a, b);  // SimAM's x - x.mean((2, 3)): negated, then over the pixels
  if (!spread && !(shape_of(a) == shape_of(b)))  // x - x.mean(1) centres, which octet has no operator for
    refuse(n, "a difference of " + to_string(shape_of(a)) + " and " + to_string(shape_of(b)) +
                  " values: octet subtracts computed values of one shape, or a value per channel from an image");
  const auto channels = static_cast<size_t>(shape_of(b).c);
  const std::vector<float> negate(channels, -1.0f), zero(channels, 0.0f);
  if (!fold_into_producer(b, negate, zero)) {
    if (is_flat(b)) refuse(n, "a difference of rows that no linear layer computing the second alone can negate");
    b = affine_conv(layer_name(n), b, negate, zero);
  }
  define(n, builder_.add(a, spread ? spread_value(n, a, b) : b));
}

// Opset 18's Pad of some axes (input 3): its pads as those of all four.
std::vector<int64_t> Importer::pads_over_all_axes(const onnx::NodeProto& n, const std::vector<int64_t>& given) const {
  const ShapeValue* axes = shape_value(n, 3);
  if (!axes) refuse(n, "axes that are not a constant");
  const size_t count = axes->values.size();
  if (given.size() != 2 * count)
    refuse(n, std::to_string(given.size()) + " pads for " + std::to_string(count) + " axes (ONNX says twice as many)");
  std::vector<int64_t> all(8, 0);
  std::vector<bool> seen(4, false);
  for (size_t k = 0; k < count; ++k) {
    int64_t a = axes->values[k];
    if (a < -4 || a > 3 || seen[static_cast<size_t>(a < 0 ? a + 4 : a)])
      refuse(n, "axes " + shape_value_string(*axes) + ": each of a 4-D value's at most once");
    a = a < 0 ? a + 4 : a;
    seen[static_cast<size_t>(a)] = true;
    all[static_cast<size_t>(a)] = given[k];
    all[static_cast<size_t>(a) + 4] = given[k + count];
  }
  return all;
}

// torch writes a Pad before an average pool that counts its padding, and
// some exporters one of zeros before a conv: equal padding of height and
// width, in zeros, becomes the padding of the conv or average pools that read
// it (a pool pad counted, as Pad makes it); none at all, nothing. Negative
// pads remove rows and columns (a crop).
void Importer::pad(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const ShapeValue* pads = shape_value(n, 1);
  if (!pads) refuse(n, "pads that are not a constant");
  std::vector<int64_t> p = pads->values;
  if (is_one_row(n, 0)) {  // N, C, L: the length's ends are octet's left and right
    if (has_input(n, 3)) refuse(n, "pads of given axes of a 1-D value: give all of them");
    if (p.size() == 6) p = {p[0], p[1], 0, p[2], p[3], p[4], 0, p[5]};
  }
  if (has_input(n, 3)) p = pads_over_all_axes(n, p);
  if (std::all_of(p.begin(), p.end(), [](int64_t v) { return v == 0; })) {
    summary_.dropped.push_back(n.op_type());
    return define(n, x);
  }
  const bool zeros = string_attribute(n, "mode", "constant") == "constant" && (!has_input(n, 2) || scalar(n, 2) == 0);
  const ActShape in = shape_of(x);
  const bool spatial = p.size() == 8 && p[0] == 0 && p[1] == 0 && p[4] == 0 && p[5] == 0 &&
                       std::all_of(p.begin(), p.end(), [](int64_t v) { return v <= 64; }) &&
                       in.h + p[2] + p[6] >= 1 && in.w + p[3] + p[7] >= 1 && -std::min(p[2], p[6]) < in.h &&
                       -std::min(p[3], p[7]) < in.w;
  if (!zeros || !spatial || is_flat(x))
    refuse(n, "pads " + shape_value_string(*pads) + " of a " + to_string(in) +
                  " value: octet pads height and width with up to 64 zeros on each side, or removes part of them");
  const Pads sides = {p[2], p[3], p[6], p[7]};
  bool readers_pad = std::all_of(sides.begin(), sides.end(), [](int64_t v) { return v >= 0; });
  for (const onnx::NodeProto* r : readers_[n.output(0)])
    readers_pad = readers_pad && (r->op_type() == "AveragePool" || r->op_type() == "Conv") && r->input(0) == n.output(0);
  // Convs and average pools take it up into their own padding (padded_input()).
  if (readers_pad) {
    summary_.dropped.push_back(n.op_type());
    pending_pads_[n.output(0)] = {x, sides};
    return;
  }
  define(n, builder_.pad(x, static_cast<int>(sides[0]), static_cast<int>(sides[1]), static_cast<int>(sides[2]),
                         static_cast<int>(sides[3])));
}

void Importer::clip(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  // An absent bound is none (the float range's end).
  const float lo = has_input(n, 1) ? scalar(n, 1) : std::numeric_limits<float>::lowest();
  const float hi = has_input(n, 2) ? scalar(n, 2) : std::numeric_limits<float>::max();
  if (lo > hi) refuse(n, "min " + std::to_string(lo) + " above max " + std::to_string(hi));
  define(n, builder_.activation(x, "clip", lo, hi));
}

void Importer::gate(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const bool hard = n.op_type() == "HardSigmoid";
  const float alpha = hard ? float_attribute(n, "alpha", 0.2f) : 0.0f, beta = hard ? float_attribute(n, "beta", 0.5f) : 0.0f;
  const auto& readers = readers_[n.output(0)];
  const bool swish_form = !hard || (std::abs(alpha - 1.0f / 6.0f) < 1e-6f && beta == 0.5f);
  if (readers.size() == 1 && readers[0]->op_type() == "Mul" && readers[0]->input_size() == 2 && swish_form) {
    const onnx::NodeProto& m = *readers[0];
    const std::string& other = m.input(0) == n.output(0) ? m.input(1) : m.input(0);
    if (other == n.input(0)) {
      if (!hard && silu_output(n, m, x)) {  // the conv returned, its SiLU applied in float
        silu_outputs_.insert(m.output(0));
        fused_nodes_[&m] = x;
        return define(n, x);
      }
      const int y = builder_.activation(x, hard ? "hard_swish" : "silu");
      fused_nodes_[&m] = y;
      return define(n, y);
    }
  }
  define(n, builder_.activation(x, hard ? "hard_sigmoid" : "sigmoid", alpha, beta));
}

// Softplus; with the Tanh that alone reads it and the Mul of that by its own
// input, as torch exports Mish below opset 18, one Mish.
void Importer::softplus(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const onnx::NodeProto* squash = sole_reader_of(n.output(0), "Tanh");
  const onnx::NodeProto* product = squash ? sole_reader_of(squash->output(0), "Mul") : nullptr;
  if (product && (product->input(0) == squash->output(0) ? product->input(1) : product->input(0)) == n.input(0)) {
    const int y = builder_.activation(x, "mish");
    fused_nodes_[squash] = fused_nodes_[product] = y;
    return define(n, y);
  }
  define(n, builder_.activation(x, "softplus"));
}

// PRelu: one slope for all channels (nn.PReLU()) is a leaky ReLU, which
// runs faster; a slope per channel is octet's PRelu, "<layer>.weight" its slopes.
void Importer::prelu(const onnx::NodeProto& n) {
  const std::vector<float> slope = constant_per_channel(n, 0, 1);
  const int x = activation(n, 0);
  if (std::all_of(slope.begin(), slope.end(), [&](float s) { return s == slope[0]; }))
    return define(n, builder_.activation(x, "leaky_relu", slope[0]));
  const std::string name = layer_name(n);
  params_[name + ".weight"] = FloatTensor({static_cast<int64_t>(slope.size())}, slope);
  define(n, builder_.prelu(name, x));
}

void Importer::mul(const onnx::NodeProto& n) {
  if (!values_.count(n.input(0)) || !values_.count(n.input(1))) {
    const int i = values_.count(n.input(0)) ? 0 : 1;
    const std::vector<float> scale = constant_per_channel(n, i, 1 - i);
    return constant_affine(n, i, scale, std::vector<float>(scale.size(), 0.0f));
  }
  if (channels_last_.count(n.input(0)) != channels_last_.count(n.input(1)))
    refuse(n, "multiplies a channels-last value by a channels-first one");
  int a = activation(n, 0), b = activation(n, 1);
  if (spread_for_product(n, a, b)) return;
  const ActShape sa = shape_of(a), sb = shape_of(b);
  if (sa.numel() < sb.numel()) std::swap(a, b);
  define(n, builder_.mul(a, broadcast_gate(n, a, b)));
}

// A reduction's axes (axes_of); none: every axis, unless noop_with_empty_axes.
std::vector<int64_t> Importer::reduce_axes(const onnx::NodeProto& n) {
  const std::optional<std::vector<int64_t>> axes = axes_of(n, is_one_row(n, 0) ? 3 : 4);
  if (!axes) refuse(n, "axes that are not a constant");
  if (axes->empty() && int_attribute(n, "noop_with_empty_axes", 0) != 0) refuse(n, "no axes to reduce (a no-op)");
  return *axes;
}

// A ReduceMean or ReduceMax over height and width (`image_axes`: 2, 3, or 1, 2
// on a channels-last value, as Keras's global poolings come from tf2onnx; a
// 1-D value's length, 2): a global average or max pool. Over the channels
// of a channels-first value (axis 1, kept: CBAM's spatial attention; or
// dropped and restored by the Unsqueeze that alone reads it, as CBAM's
// original ChannelPool writes torch.max(x, 1)[0].unsqueeze(1)), octet's
// ChannelMean or ChannelMax.
void Importer::reduce_image(const onnx::NodeProto& n, const std::vector<int64_t>& image_axes) {
  const bool max = n.op_type() == "ReduceMax";
  const std::string what = std::string("a ") + (max ? "maximum" : "mean");
  const int x = activation(n, 0);
  const std::vector<int64_t> axes = is_flat(x) ? std::vector<int64_t>{} : reduce_axes(n);
  const bool channels_first = image_axes != std::vector<int64_t>{1, 2};
  if (channels_first && axes == std::vector<int64_t>{1}) {
    const auto reduced = [&] { return max ? builder_.channel_max(x) : builder_.channel_mean(x); };
    if (int_attribute(n, "keepdims", 1) != 0) return define(n, reduced());
    const onnx::NodeProto* unsqueeze = sole_reader_of(n.output(0), "Unsqueeze");
    if (!unsqueeze || unsqueeze->input(0) != n.output(0) ||
        axes_of(*unsqueeze, is_one_row(n, 0) ? 3 : 4) != std::vector<int64_t>{1})
      refuse(n, what + " over the channels without keepdims, its axis not restored by an Unsqueeze of axis 1 that "
                       "alone reads it: octet keeps the axis (1 x H x W)");
    fused_nodes_[unsqueeze] = reduced();
    summary_.dropped.push_back(unsqueeze->op_type());
    if (is_one_row(n, 0)) one_row_.insert(n.output(0));  // so that the Unsqueeze's value is one too
    return;
  }
  const bool one_axis = axes == std::vector<int64_t>{2} || axes == std::vector<int64_t>{3};
  if (channels_first && image_axes.size() == 2 && !is_flat(x) && one_axis && int_attribute(n, "keepdims", 1) != 0) {
    const ActShape s = shape_of(x);  // x.mean(3, keepdim=True): a pool of windows of a whole row (or column)
    const PoolAxis rows{axes[0] == 2 ? s.h : 1, 1, 0}, columns{axes[0] == 3 ? s.w : 1, 1, 0};
    return define(n, max ? builder_.max_pool(x, rows, columns, false)
                         : builder_.avg_pool(x, rows, columns, false, false));
  }
  if (is_flat(x) || axes != image_axes)
    refuse(n, what + " over axes other than " +
                  (image_axes.size() == 1 ? "the length (2)"
                                          : "height and width (" + std::to_string(image_axes[0]) + ", " +
                                                std::to_string(image_axes[1]) + ")") +
                  ", or the channels (1)");
  const int pooled = max ? global_max_pool_of(x) : builder_.global_avg_pool(x);
  define(n, int_attribute(n, "keepdims", 1) != 0 ? pooled : builder_.flatten(pooled));
}

}  // namespace octet::onnx_import
