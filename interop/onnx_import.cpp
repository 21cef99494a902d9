#include "interop/onnx_import.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_io.h"
#include "data/dataset.h"
#include "interop/onnx_shape_values.h"
#include "interop/onnx_tensors.h"

namespace octet {

namespace {

using namespace onnx_import;

constexpr int64_t kMinOpset = 11, kMaxOpset = 17;

std::string file_stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  const size_t dot = base.rfind('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string where, const OnnxImportOptions& options)
      : model_(model), g_(model.graph()), where_(std::move(where)), options_(options),
        info_(options.dataset.empty() ? nullptr : &dataset_info(options.dataset)) {}

  Checkpoint run(OnnxImportSummary* summary);

 private:
  [[noreturn]] void refuse(const onnx::NodeProto& n, const std::string& why) const {
    fail(where_ + ": node '" + n.name() + "' (" + n.op_type() + ", opset " + std::to_string(summary_.opset) + "): " +
         why);
  }
  void read_opset();
  void read_input();
  void import_node(const onnx::NodeProto& n);
  bool is_shape_arithmetic(const onnx::NodeProto& n) const;
  void shape_node(const onnx::NodeProto& n);
  const ShapeValue* shape_value(const onnx::NodeProto& n, int i) const;
  bool is_flat(int node) const;
  void transpose(const onnx::NodeProto& n);
  void reduce_mean(const onnx::NodeProto& n);
  void slice(const onnx::NodeProto& n);
  int activation(const onnx::NodeProto& n, int i) const;
  int padded_input(const onnx::NodeProto& n, int* padding) const;
  bool has_input(const onnx::NodeProto& n, int i) const { return n.input_size() > i && !n.input(i).empty(); }
  FloatTensor constant(const onnx::NodeProto& n, int i) const;
  std::string layer_name(const onnx::NodeProto& n);
  void define(const onnx::NodeProto& n, int node, Op op, const std::string& name = "");
  void conv(const onnx::NodeProto& n);
  void batch_norm(const onnx::NodeProto& n);
  void pool(const onnx::NodeProto& n);
  void linear(const onnx::NodeProto& n);
  void add(const onnx::NodeProto& n);
  void reshape(const onnx::NodeProto& n);
  void pad(const onnx::NodeProto& n);
  void constant_node(const onnx::NodeProto& n);
  float scalar(const onnx::NodeProto& n, int i);
  void clip(const onnx::NodeProto& n);
  void gate(const onnx::NodeProto& n);
  void mul(const onnx::NodeProto& n);
  void concat(const onnx::NodeProto& n);
  void split(const onnx::NodeProto& n);
  ActShape shape_of(int node) const;
  Checkpoint finish();

  const onnx::ModelProto& model_;
  const onnx::GraphProto& g_;
  std::string where_;
  OnnxImportOptions options_;
  const DatasetInfo* info_;  // the --dataset the model must fit; null: the file alone says
  std::map<std::string, const onnx::TensorProto*> initializers_;
  std::map<std::string, FloatTensor> constants_;       // from Constant nodes
  std::map<std::string, ShapeValue> shape_values_;  // integer constants and evaluated shape arithmetic
  int64_t file_batch_ = kBatchDim;
  struct PendingPad {
    int node;     // the value padded
    int padding;  // on each side of height and width
  };
  std::map<std::string, PendingPad> pending_pads_;  // Pad outputs, taken up by the convs and pools reading them  // the input's batch size where the file fixes one (its shapes hold it)
  std::map<std::string, int> values_;                 // tensor name -> octet node holding it
  std::map<std::string, int> uses_;                   // how many node inputs read each tensor
  std::map<std::string, std::vector<const onnx::NodeProto*>> readers_;  // the nodes reading each tensor
  // The Mul of x * sigmoid(x) or x * hard_sigmoid(x), by the activation node that computes it.
  std::map<const onnx::NodeProto*, int> fused_muls_;
  // ShuffleNet's channel shuffle as exported: Reshape to [N, g, C/g, H, W],
  // Transpose(0, 2, 1, 3, 4), Reshape back. The values of the first two steps
  // (by tensor name): the octet node of the image and g.
  struct GroupedView {
    int node;
    int groups;
    bool transposed;
  };
  std::map<std::string, GroupedView> grouped_views_;
  GraphBuilder builder_;
  std::vector<Op> ops_;              // per octet node
  std::vector<std::string> layers_;  // per octet node: its parameters' prefix
  std::set<std::string> taken_names_;
  std::map<std::string, FloatTensor> params_;
  OnnxImportSummary summary_;
};

void Importer::read_opset() {
  for (const auto& o : model_.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") summary_.opset = o.version();
  check(summary_.opset >= kMinOpset && summary_.opset <= kMaxOpset,
        where_ + ": opset " + std::to_string(summary_.opset) + " is outside the opsets octet imports (" +
            std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
            "; torch.onnx.export(..., opset_version=13) writes one)");
}

void Importer::read_input() {
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& in : g_.input())
    if (!initializers_.count(in.name())) inputs.push_back(&in);
  check(inputs.size() == 1, where_ + ": the graph has " + std::to_string(inputs.size()) +
                                " inputs besides its weights; octet imports models of one image input");
  const onnx::ValueInfoProto& in = *inputs[0];
  const std::string what = where_ + ": input '" + in.name() + "'";
  check(in.type().has_tensor_type() && in.type().tensor_type().elem_type() == onnx::TensorProto::FLOAT,
        what + " is not a float32 tensor");
  const auto& dims = in.type().tensor_type().shape().dim();
  check(dims.size() == 4, what + " has " + std::to_string(dims.size()) + " dimensions, not N x C x H x W");
  if (dims[0].has_dim_value()) file_batch_ = dims[0].dim_value();
  int chw[3];
  for (int k = 1; k < 4; ++k) {
    check(dims[k].has_dim_value() && dims[k].dim_value() > 0 && dims[k].dim_value() < (1 << 16),
          what + ": dimension " + std::to_string(k) + " is dynamic ('" + dims[k].dim_param() +
              "'); octet needs fixed channels, height and width (export with a fixed-size dummy input)");
    chw[k - 1] = static_cast<int>(dims[k].dim_value());
  }
  if (info_)
    check(chw[0] == info_->channels && chw[1] == info_->height && chw[2] == info_->width,
          what + " takes " + std::to_string(chw[0]) + "x" + std::to_string(chw[1]) + "x" + std::to_string(chw[2]) +
              " images, and " + info_->name + "'s are " + std::to_string(info_->channels) + "x" +
              std::to_string(info_->height) + "x" + std::to_string(info_->width) + " (--dataset)");
  values_[in.name()] = builder_.input(chw[0], chw[1], chw[2]);
  ops_.push_back(Op::Input);
  layers_.push_back("input");
}

bool Importer::is_shape_arithmetic(const onnx::NodeProto& n) const {
  if (!is_shape_op(n.op_type())) return false;
  if (n.op_type() == "Shape") return true;
  for (const auto& in : n.input())
    if (!in.empty() && !shape_values_.count(in)) return false;
  return n.input_size() > 0;
}

const ShapeValue* Importer::shape_value(const onnx::NodeProto& n, int i) const {
  if (!has_input(n, i)) return nullptr;
  const auto it = shape_values_.find(n.input(i));
  return it == shape_values_.end() ? nullptr : &it->second;
}

// Whether the node's value is, in the ONNX graph, a batch of rows (N x F), not of images.
bool Importer::is_flat(int node) const {
  const Graph& g = builder_.graph();
  for (int k = node;; k = g.nodes[static_cast<size_t>(k)].inputs.at(0)) {
    const Op op = g.nodes[static_cast<size_t>(k)].op;
    if (op == Op::Flatten || op == Op::Linear) return true;
    if (op != Op::ReLU && op != Op::Activation && op != Op::Add && op != Op::Mul) return false;
  }
}

// Shape of a computed value: [batch, C, H, W] (or [batch, F]); the rest evaluated.
void Importer::shape_node(const onnx::NodeProto& n) {
  if (n.op_type() != "Shape") {
    std::vector<const ShapeValue*> inputs;
    for (int i = 0; i < n.input_size(); ++i) inputs.push_back(shape_value(n, i));
    try {
      shape_values_[n.output(0)] = evaluate_shape_op(n, inputs).at(0);
    } catch (const Error& e) {
      refuse(n, e.what());
    }
    return;
  }
  const int x = activation(n, 0);
  const ActShape s = shape_of(x);
  ShapeValue v;
  v.values = is_flat(x) ? std::vector<int64_t>{kBatchDim, s.numel()} : std::vector<int64_t>{kBatchDim, s.c, s.h, s.w};
  const int64_t rank = static_cast<int64_t>(v.values.size());
  const auto bound = [&](int64_t b) { return std::min(std::max(b < 0 ? b + rank : b, int64_t{0}), rank); };
  const int64_t start = bound(int_attribute(n, "start", 0)), end = bound(int_attribute(n, "end", rank));
  v.values = std::vector<int64_t>(v.values.begin() + start, v.values.begin() + std::max(start, end));
  shape_values_[n.output(0)] = v;
}

// Input 0 of a conv or pool, with the padding of a Pad before it (pad()) added to `padding`.
int Importer::padded_input(const onnx::NodeProto& n, int* padding) const {
  const auto pad = pending_pads_.find(n.input(0));
  if (pad == pending_pads_.end()) return activation(n, 0);
  *padding += pad->second.padding;
  return pad->second.node;
}

int Importer::activation(const onnx::NodeProto& n, int i) const {
  if (!has_input(n, i)) refuse(n, "input " + std::to_string(i) + " is missing");
  const std::string& name = n.input(i);
  const auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  if (initializers_.count(name) || constants_.count(name) || shape_values_.count(name))
    refuse(n, "reads the constant '" + name + "' where octet computes on the image (constant folding is not done)");
  refuse(n, "reads '" + name + "' before any node writes it (nodes out of order, or a cycle)");
}

FloatTensor Importer::constant(const onnx::NodeProto& n, int i) const {
  if (!has_input(n, i)) refuse(n, "input " + std::to_string(i) + " is missing");
  const std::string& name = n.input(i);
  const std::string what = where_ + ": node '" + n.name() + "' (" + n.op_type() + "): tensor '" + name + "'";
  if (const auto it = constants_.find(name); it != constants_.end()) return it->second;
  if (const auto it = initializers_.find(name); it != initializers_.end()) return float_tensor(*it->second, what);
  refuse(n, "input '" + name + "' must be a constant (a weight), and it is computed");
}

// The parameters' prefix: the weight's own name without ".weight" (PyTorch's
// module path, e.g. "features.0"), else the node's name, else op and index.
std::string Importer::layer_name(const onnx::NodeProto& n) {
  std::string name = n.input_size() > 1 ? n.input(1) : "";
  const std::string suffix = ".weight";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name = name.substr(0, name.size() - suffix.size());
  else
    name = n.name();
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_') ch = '_';
  if (name.empty() || name.front() == '.' || name.back() == '.') name = n.op_type() + "_" + std::to_string(ops_.size());
  std::string unique = name;
  for (int k = 1; taken_names_.count(unique); ++k) unique = name + "_" + std::to_string(k);
  taken_names_.insert(unique);
  return unique;
}

void Importer::define(const onnx::NodeProto& n, int node, Op op, const std::string& name) {
  if (node == static_cast<int>(ops_.size())) {  // a new octet node
    ops_.push_back(op);
    layers_.push_back(name);
  }
  values_[n.output(0)] = node;
  for (int k = 1; k < n.output_size(); ++k)
    if (!n.output(k).empty() && uses_[n.output(k)] > 0) refuse(n, "its output " + std::to_string(k) + " is read");
}

void Importer::conv(const onnx::NodeProto& n) {
  int padded = 0;
  const int x = padded_input(n, &padded);
  FloatTensor w = constant(n, 1);
  if (w.shape.size() != 4) refuse(n, "a weight of shape " + shape_string(w.shape) + ": octet imports 2-D convolutions");
  const int64_t out = w.dim(0), kernel = w.dim(2);
  const auto strides = ints_attribute(n, "strides", {1, 1});
  const auto pads = ints_attribute(n, "pads", {0, 0, 0, 0});
  const auto dilations = ints_attribute(n, "dilations", {1, 1});
  const std::string auto_pad = string_attribute(n, "auto_pad", "NOTSET");
  const int64_t groups = int_attribute(n, "group", 1);
  if (auto_pad != "NOTSET" && auto_pad != "VALID") refuse(n, "auto_pad " + auto_pad + ": give explicit pads");
  if (w.dim(3) != kernel) refuse(n, "a non-square kernel " + shape_string(w.shape) + ": octet's kernels are square");
  if (strides.size() != 2 || strides[0] != strides[1] || strides[0] < 1 || strides[0] > 64)
    refuse(n, "strides " + ints_string(strides) + ": octet's are alike in both directions");
  if (pads.size() != 4 || pads[0] != pads[1] || pads[0] != pads[2] || pads[0] != pads[3] || pads[0] < 0 ||
      pads[0] > 64)
    refuse(n, "pads " + ints_string(pads) + ": octet pads all four sides alike");
  if (dilations != std::vector<int64_t>{1, 1}) refuse(n, "dilations " + ints_string(dilations) + ": octet does not dilate");
  if (groups < 1 || groups > out || out % groups != 0) refuse(n, "group " + std::to_string(groups));
  FloatTensor bias(Shape{out}, 0.0f);
  if (has_input(n, 2)) bias = constant(n, 2);
  if (bias.shape != Shape{out}) refuse(n, "a bias of shape " + shape_string(bias.shape));
  const std::string name = layer_name(n);
  define(n, builder_.conv(name, x, static_cast<int>(out), static_cast<int>(kernel), static_cast<int>(strides[0]),
                          static_cast<int>(pads[0]) + padded, true, static_cast<int>(groups)),
         Op::Conv2d, name);
  params_[name + ".weight"] = std::move(w);
  params_[name + ".bias"] = std::move(bias);
}

// y = gamma (x - mean) / sqrt(var + eps) + beta, folded into the conv before it.
// Folded into the conv before it where nothing else reads that conv; else
// (DenseNet's norm before each ReLU and conv) a depthwise 1x1 conv of its own.
void Importer::batch_norm(const onnx::NodeProto& n) {
  int x = activation(n, 0);
  if (int_attribute(n, "training_mode", 0) != 0) refuse(n, "training_mode 1: export the model in eval() mode");
  const bool own_conv = ops_[x] != Op::Conv2d || uses_[n.input(0)] != 1;
  if (own_conv) {
    const int channels = shape_of(x).c;
    if (is_flat(x)) refuse(n, "a batch norm of rows (BatchNorm1d): octet normalises images' channels");
    const std::string name = layer_name(n);
    x = builder_.conv(name, x, channels, 1, 1, 0, true, channels);
    ops_.push_back(Op::Conv2d);
    layers_.push_back(name);
    params_[name + ".weight"] = FloatTensor({channels, 1, 1, 1}, 1.0f);
    params_[name + ".bias"] = FloatTensor({channels}, 0.0f);
  }
  const FloatTensor gamma = constant(n, 1), beta = constant(n, 2), mean = constant(n, 3), var = constant(n, 4);
  const double eps = float_attribute(n, "epsilon", 1e-5f);
  FloatTensor& w = params_[layers_[x] + ".weight"];
  FloatTensor& b = params_[layers_[x] + ".bias"];
  const int64_t out = w.dim(0), per_channel = w.numel() / out;
  for (const FloatTensor* t : {&gamma, &beta, &mean, &var})
    if (t->shape != Shape{out}) refuse(n, "a parameter of shape " + shape_string(t->shape) + " for " +
                                              std::to_string(out) + " channels");
  for (int64_t c = 0; c < out; ++c) {
    if (!(var.data[c] + eps > 0)) refuse(n, "channel " + std::to_string(c) + " has a variance + epsilon <= 0");
    const double g = gamma.data[c] / std::sqrt(double{var.data[c]} + eps);
    for (int64_t k = 0; k < per_channel; ++k) w.data[c * per_channel + k] = static_cast<float>(w.data[c * per_channel + k] * g);
    b.data[c] = static_cast<float>((b.data[c] - double{mean.data[c]}) * g + beta.data[c]);
  }
  if (!own_conv) ++summary_.folded_batch_norms;
  define(n, x, Op::Conv2d);
}

void Importer::pool(const onnx::NodeProto& n) {
  int padded = 0;
  const int x = padded_input(n, &padded);
  const auto kernel = ints_attribute(n, "kernel_shape", {});
  const auto strides = ints_attribute(n, "strides", {1, 1});
  const auto pads = ints_attribute(n, "pads", {0, 0, 0, 0});
  if (kernel.size() != 2 || kernel[0] != kernel[1] || kernel[0] < 1 || kernel[0] > 64)
    refuse(n, "kernel_shape " + ints_string(kernel) + ": octet's pooling windows are square");
  if (strides.size() != 2 || strides[0] != strides[1] || strides[0] < 1 || strides[0] > 64)
    refuse(n, "strides " + ints_string(strides) + ": octet's are alike in both directions");
  if (pads.size() != 4 || pads[0] != pads[1] || pads[0] != pads[2] || pads[0] != pads[3] || pads[0] < 0 ||
      2 * pads[0] > kernel[0])
    refuse(n, "pads " + ints_string(pads) + ": octet's pools pad every side alike, at most half the kernel");
  if (ints_attribute(n, "dilations", {1, 1}) != std::vector<int64_t>{1, 1}) refuse(n, "dilated pooling");
  if (string_attribute(n, "auto_pad", "NOTSET") != "NOTSET") refuse(n, "auto_pad: give explicit pads");
  if (n.op_type() == "MaxPool" && n.output_size() > 1 && uses_[n.output(1)] > 0) refuse(n, "its indices are read");
  if (padded > 0 && pads[0] > 0) refuse(n, "pads of its own after a Pad");
  const int k = static_cast<int>(kernel[0]), stride = static_cast<int>(strides[0]);
  const int padding = static_cast<int>(pads[0]) + padded;
  if (2 * padding > k) refuse(n, "a Pad before it of more than half its kernel");
  const bool ceil_mode = int_attribute(n, "ceil_mode", 0) != 0;
  if (n.op_type() == "MaxPool") return define(n, builder_.max_pool(x, k, stride, padding, ceil_mode), Op::MaxPool2d);
  const bool exclude_padding = padded == 0 && int_attribute(n, "count_include_pad", 0) == 0;
  define(n, builder_.avg_pool(x, k, stride, padding, ceil_mode, exclude_padding), Op::AvgPool2d);
}

// Gemm (y = x W^T + b as PyTorch's Linear exports it, or x W + b) and MatMul.
void Importer::linear(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
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
  define(n, builder_.linear(name, x, static_cast<int>(out), true), Op::Linear, name);
  params_[name + ".weight"] = std::move(w);
  params_[name + ".bias"] = std::move(bias);
}

// Two tensors: a residual add. A tensor and a constant: the bias of the
// MatMul before it.
void Importer::add(const onnx::NodeProto& n) {
  const bool first_constant = !values_.count(n.input(0)), second_constant = !values_.count(n.input(1));
  if (!first_constant && !second_constant) {
    define(n, builder_.add(activation(n, 0), activation(n, 1)), Op::Add);
    return;
  }
  const int i = first_constant ? 1 : 0;
  const int x = activation(n, i);
  if (ops_[x] != Op::Linear || uses_[n.input(i)] != 1)
    refuse(n, "adds a constant to something other than a MatMul's output; octet adds constants only as biases");
  const FloatTensor c = constant(n, 1 - i);
  FloatTensor& bias = params_[layers_[x] + ".bias"];
  if (c.numel() != bias.numel()) refuse(n, "a bias of shape " + shape_string(c.shape));
  for (int64_t o = 0; o < c.numel(); ++o) bias.data[o] += c.data[o];
  define(n, x, Op::Linear);
}

// To (batch, features): octet's flatten; a [N, C, H, W] value as it is; the
// steps of a channel shuffle (GroupedView).
void Importer::reshape(const onnx::NodeProto& n) {
  const auto view = grouped_views_.find(n.input(0));
  const int x = view != grouped_views_.end() ? view->second.node : activation(n, 0);
  const ShapeValue* target = shape_value(n, 1);
  if (!target) refuse(n, "a target shape octet cannot evaluate");
  std::vector<int64_t> dims = target->values;
  const ActShape in = shape_of(x);
  const bool flat = is_flat(x);
  const std::vector<int64_t> in_dims =
      flat ? std::vector<int64_t>{kBatchDim, in.numel()} : std::vector<int64_t>{kBatchDim, in.c, in.h, in.w};
  for (size_t k = 0; k < dims.size(); ++k)  // 0 copies the input's dimension
    if (dims[k] == 0 && k < in_dims.size() && int_attribute(n, "allowzero", 0) == 0) dims[k] = in_dims[k];
  if (dims.empty() || (dims[0] != kBatchDim && dims[0] != -1 && dims[0] != file_batch_))
    refuse(n, "a reshape to " + shape_value_string(*target) + ", which does not keep the batch first");
  if (dims.size() == 5 && view == grouped_views_.end() && !flat && dims[1] > 0 && in.c % dims[1] == 0 &&
      dims[2] == in.c / dims[1] && dims[3] == in.h && dims[4] == in.w) {
    grouped_views_[n.output(0)] = {x, static_cast<int>(dims[1]), false};
    return;
  }
  if (dims.size() == 4 && view != grouped_views_.end() && view->second.transposed &&
      (dims[1] == in.c || dims[1] == -1) && dims[2] == in.h && dims[3] == in.w)
    return define(n, builder_.channel_shuffle(view->second.node, view->second.groups), Op::ChannelShuffle);
  if (view != grouped_views_.end()) refuse(n, "a reshape of a grouped view other than a channel shuffle's");
  if (dims == in_dims && !flat) return define(n, x, ops_[x]);
  if (dims.size() != 2 || (dims[1] != -1 && dims[1] != in.numel()))
    refuse(n, "a reshape to " + shape_value_string(*target) + " of " + (flat ? "rows" : "images") + " " +
                  to_string(in) + ": octet reshapes only to (batch, features) or to a channel shuffle");
  define(n, builder_.flatten(x), Op::Flatten);
}

// The middle step of a channel shuffle (see GroupedView).
void Importer::transpose(const onnx::NodeProto& n) {
  const auto view = grouped_views_.find(n.input(0));
  if (view == grouped_views_.end() || view->second.transposed ||
      ints_attribute(n, "perm", {}) != std::vector<int64_t>{0, 2, 1, 3, 4})
    refuse(n, "a transpose other than a channel shuffle's (Reshape to [N, g, C/g, H, W], perm [0,2,1,3,4])");
  grouped_views_[n.output(0)] = {view->second.node, view->second.groups, true};
}

// Of channels (axis 1), step 1: octet's channel slice.
void Importer::slice(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const ShapeValue *starts = shape_value(n, 1), *ends = shape_value(n, 2), *axes = shape_value(n, 3),
                   *steps = shape_value(n, 4);
  if (!starts || !ends || (has_input(n, 3) && !axes) || (has_input(n, 4) && !steps))
    refuse(n, "bounds octet cannot evaluate");
  const int channels = shape_of(x).c;
  const bool channel_axis =
      axes && axes->values.size() == 1 && (axes->values[0] == 1 || (axes->values[0] == -3 && !is_flat(x)));
  if (!channel_axis || starts->values.size() != 1 || ends->values.size() != 1 ||
      (steps && steps->values != std::vector<int64_t>{1}) || is_flat(x))
    refuse(n, "a slice other than of channels (axis 1) with step 1");
  const auto bound = [&](int64_t b) {
    if (b == kBatchDim || b == kUnknownDim) refuse(n, "bounds octet cannot evaluate");
    return std::min<int64_t>(std::max<int64_t>(b < 0 ? b + channels : b, 0), channels);
  };
  const int64_t first = bound(starts->values[0]), end = bound(ends->values[0]);
  if (end <= first) refuse(n, "an empty slice");
  define(n, builder_.channel_slice(x, static_cast<int>(first), static_cast<int>(end - first)), Op::ChannelSlice);
}

// torch writes a Pad before an average pool that counts its padding, and
// some exporters one of zeros before a conv: equal padding of height and
// width, in zeros, becomes the padding of the conv or average pools that read
// it (a pool pad counted, as Pad makes it); none at all, nothing.
void Importer::pad(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const ShapeValue* pads = shape_value(n, 1);
  if (!pads) refuse(n, "pads that are not a constant");
  summary_.dropped.push_back(n.op_type());
  const std::vector<int64_t>& p = pads->values;
  if (std::all_of(p.begin(), p.end(), [](int64_t v) { return v == 0; })) return define(n, x, ops_[x]);
  const bool zeros = string_attribute(n, "mode", "constant") == "constant" && (!has_input(n, 2) || scalar(n, 2) == 0);
  const bool spatial = p.size() == 8 && p[0] == 0 && p[1] == 0 && p[4] == 0 && p[5] == 0 && p[2] == p[3] &&
                       p[2] == p[6] && p[2] == p[7] && p[2] > 0 && p[2] <= 64;
  bool readers_pad = true;
  for (const onnx::NodeProto* r : readers_[n.output(0)])
    readers_pad = readers_pad && (r->op_type() == "AveragePool" || r->op_type() == "Conv") && r->input(0) == n.output(0);
  if (!zeros || !spatial || !readers_pad || is_flat(x))
    refuse(n, "pads " + shape_value_string(*pads) +
                  ": octet pads height and width alike with zeros, before the convolutions or average pools that read them");
  pending_pads_[n.output(0)] = {x, static_cast<int>(p[2])};
}
void Importer::constant_node(const onnx::NodeProto& n) {
  const auto* value = attribute(n, "value");
  if (!value || !value->has_t()) refuse(n, "a constant that is not a tensor 'value'");
  const std::string what = where_ + ": node '" + n.name() + "' (Constant)";
  if (is_float(value->t()))
    constants_[n.output(0)] = float_tensor(value->t(), what);
  else {
    shape_values_[n.output(0)] = {int_tensor(value->t(), what), value->t().dims_size() == 0};
  }
}

// A scalar float input (Clip's min and max).
float Importer::scalar(const onnx::NodeProto& n, int i) {
  const FloatTensor t = constant(n, i);
  if (t.numel() != 1) refuse(n, "input " + std::to_string(i) + " is not one value");
  if (!std::isfinite(t.data[0])) refuse(n, "input " + std::to_string(i) + " is not finite");
  return t.data[0];
}

void Importer::clip(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  if (!has_input(n, 1) || !has_input(n, 2)) refuse(n, "a Clip without both min and max");
  const float lo = scalar(n, 1), hi = scalar(n, 2);
  if (lo > hi) refuse(n, "min " + std::to_string(lo) + " above max " + std::to_string(hi));
  define(n, builder_.activation(x, "clip", lo, hi), Op::Activation);
}

// Sigmoid and HardSigmoid. One whose only reader multiplies it by its own
// input is, with that Mul, one activation: SiLU (x sigmoid(x)) or HardSwish.
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
      const int y = builder_.activation(x, hard ? "hard_swish" : "silu");
      fused_muls_[&m] = y;
      return define(n, y, Op::Activation);
    }
  }
  define(n, builder_.activation(x, hard ? "hard_sigmoid" : "sigmoid", alpha, beta), Op::Activation);
}

