// The ONNX importer's channels-last values and constant affines. ConvNeXt as
// torch exports it computes its blocks on [N, H, W, C] values: a Transpose
// of perm [0, 2, 3, 1], LayerNorm over the last axis (ReduceMean, Sub, Pow,
// ReduceMean, Add, Sqrt, Div; or LayerNormalization from opset 17), its
// Linear layers as MatMul, GELU (Div, Erf, Add, Mul, Mul), and a Transpose
// back. octet's values are NHWC already, so a transpose is only a change of
// view; a MatMul over the channels is a 1x1 conv. A constant x * scale +
// shift per channel (LayerNorm's affine, ConvNeXt's layer scale) is folded
// into a conv or linear layer beside it where that is exact, else made a
// depthwise 1x1 conv where its values are first needed.
#include <algorithm>
#include <cmath>

#include "interop/onnx_importer.h"
#include "interop/onnx_tensors.h"

namespace octet::onnx_import {

namespace {
const std::vector<int64_t> kToChannelsLast = {0, 2, 3, 1}, kToChannelsFirst = {0, 3, 1, 2};
const std::set<std::string> kChannelsLastOps = {
    "Transpose", "ReduceMean", "ReduceMax", "ReduceL2", "MatMul", "Add", "Sub", "Mul", "Div", "Relu", "Clip", "Sigmoid",
    "HardSigmoid", "HardSwish", "LeakyRelu", "Gelu", "Swish", "Tanh", "Elu", "Selu", "Celu", "Softplus", "Mish",
    "LayerNormalization", "Identity", "Dropout", "Squeeze", "Cast", "Reshape", "Flatten", "Pow", "Sqrt", "Reciprocal"};
}  // namespace

const onnx::NodeProto* Importer::sole_reader_of(const std::string& name, const char* op) const {
  const auto it = readers_.find(name);
  if (it == readers_.end() || it->second.size() != 1 || it->second[0]->op_type() != op ||
      !arity_of(*it->second[0]).fits(*it->second[0]))
    return nullptr;
  for (const auto& out : g_.output())
    if (out.name() == name) return nullptr;
  return it->second[0];
}

const onnx::NodeProto* Importer::writer_of(const std::string& name, const char* op) const {
  const auto it = writers_.find(name);
  return it != writers_.end() && it->second->op_type() == op && it->second->output_size() == 1 ? it->second : nullptr;
}

// A float constant, also one whose Constant node comes later than the node
// looking ahead at it (torch writes each just before its reader).
const FloatTensor* Importer::constant_ahead(const std::string& name) {
  if (values_.count(name)) return nullptr;
  if (const auto it = constants_.find(name); it != constants_.end()) return &it->second;
  if (const auto it = initializers_.find(name); it != initializers_.end() && is_float(*it->second))
    return &(constants_[name] = float_tensor(*it->second, where_ + ": tensor '" + name + "'"));
  const auto made = constant_nodes_.find(name);
  if (made == constant_nodes_.end()) return nullptr;
  const auto* value = attribute(*made->second, "value");
  if (!value || !value->has_t() || !is_float(value->t())) return nullptr;
  return &(constants_[name] = float_tensor(value->t(), where_ + ": node '" + made->second->name() + "' (Constant)"));
}

bool Importer::is_scalar(const onnx::NodeProto& n, int i, double value) {
  const FloatTensor* t = has_input(n, i) ? constant_ahead(n.input(i)) : nullptr;
  return t && t->numel() == 1 && std::abs(t->data[0] - value) <= 1e-6 * std::max(1.0, std::abs(value));
}

bool Importer::reads_channels_last(const onnx::NodeProto& n) const {
  return std::any_of(n.input().begin(), n.input().end(),
                     [&](const std::string& in) { return channels_last_.count(in) > 0; });
}

bool Importer::dispatch_channels_last(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (op == "LayerNormalization") return layer_normalization(n), true;
  if (op == "Div") return divide(n), true;
  if (op == "Gelu") {
    if (string_attribute(n, "approximate", "none") != "none") refuse(n, "GELU's tanh approximation");
    return define(n, builder_.activation(activation(n, 0), "gelu")), true;
  }
  if (!reads_channels_last(n)) return false;
  if (!kChannelsLastOps.count(op))
    refuse(n, "reads a channels-last value ([N, H, W, C], after a Transpose of perm [0, 2, 3, 1]); there octet "
              "takes element-wise operators, MatMul and LayerNorm over the channels, and a Transpose back (perm "
              "[0, 3, 1, 2])");
  if (op == "MatMul") return channel_matmul(n), true;
  if (op == "Reshape" || op == "Flatten") return flatten_channels_last(n), true;
  if (op == "ReduceMax") return reduce_image(n, {1, 2}), true;
  if (op != "ReduceMean") return false;
  if (layer_norm_pattern(n)) return true;
  const std::vector<int64_t> axes = reduce_axes(n);
  if (axes == std::vector<int64_t>{3} && int_attribute(n, "keepdims", 1) != 0)  // GRN's mean of the norms
    return define(n, builder_.channel_mean(activation(n, 0))), true;
  if (axes != std::vector<int64_t>{1, 2})
    refuse(n, "a mean over a channels-last value other than LayerNorm's (ReduceMean, Sub, Pow 2, ReduceMean, Add "
              "epsilon, Sqrt, Div), over height and width (axes 1, 2) or over the channels, kept (axis 3)");
  return reduce_image(n, {1, 2}), true;
}

// A Transpose between the two views of an image: the same octet node.
bool Importer::transpose_view(const onnx::NodeProto& n) {
  const std::string& in = n.input(0);
  if (!values_.count(in) || is_flat(values_.at(in))) return false;
  const bool last = channels_last_.count(in) > 0;
  const std::vector<int64_t> perm = ints_attribute(n, "perm", {});
  if (perm != (last ? kToChannelsFirst : kToChannelsLast)) return false;
  define(n, value_node(n, 0));
  if (const auto p = pending_affines_.find(in); p != pending_affines_.end()) pending_affines_[n.output(0)] = p->second;
  if (!last) channels_last_.insert(n.output(0));
  summary_.dropped.push_back(n.op_type());
  return true;
}

// Keras's Flatten before a Dense layer, as tf2onnx writes it: a Reshape to
// (batch, features) or a Flatten of a channels-last value, rows in H, W, C
// order. octet's flatten gives C, H, W order, which the one Gemm or MatMul
// reading the rows gets by its weight's columns moved (columns_in_chw_order).
void Importer::flatten_channels_last(const onnx::NodeProto& n) {
  const bool gemm = sole_reader_of(n.output(0), "Gemm") || sole_reader_of(n.output(0), "MatMul");
  if (!gemm && arranged_rows(n)) return;
  if (!gemm)
    refuse(n, "a flatten of a channels-last value read by other than one Gemm or MatMul (or returned: a detection "
              "head's rows)");
  const ActShape image = shape_of(value_node(n, 0));
  if (n.op_type() == "Flatten") {
    if (int_attribute(n, "axis", 1) != 1) refuse(n, "axis other than 1");
    define(n, builder_.flatten(activation(n, 0)));
  } else {
    reshape(n);
    const auto made = values_.find(n.output(0));
    if (made == values_.end() || !is_flat(made->second))
      refuse(n, "a reshape of a channels-last value other than to (batch, features)");
  }
  hwc_rows_[n.output(0)] = image;
}

void Importer::columns_in_chw_order(const onnx::NodeProto& n, FloatTensor& w) const {
  const auto rows = hwc_rows_.find(n.input(0));
  if (rows == hwc_rows_.end()) return;
  const ActShape s = rows->second;
  const int64_t out = w.dim(0), in = w.dim(1);
  if (in != s.numel()) refuse(n, "a weight of " + std::to_string(in) + " inputs for " + to_string(s) + " values");
  FloatTensor moved(w.shape);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t y = 0; y < s.h; ++y)
        for (int64_t x = 0; x < s.w; ++x)
          moved.data[o * in + (c * s.h + y) * s.w + x] = w.data[o * in + (y * s.w + x) * s.c + c];
  w = std::move(moved);
}

