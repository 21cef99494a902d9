#include "interop/onnx_import.h"

#include <onnx/onnx_pb.h>

#include <cctype>
#include <climits>
#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_io.h"
#include "data/dataset.h"
#include "interop/onnx_tensors.h"

namespace octet {

namespace {

using namespace onnx_import;

constexpr int64_t kMinOpset = 11, kMaxOpset = 17;

// Integer work on shapes that exporters emit to feed a Reshape: dropped once
// every input is itself a shape or an integer constant.
const std::set<std::string> kShapeArithmetic = {"Shape", "Gather", "Unsqueeze", "Squeeze", "Concat",         "Cast",
                                                "Slice", "Mul",    "Div",       "ReduceProd", "ConstantOfShape"};

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
  // What a shape computation holds, where it is one the importer follows:
  // Batch, the batch size (Gather 0 of a Shape, unsqueezed or not); Rows,
  // (batch, -1 or the features): what view(x.size(0), -1) exports.
  enum class ShapeValue { Other, Shape, Batch, Rows };
  [[noreturn]] void refuse(const onnx::NodeProto& n, const std::string& why) const {
    fail(where_ + ": node '" + n.name() + "' (" + n.op_type() + ", opset " + std::to_string(summary_.opset) + "): " +
         why);
  }
  void read_opset();
  void read_input();
  void import_node(const onnx::NodeProto& n);
  bool is_shape_arithmetic(const onnx::NodeProto& n) const;
  ShapeValue shape_kind(const onnx::NodeProto& n) const;
  std::vector<int64_t> int_constant(const std::string& name) const;
  int activation(const onnx::NodeProto& n, int i) const;
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
  Checkpoint finish();

  const onnx::ModelProto& model_;
  const onnx::GraphProto& g_;
  std::string where_;
  OnnxImportOptions options_;
  const DatasetInfo* info_;  // the --dataset the model must fit; null: the file alone says
  std::map<std::string, const onnx::TensorProto*> initializers_;
  std::map<std::string, FloatTensor> constants_;       // from Constant nodes
  std::set<std::string> int_values_;  // integer constants
  std::map<std::string, int> values_;                 // tensor name -> octet node holding it
  std::map<std::string, int> uses_;                   // how many node inputs read each tensor
  std::map<std::string, ShapeValue> shape_kinds_;
  struct Rows {
    std::string node;
    int octet_node;
    int64_t features;
  };
  std::vector<Rows> reshape_features_;  // reshapes to (rows, features): the features must be one image's
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
  if (!kShapeArithmetic.count(n.op_type())) return false;
  if (n.op_type() == "Shape") return true;
  for (const auto& in : n.input())
    if (!in.empty() && !shape_kinds_.count(in) && !int_values_.count(in)) return false;
  return true;
}

std::vector<int64_t> Importer::int_constant(const std::string& name) const {
  const auto it = initializers_.find(name);
  if (it == initializers_.end() || !int_values_.count(name)) return {};
  return int_tensor(*it->second, where_ + ": tensor '" + name + "'");
}

Importer::ShapeValue Importer::shape_kind(const onnx::NodeProto& n) const {
  const auto kind = [&](int i) {
    const auto it = n.input_size() > i ? shape_kinds_.find(n.input(i)) : shape_kinds_.end();
    return it == shape_kinds_.end() ? ShapeValue::Other : it->second;
  };
  const std::string& op = n.op_type();
  if (op == "Shape") return ShapeValue::Shape;
  if (op == "Gather" && kind(0) == ShapeValue::Shape && int_constant(n.input(1)) == std::vector<int64_t>{0})
    return ShapeValue::Batch;
  if ((op == "Unsqueeze" || op == "Squeeze") && kind(0) == ShapeValue::Batch) return ShapeValue::Batch;
  if (op == "Concat" && n.input_size() == 2 && kind(0) == ShapeValue::Batch) {
    const std::vector<int64_t> rest = int_constant(n.input(1));
    if (rest.size() == 1 && (rest[0] == -1 || rest[0] > 0)) return ShapeValue::Rows;
  }
  return ShapeValue::Other;
}

int Importer::activation(const onnx::NodeProto& n, int i) const {
  if (!has_input(n, i)) refuse(n, "input " + std::to_string(i) + " is missing");
  const std::string& name = n.input(i);
  const auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  if (initializers_.count(name) || constants_.count(name) || int_values_.count(name))
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
  const int x = activation(n, 0);
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
                          static_cast<int>(pads[0]), true, static_cast<int>(groups)),
         Op::Conv2d, name);
  params_[name + ".weight"] = std::move(w);
  params_[name + ".bias"] = std::move(bias);
}

// y = gamma (x - mean) / sqrt(var + eps) + beta, folded into the conv before it.
void Importer::batch_norm(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  if (ops_[x] != Op::Conv2d || uses_[n.input(0)] != 1)
    refuse(n, "it does not directly follow a convolution that nothing else reads; octet folds each batch norm into "
              "the convolution before it");
  if (int_attribute(n, "training_mode", 0) != 0) refuse(n, "training_mode 1: export the model in eval() mode");
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
  ++summary_.folded_batch_norms;
  define(n, x, Op::Conv2d);
}

