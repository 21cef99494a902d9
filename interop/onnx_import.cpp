#include "interop/onnx_import.h"

#include <onnx/defs/schema.h>
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
#include "common/strings.h"
#include "data/dataset.h"
#include "interop/onnx_external_data.h"
#include "interop/onnx_importer.h"
#include "interop/onnx_opset_upgrade.h"
#include "interop/onnx_tensors.h"

namespace octet {

namespace onnx_import {

namespace {
// 18 to 27: what changed after 17 (the newest opset of Debian's ONNX library,
// 1.12) in the ops octet imports was read off ONNX's Changelog.md (1.23, in
// development): new inputs and new ops (kAfterLibrary), attributes read where
// they are (Split-18's num_outputs) or refused by value (AveragePool-19's
// dilations, Pad-19's wrap mode), and types octet does not take (float8,
// int4).
constexpr int64_t kMinOpset = 11, kMaxOpset = 27;

// Input counts of the ops' versions after the library's (it knows none of
// them, and Mish, Gelu and Swish not at all): ONNX's schemas.
struct LaterSchema {
  const char* op;
  int64_t since;
  int min_inputs, max_inputs;
};
constexpr LaterSchema kAfterLibrary[] = {
    {"ReduceMean", 18, 1, 2}, {"ReduceMax", 18, 1, 2}, {"Pad", 18, 2, 4},
    {"Mish", 18, 1, 1},       {"Gelu", 20, 1, 1},      {"Swish", 24, 1, 1},
    {"GroupNormalization", 18, 3, 3}, {"Resize", 18, 1, 4}, {"ReduceL2", 18, 1, 2}};

std::string file_stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  const size_t dot = base.rfind('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}
}  // namespace

void Importer::read_opset() {
  summary_.opset = default_opset(model_);
  check(summary_.opset >= kMinOpset && summary_.opset <= kMaxOpset,
        where_ + ": opset " + std::to_string(summary_.opset) + " is outside the opsets octet imports (" +
            std::to_string(kOldestUpgradedOpset) + " to " + std::to_string(kMaxOpset) + ", those before " +
            std::to_string(kMinOpset) + " converted by ONNX's version converter; torch.onnx.export writes one by "
            "default, or at the opset_version given)");
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
  v.values = is_flat(x)        ? std::vector<int64_t>{kBatchDim, s.numel()}
             : is_one_row(n, 0) ? std::vector<int64_t>{kBatchDim, s.c, s.w}
                                : std::vector<int64_t>{kBatchDim, s.c, s.h, s.w};
  const int64_t rank = static_cast<int64_t>(v.values.size());
  const auto bound = [&](int64_t b) { return std::min(std::max(b < 0 ? b + rank : b, int64_t{0}), rank); };
  const int64_t start = bound(int_attribute(n, "start", 0)), end = bound(int_attribute(n, "end", rank));
  v.values = std::vector<int64_t>(v.values.begin() + start, v.values.begin() + std::max(start, end));
  shape_values_[n.output(0)] = v;
}

// A conv's or pool's `pads`, each side 0 to 64 (a 1-D one's two ends: its left and right).
Importer::Pads Importer::spatial_pads(const onnx::NodeProto& n) const {
  const bool one_row = is_one_row(n, 0);
  const auto pads = ints_attribute(n, "pads", one_row ? std::vector<int64_t>{0, 0} : std::vector<int64_t>{0, 0, 0, 0});
  if (pads.size() != (one_row ? 2u : 4u) ||
      std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0 || p > 64; }))
    refuse(n, "pads " + ints_string(pads) + (one_row ? ": octet pads each end of a 1-D window by 0 to 64"
                                                     : ": octet pads each side of height and width by 0 to 64"));
  if (one_row) return {0, pads[0], 0, pads[1]};
  return {pads[0], pads[1], pads[2], pads[3]};
}

std::vector<int64_t> Importer::window_ints(const onnx::NodeProto& n, const char* name, std::vector<int64_t> fallback,
                                           bool alike) const {
  if (!is_one_row(n, 0)) return ints_attribute(n, name, fallback);
  std::vector<int64_t> v = ints_attribute(n, name, fallback.empty() ? fallback : std::vector<int64_t>{fallback[1]});
  if (v.size() != 1) return v;  // the caller refuses it
  return {alike ? v[0] : 1, v[0]};
}

// Input 0 of a conv or pool padded by `pads` and by a Pad before it (pad()):
// the padding both sides of a direction share (a conv's: every side), up to
// most_h and most_w, is left to the conv or pool; the rest becomes a Pad2d
// node, read in the input's place.
Importer::PaddedInput Importer::padded_input(const onnx::NodeProto& n, Pads pads, int64_t most_h, int64_t most_w,
                                             bool by_direction) {
  const auto pending = pending_pads_.find(n.input(0));
  const bool after_pad = pending != pending_pads_.end();
  int x = after_pad ? pending->second.node : activation(n, 0);
  if (after_pad)
    for (size_t k = 0; k < pads.size(); ++k) pads[k] += pending->second.pads[k];
  int64_t down = std::min({pads[0], pads[2], most_h}), across = std::min({pads[1], pads[3], most_w});
  if (!by_direction) down = across = std::min(down, across);
  if (pads != Pads{down, across, down, across})
    x = builder_.pad(x, static_cast<int>(pads[0] - down), static_cast<int>(pads[1] - across),
                     static_cast<int>(pads[2] - down), static_cast<int>(pads[3] - across));
  return {x, static_cast<int>(down), static_cast<int>(across), after_pad};
}

int Importer::activation(const onnx::NodeProto& n, int i) {
  value_node(n, i);
  return apply_pending(n.input(i));
}

int Importer::value_node(const onnx::NodeProto& n, int i) const {
  if (!has_input(n, i)) refuse(n, "input " + std::to_string(i) + " is missing");
  const std::string& name = n.input(i);
  const auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  if (const char* view = view_of(name)) refuse(n, "reads '" + name + "', " + view);
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
  if (const auto it = shape_values_.find(name); it != shape_values_.end())  // shape arithmetic cast to float
    if (std::optional<FloatTensor> known = known_values(it->second)) return std::move(*known);
  refuse(n, "input '" + name + "' must be a constant (a weight), and it is computed");
}

// The parameters' prefix: the weight's own name without ".weight" (PyTorch's
// module path, e.g. "features.0"), else the node's name, else op and index.
std::string Importer::layer_name(const onnx::NodeProto& n) {
  std::string name = n.input_size() > 1 ? n.input(1) : "";
  const std::string suffix = ".weight";
  if (ends_after(name, suffix))
    name = name.substr(0, name.size() - suffix.size());
  else
    name = n.name();
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_') ch = '_';
  if (name.empty() || name.front() == '.' || name.back() == '.') name = n.op_type() + "_" + std::to_string(node_count());
  std::string unique = name;
  for (int k = 1; taken_names_.count(unique); ++k) unique = name + "_" + std::to_string(k);
  taken_names_.insert(unique);
  return unique;
}

void Importer::define(const onnx::NodeProto& n, int node) {
  values_[n.output(0)] = node;
  for (int k = 1; k < n.output_size(); ++k)
    if (!n.output(k).empty() && uses_[n.output(k)] > 0) refuse(n, "its output " + std::to_string(k) + " is read");
}

void Importer::constant_node(const onnx::NodeProto& n) {
  const auto* value = attribute(n, "value");
  if (!value || !value->has_t()) refuse(n, "a constant that is not a tensor 'value'");
  const std::string what = where_ + ": node '" + n.name() + "' (Constant)";
  if (is_float(value->t()))
    constants_[n.output(0)] = float_tensor(value->t(), what);
  else {
    shape_values_[n.output(0)] = constant_shape_value(int_tensor(value->t(), what), value->t().dims_size() == 0);
  }
}

// A scalar float input (Clip's min and max).
float Importer::scalar(const onnx::NodeProto& n, int i) {
  const FloatTensor t = constant(n, i);
  if (t.numel() != 1) refuse(n, "input " + std::to_string(i) + " is not one value");
  if (!std::isfinite(t.data[0])) refuse(n, "input " + std::to_string(i) + " is not finite");
  return t.data[0];
}

ActShape Importer::shape_of(int node) const {
  try {
    return builder_.graph().shapes().at(static_cast<size_t>(node));
  } catch (const Error& e) {
    fail(where_ + ": the imported graph is not one octet can run: " + e.what());
  }
}

// The importer reads a node's inputs and outputs by position: their counts
// first, against ONNX's own schema of the op at the model's opset.
Importer::Arity Importer::arity_of(const onnx::NodeProto& n) const {
  for (const LaterSchema& s : kAfterLibrary)
    if (n.op_type() == s.op && summary_.opset >= s.since) return {true, s.min_inputs, s.max_inputs, 1, 1};
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), summary_.opset, "");
  if (!schema) return {};  // not an ONNX op: refused by name
  return {true, schema->min_input(), schema->max_input(), schema->min_output(), schema->max_output()};
}