// A Linear layer on a channels-last value, x W (W: [C, C']): a 1x1 conv.
void Importer::channel_matmul(const onnx::NodeProto& n) {
  const FloatTensor b = constant(n, 1);
  const int x = value_node(n, 0);
  const int64_t C = shape_of(x).c;
  if (b.shape.size() != 2 || b.dim(0) != C)
    refuse(n, "a weight of shape " + shape_string(b.shape) + " for " + std::to_string(C) + " channels");
  const int64_t out = b.dim(1);
  const bool fold = pending_affines_.count(n.input(0)) > 0;
  const std::string name = layer_name(n);
  define(n, builder_.conv(name, fold ? x : activation(n, 0), static_cast<int>(out), 1, 1, 0, true));
  FloatTensor w(Shape{out, C, 1, 1});
  for (int64_t o = 0; o < out; ++o)
    for (int64_t k = 0; k < C; ++k) w.data[o * C + k] = b.data[k * out + o];
  params_[name + ".weight"] = std::move(w);
  params_[name + ".bias"] = FloatTensor(Shape{out}, 0.0f);
  if (fold) fold_pending_into(n.input(0), name);
}

// LayerNorm over the channels as torch exports it below opset 17, from its
// first ReduceMean: u = mean(x); d = x - u; y = d / sqrt(mean(d^2) + epsilon)
// (d^2: Pow(d, 2) or d * d), each step read only by the next; d may be
// computed twice, once for the square and once for the Div (the ConvNeXt
// authors' channels-first LayerNorm).
bool Importer::layer_norm_pattern(const onnx::NodeProto& mean) {
  // Over a channels-last value's axis 3, a channels-first image's axis 1, or all three of a 1 x 1 image (mmcv's
  // nn.LayerNorm([C, 1, 1]) of GCNet's context): each pixel's channels.
  const auto in = values_.find(mean.input(0));
  if (in == values_.end() || is_flat(in->second)) return false;
  const ActShape s = shape_of(in->second);
  const bool last = channels_last_.count(mean.input(0)) > 0, one_pixel = s.h == 1 && s.w == 1;
  const auto over_channels = [&](const onnx::NodeProto* r) {
    if (!r || int_attribute(*r, "keepdims", 1) == 0) return false;
    const std::vector<int64_t> axes = reduce_axes(*r);
    return last ? axes == std::vector<int64_t>{3}
                : axes == std::vector<int64_t>{1} || (one_pixel && axes == std::vector<int64_t>{1, 2, 3});
  };
  if (!over_channels(&mean)) return false;
  const std::vector<const onnx::NodeProto*>& subs = readers_[mean.output(0)];
  if (subs.empty() || subs.size() > 2 || is_model_output(mean.output(0))) return false;
  const onnx::NodeProto *square = nullptr, *div = nullptr;
  size_t reads = 0;
  for (const onnx::NodeProto* sub : subs) {
    if (sub->op_type() != "Sub" || !arity_of(*sub).fits(*sub) || sub->input(0) != mean.input(0) ||
        sub->input(1) != mean.output(0))
      return false;
    const std::string& d = sub->output(0);
    reads += readers_[d].size();
    for (const onnx::NodeProto* r : readers_[d]) {
      if (r->input_size() != 2 || !arity_of(*r).fits(*r)) continue;  // Div, Pow and Mul read two (and write one)
      if (r->op_type() == "Div" && r->input(0) == d) div = r;
      if ((r->op_type() == "Pow" && r->input(0) == d && is_scalar(*r, 1, 2.0)) ||
          (r->op_type() == "Mul" && r->input(0) == d && r->input(1) == d))
        square = r;
    }
  }
  const size_t square_reads = square && square->op_type() == "Mul" ? 2 : 1;
  if (!square || !div || reads != square_reads + 1) return false;
  const onnx::NodeProto* variance = sole_reader_of(square->output(0), "ReduceMean");
  if (!over_channels(variance)) return false;
  const onnx::NodeProto* guard = sole_reader_of(variance->output(0), "Add");
  if (!guard) return false;
  const FloatTensor* epsilon = constant_ahead(guard->input(guard->input(0) == variance->output(0) ? 1 : 0));
  const onnx::NodeProto* root = sole_reader_of(guard->output(0), "Sqrt");
  if (!epsilon || epsilon->numel() != 1 || !(epsilon->data[0] >= 0) || !std::isfinite(epsilon->data[0]) || !root ||
      sole_reader_of(root->output(0), "Div") != div || div->input(1) != root->output(0))
    return false;
  const int y = builder_.layer_norm(activation(mean, 0), epsilon->data[0]);
  for (const onnx::NodeProto* step : {square, variance, guard, root, div}) fused_nodes_[step] = y;
  for (const onnx::NodeProto* sub : subs) fused_nodes_[sub] = y;
  define(mean, y);
  return true;
}