void Importer::pool(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const auto kernel = ints_attribute(n, "kernel_shape", {});
  const auto strides = ints_attribute(n, "strides", {1, 1});
  const auto pads = ints_attribute(n, "pads", {0, 0, 0, 0});
  if (kernel.size() != 2 || kernel[0] != kernel[1] || kernel[0] < 1 || kernel[0] > 64)
    refuse(n, "kernel_shape " + ints_string(kernel) + ": octet's pooling windows are square");
  if (strides.size() != 2 || strides[0] != strides[1] || strides[0] < 1 || strides[0] > 64)
    refuse(n, "strides " + ints_string(strides) + ": octet's are alike in both directions");
  if (pads != std::vector<int64_t>{0, 0, 0, 0}) refuse(n, "pads " + ints_string(pads) + ": octet's pools do not pad yet");
  if (int_attribute(n, "ceil_mode", 0) != 0) refuse(n, "ceil_mode 1: octet's pools round the output size down");
  if (ints_attribute(n, "dilations", {1, 1}) != std::vector<int64_t>{1, 1}) refuse(n, "dilated pooling");
  if (string_attribute(n, "auto_pad", "NOTSET") != "NOTSET") refuse(n, "auto_pad: give explicit pads");
  const bool max = n.op_type() == "MaxPool";
  define(n,
         max ? builder_.max_pool(x, static_cast<int>(kernel[0]), static_cast<int>(strides[0]))
             : builder_.avg_pool(x, static_cast<int>(kernel[0]), static_cast<int>(strides[0])),
         max ? Op::MaxPool2d : Op::AvgPool2d);
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

// To (batch, features): octet's flatten.
void Importer::reshape(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  if (!has_input(n, 1)) refuse(n, "no target shape");
  const std::string& shape = n.input(1);
  bool to_rows = false;
  if (const auto it = initializers_.find(shape); it != initializers_.end()) {
    const auto dims = int_tensor(*it->second, where_ + ": node '" + n.name() + "': shape '" + shape + "'");
    to_rows = dims.size() == 2 && (dims[0] == 0 || dims[0] == -1 || dims[1] == -1);
    if (to_rows && dims[1] > 0) reshape_features_.push_back({n.name(), static_cast<int>(ops_.size()), dims[1]});
  } else if (const auto kind = shape_kinds_.find(shape); kind != shape_kinds_.end()) {
    to_rows = kind->second == ShapeValue::Rows;
  }
  if (!to_rows) refuse(n, "a reshape octet cannot tell keeps the batch and flattens the rest (only that is imported)");
  define(n, builder_.flatten(x), Op::Flatten);
}

// torch writes a Pad of zeros before some pools: nothing to do.
void Importer::pad(const onnx::NodeProto& n) {
  const int x = activation(n, 0);
  const auto it = has_input(n, 1) ? initializers_.find(n.input(1)) : initializers_.end();
  if (it == initializers_.end()) refuse(n, "pads that are not a constant");
  const auto pads = int_tensor(*it->second, where_ + ": node '" + n.name() + "': pads '" + n.input(1) + "'");
  for (int64_t p : pads)
    if (p != 0) refuse(n, "pads " + ints_string(pads) + ": octet pads only inside convolutions");
  summary_.dropped.push_back(n.op_type());
  define(n, x, ops_[x]);
}

void Importer::constant_node(const onnx::NodeProto& n) {
  const auto* value = attribute(n, "value");
  if (!value || !value->has_t()) refuse(n, "a constant that is not a tensor 'value'");
  const std::string what = where_ + ": node '" + n.name() + "' (Constant)";
  if (is_float(value->t()))
    constants_[n.output(0)] = float_tensor(value->t(), what);
  else {
    int_tensor(value->t(), what);  // checks it
    initializers_[n.output(0)] = &value->t();
    int_values_.insert(n.output(0));
  }
}

void Importer::import_node(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx") refuse(n, "its domain '" + n.domain() + "' is not ONNX's own");
  if (n.output_size() < 1) refuse(n, "no output");
  if (op == "Constant") return constant_node(n);
  if (is_shape_arithmetic(n)) {
    const ShapeValue kind = shape_kind(n);
    for (const auto& out : n.output()) shape_kinds_[out] = kind;
    summary_.dropped.push_back(op);
    return;
  }
  if (op == "Conv") return conv(n);
  if (op == "BatchNormalization") return batch_norm(n);
  if (op == "Relu") return define(n, builder_.relu(activation(n, 0)), Op::ReLU);
  if (op == "MaxPool" || op == "AveragePool") return pool(n);
  if (op == "GlobalAveragePool") return define(n, builder_.global_avg_pool(activation(n, 0)), Op::GlobalAvgPool);
  if (op == "Add") return add(n);
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
      if (int_values_.count(n.input(0))) int_values_.insert(n.output(0));
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
  for (const Rows& r : reshape_features_) {
    const ActShape s = shapes[static_cast<size_t>(r.octet_node)];
    check(int64_t{s.c} * s.h * s.w == r.features,
          where_ + ": node '" + r.node + "' (Reshape) makes rows of " + std::to_string(r.features) +
              " values from images of " + std::to_string(int64_t{s.c} * s.h * s.w) + ": octet reshapes only per image");
  }
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
    if (t.data_type() == onnx::TensorProto::INT64 || t.data_type() == onnx::TensorProto::INT32) int_values_.insert(t.name());
  }
  for (const auto& n : g_.node())
    for (const auto& in : n.input()) ++uses_[in];
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