ActShape Importer::shape_of(int node) const {
  try {
    return builder_.graph().shapes().at(static_cast<size_t>(node));
  } catch (const Error& e) {
    fail(where_ + ": the imported graph is not one octet can run: " + e.what());
  }
}

// Of two computed values; the one of a value per channel second.
void Importer::mul(const onnx::NodeProto& n) {
  if (const auto it = fused_muls_.find(&n); it != fused_muls_.end())  // the activation before it is the product
    return define(n, it->second, Op::Activation);
  if (!values_.count(n.input(0)) || !values_.count(n.input(1)))
    refuse(n, "multiplies by a constant; octet multiplies two computed values");
  int a = activation(n, 0), b = activation(n, 1);
  const ActShape sa = shape_of(a), sb = shape_of(b);
  if (sa.numel() < sb.numel()) std::swap(a, b);
  define(n, builder_.mul(a, b), Op::Mul);
}

void Importer::concat(const onnx::NodeProto& n) {
  const int64_t axis = int_attribute(n, "axis", 0);
  if (axis != 1 && axis != -3) refuse(n, "axis " + std::to_string(axis) + ": octet concatenates channels (axis 1)");
  std::vector<int> xs;
  for (int i = 0; i < n.input_size(); ++i) xs.push_back(activation(n, i));
  define(n, builder_.concat(xs), Op::Concat);
}