// ONNX's own LayerNorm (opset 17), over the channels of a channels-last value.
void Importer::layer_normalization(const onnx::NodeProto& n) {
  const int64_t axis = int_attribute(n, "axis", -1);
  if (!channels_last_.count(n.input(0)) || (axis != -1 && axis != 3))
    refuse(n, "axis " + std::to_string(axis) + ": octet normalises the channels of a channels-last value (axis -1 "
              "after a Transpose of perm [0, 2, 3, 1])");
  const float epsilon = float_attribute(n, "epsilon", 1e-5f);
  if (!(epsilon >= 0) || !std::isfinite(epsilon)) refuse(n, "epsilon " + std::to_string(epsilon));
  const int x = activation(n, 0), channels = shape_of(x).c;
  define(n, builder_.layer_norm(x, epsilon));
  PendingAffine a{per_channel(n, constant(n, 1), channels, 1), std::vector<float>(channels, 0.0f), &n};
  if (has_input(n, 2)) a.shift = per_channel(n, constant(n, 2), channels, 1);
  pending_affines_[n.output(0)] = std::move(a);
}

// Division by a constant (an affine), or GELU's first step.
void Importer::divide(const onnx::NodeProto& n) {
  if (gelu_pattern(n)) return;
  if (values_.count(n.input(1))) return divide_by_computed(n);
  std::vector<float> scale = constant_per_channel(n, 0, 1);
  for (float& s : scale) {
    if (s == 0 || !std::isfinite(1.0f / s)) refuse(n, "a division by 0 or by a value too small");
    s = 1.0f / s;
  }
  constant_affine(n, 0, scale, std::vector<float>(scale.size(), 0.0f));
}