bool Importer::Arity::fits(const onnx::NodeProto& n) const {
  return n.input_size() >= min_in && n.input_size() <= max_in && n.output_size() >= min_out &&
         n.output_size() <= max_out;
}

void Importer::check_arity(const onnx::NodeProto& n) {
  const Arity a = arity_of(n);
  if (!a.known || a.fits(n)) return;
  const auto count = [](int k, int lo, int hi) {
    return std::to_string(k) + (lo == hi ? " (ONNX says " + std::to_string(lo) + ")"
                                         : " (ONNX says " + std::to_string(lo) + " to " +
                                               (hi == INT_MAX ? std::string("any") : std::to_string(hi)) + ")");
  };
  if (n.input_size() < a.min_in || n.input_size() > a.max_in)
    refuse(n, "inputs: " + count(n.input_size(), a.min_in, a.max_in));
  refuse(n, "outputs: " + count(n.output_size(), a.min_out, a.max_out));
}

void Importer::import_node(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx") refuse(n, "its domain '" + n.domain() + "' is not ONNX's own");
  if (n.output_size() < 1) refuse(n, "no output");
  check_arity(n);
  if (op == "Constant") return constant_node(n);
  if (decoded_steps_.count(&n)) {  // a step of YOLO's decodes (onnx_import_yolo_decode.cpp, _yolov8_head.cpp)
    summary_.dropped.push_back(op);
    return;
  }
  const bool reads_last = reads_channels_last(n);
  if (reads_last && op == "Shape")
    refuse(n, "the shape of a channels-last value (after a Transpose of perm [0, 2, 3, 1])");
  if (is_shape_arithmetic(n)) {
    shape_node(n);
    summary_.dropped.push_back(op);
    return;
  }
  const auto fused = fused_nodes_.find(&n);
  if (fused != fused_nodes_.end())  // a step of an octet node made before it
    define(n, fused->second);
  else if (!dispatch_height_parts(n) && !dispatch_attention_pool(n) && !dispatch_channel_sequence(n) &&
           !dispatch_channels_last(n))
    import_op(n);
  // What is computed on a channels-last image is one too (not a transpose back, nor rows); on a 1-D value too
  // (a reshape says itself: reshape()).
  const auto out = values_.find(n.output(0));
  if (reads_last && op != "Transpose" && out != values_.end() && !is_flat(out->second))
    channels_last_.insert(n.output(0));
  const bool reads_one_row = std::any_of(n.input().begin(), n.input().end(), [&](const std::string& in) {
    return one_row_.count(in) > 0;
  });
  // A 1-D value unsqueezed to an image (unsqueeze()) says itself too.
  if (reads_one_row && op != "Reshape" && (op != "Unsqueeze" || fused != fused_nodes_.end()) &&
      ((out != values_.end() && !is_flat(out->second)) || pending_pads_.count(n.output(0))))
    one_row_.insert(n.output(0));
}