// On channels, each output a run of them.
void Importer::split(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const int64_t axis = int_attribute(n, "axis", 0);
  if (axis != 1 && axis != -3) refuse(n, "axis " + std::to_string(axis) + ": octet splits channels (axis 1)");
  const int channels = shape_of(x).c;
  const ShapeValue* given = shape_value(n, 1);
  if (has_input(n, 1) && !given) refuse(n, "split sizes that are not a constant");
  std::vector<int64_t> sizes = given ? given->values : ints_attribute(n, "split", {});
  if (sizes.empty()) {
    if (channels % n.output_size() != 0) refuse(n, "channels that do not divide into equal parts");
    sizes.assign(static_cast<size_t>(n.output_size()), channels / n.output_size());
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (static_cast<int>(sizes.size()) != n.output_size() || total != channels)
    refuse(n, "split sizes " + ints_string(sizes) + " for " + std::to_string(channels) + " channels");
  int offset = 0;
  for (int k = 0; k < n.output_size(); ++k) {
    const int size = static_cast<int>(sizes[static_cast<size_t>(k)]);
    values_[n.output(k)] = builder_.channel_slice(x, offset, size);
    ops_.push_back(Op::ChannelSlice);
    layers_.push_back("");
    offset += size;
  }
}

// Over height and width: a global average pool (then rows, without keepdims).
void Importer::reduce_mean(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  std::vector<int64_t> axes = ints_attribute(n, "axes", {});
  if (has_input(n, 1)) {
    const ShapeValue* given = shape_value(n, 1);
    if (!given) refuse(n, "axes that are not a constant");
    axes = given->values;
  }
  for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
  std::sort(axes.begin(), axes.end());
  if (is_flat(x) || axes != std::vector<int64_t>{2, 3})
    refuse(n, "a mean over axes other than height and width (2, 3)");
  const int pooled = builder_.global_avg_pool(x);
  if (int_attribute(n, "keepdims", 1) != 0) return define(n, pooled, Op::GlobalAvgPool);
  ops_.push_back(Op::GlobalAvgPool);
  layers_.push_back("");
  define(n, builder_.flatten(pooled), Op::Flatten);
}

void Importer::import_node(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx") refuse(n, "its domain '" + n.domain() + "' is not ONNX's own");
  if (n.output_size() < 1) refuse(n, "no output");
  if (op == "Constant") return constant_node(n);
  if (is_shape_arithmetic(n)) {
    shape_node(n);
    summary_.dropped.push_back(op);
    return;
  }
  if (op == "Conv") return conv(n);
  if (op == "BatchNormalization") return batch_norm(n);
  if (op == "Relu") return define(n, builder_.relu(activation(n, 0)), Op::ReLU);
  if (op == "MaxPool" || op == "AveragePool") return pool(n);
  if (op == "GlobalAveragePool") return define(n, builder_.global_avg_pool(activation(n, 0)), Op::GlobalAvgPool);
  if (op == "Add") return add(n);
  if (op == "Clip") return clip(n);
  if (op == "Sigmoid" || op == "HardSigmoid") return gate(n);
  if (op == "HardSwish") return define(n, builder_.activation(activation(n, 0), "hard_swish"), Op::Activation);
  if (op == "LeakyRelu")
    return define(n, builder_.activation(activation(n, 0), "leaky_relu", float_attribute(n, "alpha", 0.01f)),
                  Op::Activation);
  if (op == "Mul") return mul(n);
  if (op == "Concat") return concat(n);
  if (op == "Split") return split(n);
  if (op == "Transpose") return transpose(n);
  if (op == "ReduceMean") return reduce_mean(n);
  if (op == "Slice") return slice(n);
  if (op == "Gemm" || op == "MatMul") return linear(n);
  if (op == "Reshape") return reshape(n);
  if (op == "Pad") return pad(n);
  if (op == "Flatten") {
    if (int_attribute(n, "axis", 1) != 1) refuse(n, "axis other than 1");
    return define(n, builder_.flatten(activation(n, 0)), Op::Flatten);
  }
  if (op == "Identity" && !values_.count(n.input(0))) {  // torch names a shared weight twice this way
    if (const auto it = initializers_.find(n.input(0)); it != initializers_.end()) {
      initializers_[n.output(0)] = it->second;
      return;
    }
    constants_[n.output(0)] = constant(n, 0);
    return;
  }
  if (op == "Identity" || op == "Dropout" || op == "Softmax" || op == "LogSoftmax") {
    const bool softmax = op == "Softmax" || op == "LogSoftmax";
    if (softmax && (uses_[n.output(0)] > 0 || g_.output_size() != 1 || g_.output(0).name() != n.output(0)))
      refuse(n, "a softmax that is not the model's output; octet drops only a final one");
    summary_.dropped.push_back(op);
    return define(n, activation(n, 0), ops_[activation(n, 0)]);
  }
  refuse(n, "octet cannot import " + op + " yet");
}

Checkpoint Importer::finish() {
  check(g_.output_size() == 1, where_ + ": the graph has " + std::to_string(g_.output_size()) +
                                    " outputs; octet imports models with one (the logits)");
  const std::string& out = g_.output(0).name();
  const auto it = values_.find(out);
  check(it != values_.end(), where_ + ": no node computes the graph's output '" + out + "'");
  check(it->second == static_cast<int>(ops_.size()) - 1,
        where_ + ": the output '" + out + "' is not computed last: nodes after it compute nothing the model returns");
  Checkpoint c;
  try {
    c.graph = builder_.finish();
  } catch (const Error& e) {
    fail(where_ + ": the imported graph is not one octet can run: " + e.what());
  }
  for (const Graph::Param& p : c.graph.params()) {
    const Shape expected(p.shape.begin(), p.shape.end());
    check(params_.at(p.name).shape == expected, where_ + ": layer '" + p.name + "' has shape " +
                                                    shape_string(params_.at(p.name).shape) + " where the graph needs " +
                                                    shape_string(expected));
  }
  const std::vector<ActShape> shapes = c.graph.shapes();
  const ActShape logits = shapes.back();
  check(logits.h == 1 && logits.w == 1, where_ + ": the model returns " + to_string(logits) +
                                            " values per image, and octet's models return a vector of logits (end "
                                            "it with a Flatten or a global pooling)");
  const int64_t outputs = int64_t{logits.c} * logits.h * logits.w;
  if (info_)
    check(outputs == static_cast<int64_t>(info_->classes.size()),
          where_ + ": the model returns " + std::to_string(outputs) + " values per image and " + info_->name +
              " has " + std::to_string(info_->classes.size()) + " classes");
  const int channels = c.graph.nodes[0].channels;
  c.model = file_stem(where_);
  c.batch_norm = false;
  if (info_) {
    c.dataset = info_->name;
    c.classes = info_->classes;
  } else {  // no dataset named: classes by number, the input taken as the model reads it
    c.dataset = kNoDataset;
    for (int64_t k = 0; k < outputs; ++k) c.classes.push_back(std::to_string(k));
  }
  const std::vector<float> no_mean(static_cast<size_t>(channels), 0.0f), no_std(static_cast<size_t>(channels), 1.0f);
  c.mean = !options_.mean.empty() ? options_.mean : info_ ? info_->mean : no_mean;
  c.std = !options_.std.empty() ? options_.std : info_ ? info_->std : no_std;
  check(c.mean.size() == static_cast<size_t>(channels) && c.std.size() == c.mean.size(),
        where_ + ": the normalisation needs " + std::to_string(channels) + " means and stds");
  for (float s : c.std) check(s > 0, where_ + ": every normalisation std must be positive");
  c.training_json = nlohmann::json{{"imported_from", where_}, {"onnx_opset", summary_.opset}}.dump();
  c.params = std::move(params_);
  return c;
}

Checkpoint Importer::run(OnnxImportSummary* summary) {
  read_opset();
  for (const auto& t : g_.initializer()) {
    initializers_[t.name()] = &t;
    if (t.data_type() == onnx::TensorProto::INT64 || t.data_type() == onnx::TensorProto::INT32)
      shape_values_[t.name()] = {int_tensor(t, where_ + ": tensor '" + t.name() + "'"), t.dims_size() == 0};
  }
  for (const auto& n : g_.node())
    for (const auto& in : n.input()) {
      ++uses_[in];
      readers_[in].push_back(&n);
    }
  read_input();
  for (const auto& n : g_.node()) import_node(n);
  Checkpoint c = finish();
  summary_.onnx_nodes = g_.node_size();
  summary_.octet_nodes = static_cast<int64_t>(c.graph.nodes.size());
  if (summary) *summary = summary_;
  return c;
}

}  // namespace

Checkpoint import_onnx(const std::string& path, const OnnxImportOptions& options, OnnxImportSummary* summary) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  onnx::ModelProto model;
  check(bytes.size() <= static_cast<size_t>(INT32_MAX) &&
            model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) && model.has_graph(),
        path + " is not an ONNX model (truncated, or another kind of file)");
  return import_onnx_model(model, path, options, summary);
}

Checkpoint import_onnx_model(const onnx::ModelProto& model, const std::string& where, const OnnxImportOptions& options,
                             OnnxImportSummary* summary) {
  check(model.has_graph(), where + " is not an ONNX model (it has no graph)");
  return Importer(model, where, options).run(summary);
}

}  // namespace octet