// torch's erf GELU: Div(x, sqrt 2), Erf, Add 1, Mul by x, Mul 0.5.
bool Importer::gelu_pattern(const onnx::NodeProto& div) {
  if (!values_.count(div.input(0)) || !is_scalar(div, 1, std::sqrt(2.0))) return false;
  const std::string& x = div.input(0);
  const onnx::NodeProto* erf = sole_reader_of(div.output(0), "Erf");
  const onnx::NodeProto* plus = erf ? sole_reader_of(erf->output(0), "Add") : nullptr;
  if (!plus || !is_scalar(*plus, plus->input(0) == erf->output(0) ? 1 : 0, 1.0)) return false;
  const onnx::NodeProto* product = sole_reader_of(plus->output(0), "Mul");
  if (!product || (product->input(0) == plus->output(0) ? product->input(1) : product->input(0)) != x) return false;
  const onnx::NodeProto* half = sole_reader_of(product->output(0), "Mul");
  if (!half || !is_scalar(*half, half->input(0) == product->output(0) ? 1 : 0, 0.5)) return false;
  const int y = builder_.activation(activation(div, 0), "gelu");
  for (const onnx::NodeProto* step : {erf, plus, product, half}) fused_nodes_[step] = y;
  define(div, y);
  return true;
}

// A constant of one value, or one per channel: [C] (any leading 1s) for
// channels-last values and rows, [C, 1] for 1-D values, [C, 1, 1] for images.
std::vector<float> Importer::per_channel(const onnx::NodeProto& n, const FloatTensor& t, int channels,
                                         int from_end) const {
  const int rank = static_cast<int>(t.shape.size());
  const bool one = t.numel() == 1;
  const bool fits = t.numel() == channels && rank >= from_end && t.dim(rank - from_end) == channels;
  if (!one && !fits)
    refuse(n, "a constant of shape " + shape_string(t.shape) + " for " + std::to_string(channels) + " channels" +
                  (from_end == 1 ? " (channels-last)" : "") + "; octet takes one value or one per channel");
  std::vector<float> v(static_cast<size_t>(channels));
  for (int c = 0; c < channels; ++c) v[static_cast<size_t>(c)] = t.data[one ? 0 : static_cast<size_t>(c)];
  return v;
}

std::vector<float> Importer::constant_per_channel(const onnx::NodeProto& n, int value, int constant_input) const {
  const int x = value_node(n, value);
  const bool last = channels_last_.count(n.input(value)) > 0 || is_flat(x);
  return per_channel(n, constant(n, constant_input), shape_of(x).c, last ? 1 : is_one_row(n, value) ? 2 : 3);
}

// Whether the value of `node` is read once (aliases made by views and folds not counted; the graph's output is a read).
bool Importer::sole_reader(int node) const {
  int reads = 0;
  for (const auto& [name, k] : values_) {
    if (k != node) continue;
    for (const auto& out : g_.output()) reads += out.name() == name;
    const auto r = readers_.find(name);
    if (r == readers_.end()) continue;
    for (const onnx::NodeProto* reader : r->second) {  // one without outputs is a read (import_node refuses it)
      const auto alias = reader->output_size() > 0 ? values_.find(reader->output(0)) : values_.end();
      reads += alias == values_.end() || alias->second != node;
    }
  }
  return reads == 1;
}