void Importer::import_op(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (op == "Conv") return conv(n);
  if (op == "BatchNormalization") return batch_norm(n);
  if (op == "Relu") return define(n, builder_.relu(activation(n, 0)));
  if (op == "MaxPool" || op == "AveragePool") return pool(n);
  if (op == "GlobalAveragePool") return define(n, builder_.global_avg_pool(activation(n, 0)));
  if (op == "GlobalMaxPool") return define(n, global_max_pool_of(activation(n, 0)));
  if (op == "Add") return add(n);
  if (op == "Sum") return sum(n);
  if (op == "LRN") return local_response_norm(n);
  if (op == "InstanceNormalization") return instance_normalization(n);
  if (op == "GroupNormalization") return group_normalization(n);
  if (op == "Sub") return subtract(n);
  if (op == "Clip") return clip(n);
  if (op == "Sigmoid" || op == "HardSigmoid") return gate(n);
  if (op == "HardSwish") return define(n, builder_.activation(activation(n, 0), "hard_swish"));
  if (op == "Swish") {  // x sigmoid(alpha x), opset 24
    if (float_attribute(n, "alpha", 1.0f) != 1.0f) refuse(n, "alpha other than 1 (SiLU's)");
    return define(n, builder_.activation(activation(n, 0), "silu"));
  }
  if (op == "Tanh") return define(n, builder_.activation(activation(n, 0), "tanh"));
  if (op == "Exp") return define(n, builder_.activation(activation(n, 0), "exp"));
  if (op == "Elu") return define(n, builder_.activation(activation(n, 0), "elu", float_attribute(n, "alpha", 1.0f)));
  if (op == "Celu") return define(n, builder_.activation(activation(n, 0), "celu", float_attribute(n, "alpha", 1.0f)));
  if (op == "Selu")  // ONNX's defaults are torch's constants, to float precision
    return define(n, builder_.activation(activation(n, 0), "selu", float_attribute(n, "alpha", 1.67326319f),
                                         float_attribute(n, "gamma", 1.05070102f)));
  if (op == "Softplus") return softplus(n);
  if (op == "Mish") return define(n, builder_.activation(activation(n, 0), "mish"));
  if (op == "PRelu") return prelu(n);
  if (op == "LeakyRelu")
    return define(n, builder_.activation(activation(n, 0), "leaky_relu", float_attribute(n, "alpha", 0.01f)));
  if (op == "Mul") return is_split_view(n.input(0)) || is_split_view(n.input(1)) ? split_product(n) : mul(n);
  if (op == "ReduceSum") return reduce_sum(n);
  if (op == "Concat") return concat(n);
  if (op == "Split") return split(n);
  if (op == "Transpose") return transpose(n);
  if (op == "ReduceMean" && (layer_norm_pattern(n) || simam_pattern(n))) return;
  if (op == "ReduceMean" || op == "ReduceMax")
    return reduce_image(n, is_one_row(n, 0) ? std::vector<int64_t>{2} : std::vector<int64_t>{2, 3});
  if (op == "Slice") return slice(n);
  if (op == "SpaceToDepth") return space_to_depth_node(n);
  if (op == "DepthToSpace") return depth_to_space_node(n);
  if (op == "ConvTranspose") return conv_transpose(n);
  if (op == "Resize") return resize(n);
  if (op == "ReduceL2") return reduce_l2(n);
  if (op == "Pow" || op == "Sqrt" || op == "Reciprocal") return power(n);
  if (op == "Gather") return gather(n);
  if (op == "Expand") return expand(n);
  if (op == "Squeeze") return squeeze(n);
  if (op == "Unsqueeze") return unsqueeze(n);
  if (op == "Gemm" || op == "MatMul") return linear(n);
  if (op == "Cast") return cast(n);
  if (op == "Reshape") return reshape(n);
  if (op == "Pad") return pad(n);
  if (op == "Flatten") {
    if (arranged_.count(n.input(0)) && arranged_rows(n)) return;
    if (int_attribute(n, "axis", 1) != 1) refuse(n, "axis other than 1");
    return define(n, builder_.flatten(activation(n, 0)));
  }
  if (op == "Identity" && !values_.count(n.input(0))) {  // torch names a shared weight twice this way
    if (const auto it = initializers_.find(n.input(0)); it != initializers_.end()) {
      initializers_[n.output(0)] = it->second;
      return;
    }
    constants_[n.output(0)] = constant(n, 0);
    return;
  }
  if (op == "Softmax" && (radix_softmax_step(n) || split_softmax(n))) return;
  if (op == "Identity" || op == "Dropout" || op == "Softmax" || op == "LogSoftmax") return drop(n);
  refuse(n, "octet cannot import " + op + " yet");
}