// y = x * scale + shift per channel, x input i of n: folded into the conv,
// linear layer or group norm that computes x where nothing else reads it,
// else pending.
void Importer::constant_affine(const onnx::NodeProto& n, int i, const std::vector<float>& scale,
                               const std::vector<float>& shift) {
  const std::string& in = n.input(i);
  if (const auto p = pending_affines_.find(in); p != pending_affines_.end()) {
    PendingAffine a = p->second;
    for (size_t c = 0; c < a.scale.size(); ++c) {
      a.scale[c] *= scale[c];
      a.shift[c] = a.shift[c] * scale[c] + shift[c];
    }
    define(n, value_node(n, i));
    pending_affines_[n.output(0)] = std::move(a);
    return;
  }
  const int x = value_node(n, i);
  const bool folded = fold_into_producer(x, scale, shift);  // before n's value is x: sole_reader counts n
  define(n, x);
  if (!folded) pending_affines_[n.output(0)] = {scale, shift, &n};
}

// x * scale + shift per channel folded into the conv, linear layer or group norm computing x, where
// nothing else reads x; false where it cannot be.
bool Importer::fold_into_producer(int x, const std::vector<float>& scale, const std::vector<float>& shift) {
  const Node& producer = node_at(x);
  const bool owns_affine = producer.op == Op::Conv2d || producer.op == Op::Linear || producer.op == Op::GroupNorm;
  if (!owns_affine || !producer.bias || !sole_reader(x)) return false;
  FloatTensor& w = params_[producer.name + ".weight"];
  FloatTensor& b = params_[producer.name + ".bias"];
  const int64_t per_output = w.numel() / w.dim(0);
  for (int64_t o = 0; o < w.dim(0); ++o) {
    for (int64_t k = 0; k < per_output; ++k) w.data[o * per_output + k] *= scale[static_cast<size_t>(o)];
    b.data[o] = b.data[o] * scale[static_cast<size_t>(o)] + shift[static_cast<size_t>(o)];
  }
  return true;
}

// x * scale + shift per channel as a depthwise 1x1 conv of its own, named `layer`.
int Importer::affine_conv(const std::string& layer, int x, const std::vector<float>& scale,
                          const std::vector<float>& shift) {
  const int channels = shape_of(x).c;
  const int y = builder_.conv(layer, x, channels, 1, 1, 0, true, channels);
  params_[layer + ".weight"] = FloatTensor({channels, 1, 1, 1}, scale);
  params_[layer + ".bias"] = FloatTensor({channels}, shift);
  return y;
}

// The pending affine of `input` folded into the weights [O][C][taps] and bias
// of layer `name`, which reads it unpadded: W (s x + h) = (W s) x + W h.
void Importer::fold_pending_into(const std::string& input, const std::string& name) {
  const PendingAffine& a = pending_affines_.at(input);
  FloatTensor& w = params_.at(name + ".weight");
  FloatTensor& b = params_.at(name + ".bias");
  const int64_t O = w.dim(0), C = static_cast<int64_t>(a.scale.size()), taps = w.numel() / (O * C);
  for (int64_t o = 0; o < O; ++o) {
    double shifted = 0;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < taps; ++t) {
        float& v = w.data[(o * C + c) * taps + t];
        shifted += double{v} * a.shift[static_cast<size_t>(c)];
        v *= a.scale[static_cast<size_t>(c)];
      }
    b.data[o] = static_cast<float>(b.data[o] + shifted);
  }
}

// The value `name` with its pending affine applied: a depthwise 1x1 conv.
int Importer::apply_pending(const std::string& name) {
  const int x = values_.at(name);
  const auto p = pending_affines_.find(name);
  if (p == pending_affines_.end()) return x;
  const PendingAffine a = p->second;
  pending_affines_.erase(p);
  if (is_flat(x))
    refuse(*a.by, "a constant " + a.by->op_type() + " of rows, which octet folds into the linear layer computing or "
                  "reading them: another node reads them (or they are returned); octet applies constants per image "
                  "channel");
  const int y = affine_conv(layer_name(*a.by), x, a.scale, a.shift);
  values_[name] = y;
  return y;
}

}  // namespace octet::onnx_import