// int8 models return their last layer's int32 accumulators as the logits, so
// that layer must be a linear one (a vector of logits) or a dense conv (an
// image of them): a model ending otherwise (SqueezeNet's conv, ReLU and global
// pool; a segmentation head's upsample) gets an identity one, exact in float
// and in int8 (its int8 weights 127 at scale 127, its logits the int8 values
// dequantized; onnx_import_output.cpp).
Checkpoint Importer::finish() {
  std::vector<OutputView> views;  // each output layer's part in its model output
  const std::vector<int> output_layers = make_output_layers(views);
  Checkpoint c;
  try {
    c.graph = builder_.finish();
    for (size_t k = 0; k < views.size(); ++k) c.graph.nodes[static_cast<size_t>(output_layers[k])].view = views[k];
    c.graph.place_outputs_last(output_layers);
    c.graph.validate();
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
  if (info_)
    check(!has_output_views(c.graph), where_ + ": the model returns a detection head's rows, and " + info_->name +
                                          "'s labels name a class per image (import it without a dataset)");
  if (info_)
    check(logits.h == 1 && logits.w == 1,
          where_ + ": the model returns an image of " + to_string(logits) + " values, and " + info_->name +
              "'s labels name a class per image (import it without a dataset, or end it with a Flatten or a global "
              "pooling)");
  const int64_t outputs = logits.c;
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
  check(g_.output_size() >= 1, where_ + ": the graph has no output");
  check(!info_ || g_.output_size() == 1, where_ + ": the graph has " + std::to_string(g_.output_size()) +
                                             " outputs, and a dataset's labels score one (import it without one)");
  read_opset();
  for (const auto& t : g_.initializer()) {
    initializers_[t.name()] = &t;
    if (t.data_type() == onnx::TensorProto::INT64 || t.data_type() == onnx::TensorProto::INT32)
      shape_values_[t.name()] =
          constant_shape_value(int_tensor(t, where_ + ": tensor '" + t.name() + "'"), t.dims_size() == 0);
  }
  for (const auto& n : g_.node()) {
    for (const auto& in : n.input()) {
      ++uses_[in];
      readers_[in].push_back(&n);
    }
    for (const auto& out : n.output()) writers_.emplace(out, &n);
    if (n.op_type() == "Constant" && n.output_size() == 1) constant_nodes_[n.output(0)] = &n;
  }
  read_input();
  for (const auto& n : g_.node()) import_node(n);
  Checkpoint c = finish();
  summary_.onnx_nodes = g_.node_size();
  summary_.octet_nodes = static_cast<int64_t>(c.graph.nodes.size());
  if (summary) *summary = summary_;
  return c;
}

}  // namespace onnx_import

Checkpoint import_onnx(const std::string& path, const OnnxImportOptions& options, OnnxImportSummary* summary) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  onnx::ModelProto model;
  check(bytes.size() <= static_cast<size_t>(INT32_MAX) &&
            model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) && model.has_graph(),
        path + " is not an ONNX model (truncated, or another kind of file)");
  onnx_import::read_external_data(model, path);
  return import_onnx_model(model, path, options, summary);
}

Checkpoint import_onnx_model(const onnx::ModelProto& model, const std::string& where, const OnnxImportOptions& options,
                             OnnxImportSummary* summary) {
  check(model.has_graph(), where + " is not an ONNX model (it has no graph)");
  const int64_t opset = onnx_import::default_opset(model);
  if (opset < onnx_import::kOldestUpgradedOpset || opset >= onnx_import::kMinOpset)
    return onnx_import::Importer(model, where, options).run(summary);
  const onnx::ModelProto upgraded = onnx_import::upgraded_model(model, onnx_import::kMinOpset, where);
  Checkpoint c = onnx_import::Importer(upgraded, where, options).run(summary);
  if (summary) summary->upgraded_from_opset = opset;
  return c;
}

}  // namespace octet
