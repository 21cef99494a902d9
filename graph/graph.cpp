#include "graph/graph.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "graph/op.h"
#include "graph/output_decode.h"

namespace octet {

namespace {
bool arity_ok(Op op, size_t inputs) {
  const OpTraits& t = op_traits(op);
  if (t.inputs == kAnyInputs) return inputs >= 1;
  return inputs == static_cast<size_t>(t.inputs) || (t.absorbs_residual && inputs == static_cast<size_t>(t.inputs) + 1);
}

// An int attribute of a graph node in JSON, or one of its values.
int int_value(const nlohmann::json& v, const char* key) {
  check(v.is_number_integer() && v.get<int64_t>() >= INT32_MIN && v.get<int64_t>() <= INT32_MAX,
        std::string("attribute '") + key + "' is " + v.dump() + ", not an integer in int range");
  return static_cast<int>(v.get<int64_t>());
}

// Absent gives `fallback`.
int int_attribute(const nlohmann::json& node, const char* key, int fallback) {
  return node.contains(key) ? int_value(node.at(key), key) : fallback;
}

// A finite float attribute of a graph node in JSON; absent gives `fallback`.
float float_attribute(const nlohmann::json& node, const char* key, float fallback) {
  if (!node.contains(key)) return fallback;
  const nlohmann::json& v = node.at(key);
  check(v.is_number() && std::isfinite(v.get<double>()) && std::abs(v.get<double>()) <= FLT_MAX,
        std::string("attribute '") + key + "' is " + v.dump() + ", not a finite number");
  return v.get<float>();
}

}  // namespace

const char* op_name(Op op) { return op_traits(op).name; }

// What a square window shares keeps the width fields at their defaults, so its JSON is as it always was.
void set_pool_window(Node& n, PoolAxis rows, PoolAxis columns, bool ceil_mode) {
  n.kernel = rows.kernel, n.stride = rows.stride, n.padding = rows.padding;
  n.kernel_w = columns.kernel != rows.kernel ? columns.kernel : 0;
  n.stride_w = columns.stride != rows.stride ? columns.stride : 0;
  n.padding_w = columns.padding != rows.padding ? columns.padding : -1;
  n.ceil_mode = ceil_mode;
}

Op op_from_name(const std::string& name) {
  for (const OpDef* def : all_op_defs())
    if (name == def->traits.name) return def->traits.op;
  fail("unknown graph op '" + name + "'");
}

std::string to_string(const ActShape& s) {
  return std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w);
}

std::vector<int64_t> logits_shape(const ActShape& out, int64_t batch) {
  if (out.h == 1 && out.w == 1) return {batch, out.c};
  return {batch, out.h, out.w, out.c};
}

std::vector<ActShape> Graph::shapes() const {
  std::vector<ActShape> out(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const std::string where = "graph node " + std::to_string(i) + " '" + n.name + "' (" + op_name(n.op) + "): ";
    check(arity_ok(n.op, n.inputs.size()), where + "has " + std::to_string(n.inputs.size()) + " inputs");
    for (int in : n.inputs)
      check(in >= 0 && static_cast<size_t>(in) < i, where + "input " + std::to_string(in) + " is not an earlier node");
    try {
      out[i] = op_def(n.op).shape(n, input_shapes(n, out));
    } catch (const Error& e) {
      fail(where + e.what());
    }
    const ActShape y = out[i];
    if (op_traits(n.op).absorbs_residual && n.inputs.size() == 2)
      check(out[n.inputs[1]] == y, where + "residual input " + to_string(out[n.inputs[1]]) + " does not match output " +
                                       to_string(y));
  }
  return out;
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> out(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int in : nodes[i].inputs) out[in].push_back(static_cast<int>(i));
  return out;
}

std::vector<int> Graph::last_readers() const {
  std::vector<int> out(nodes.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i)  // nodes come after their inputs
    for (int in : nodes[i].inputs) out[in] = static_cast<int>(i);
  return out;
}

int Graph::find(const std::string& name) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

std::vector<Graph::Param> Graph::params() const {
  const std::vector<ActShape> s = shapes();
  std::vector<Param> out;
  for (const Node& n : nodes) {
    const OpDef& def = op_def(n.op);
    if (!def.params) continue;
    for (const ParamShape& p : def.params(n, input_shapes(n, s))) out.push_back({n.name + p.suffix, p.shape, p.trainable});
  }
  return out;
}

std::vector<int> Graph::outputs() const {
  std::vector<int> out;
  for (int i = first_output(); i < static_cast<int>(nodes.size()); ++i) out.push_back(i);
  return out;
}

void Graph::place_outputs_last(const std::vector<int>& outputs) {
  const int count = static_cast<int>(nodes.size());
  std::vector<int> rank(nodes.size(), -1);  // where each output goes among the last ones
  for (size_t k = 0; k < outputs.size(); ++k) {
    const int o = outputs[k];
    check(o > 0 && o < count && rank[o] < 0, "graph outputs: node " + std::to_string(o) + " is not a distinct node");
    rank[o] = static_cast<int>(k);
  }
  for (const Node& n : nodes)
    for (int in : n.inputs)
      check(rank[in] < 0, "graph outputs: '" + nodes[in].name + "' is read by '" + n.name + "'");
  std::vector<int> order;
  for (int i = 0; i < count; ++i)
    if (rank[i] < 0) order.push_back(i);
  order.insert(order.end(), outputs.begin(), outputs.end());
  std::vector<int> new_index(nodes.size());
  for (int i = 0; i < count; ++i) new_index[order[i]] = i;
  std::vector<Node> placed;
  for (int i : order) {
    placed.push_back(std::move(nodes[i]));
    for (int& in : placed.back().inputs) in = new_index[in];
  }
  nodes = std::move(placed);
  output_count = static_cast<int>(outputs.size());
}

void Graph::validate() const {
  check(!nodes.empty(), "graph is empty");
  check(nodes[0].op == Op::Input, "graph must start with an input node");
  for (size_t i = 1; i < nodes.size(); ++i) check(nodes[i].op != Op::Input, "graph has more than one input node");
  const std::vector<ActShape> shapes = this->shapes();
  check(output_count == 1 || (output_count > 1 && output_count < static_cast<int>(nodes.size())),
        "graph has " + std::to_string(output_count) + " outputs and " + std::to_string(nodes.size()) + " nodes");
  for (const Node& n : nodes)
    for (int in : n.inputs)
      check(!is_output(in), "graph output '" + nodes[in].name + "' is read by '" + n.name + "'");
  for (size_t i = 0; i < nodes.size(); ++i)
    check(nodes[i].view.name.empty() || is_output(static_cast<int>(i)),
          "node '" + nodes[i].name + "' has an output view and is not an output");
  model_outputs(*this, shapes);
}

std::string Graph::to_json() const {
  nlohmann::json j = nlohmann::json::array();
  for (const Node& n : nodes) {
    nlohmann::json node = {{"name", n.name}, {"op", op_name(n.op)}, {"inputs", n.inputs}};
    if (n.channels) node["channels"] = n.channels;
    if (n.kernel) node["kernel"] = n.kernel;
    if (n.kernel_w) node["kernel_w"] = n.kernel_w;
    if (n.stride != 1) node["stride"] = n.stride;
    if (n.stride_w) node["stride_w"] = n.stride_w;
    if (n.padding) node["padding"] = n.padding;
    if (n.padding_w >= 0) node["padding_w"] = n.padding_w;
    if (n.groups != 1) node["groups"] = n.groups;
    if (n.dilation != 1) node["dilation"] = n.dilation;
    if (n.ceil_mode) node["ceil_mode"] = true;
    if (n.exclude_padding) node["exclude_padding"] = true;
    if (n.align_corners) node["align_corners"] = true;
    if (n.offset) node["offset"] = n.offset;
    if (n.op == Op::Pad2d) node["pads"] = {n.pad_top, n.pad_left, n.pad_bottom, n.pad_right};
    if (!n.function.empty()) node["function"] = n.function;
    if (n.alpha != 0) node["alpha"] = n.alpha;
    if (n.beta != 0) node["beta"] = n.beta;
    if (n.op == Op::LayerNorm || n.op == Op::LocalResponseNorm || n.op == Op::GroupNorm) node["epsilon"] = n.epsilon;
    if (n.bias) node["bias"] = true;
    if (n.relu) node["relu"] = true;
    if (n.relu_max != 0) node["relu_max"] = n.relu_max;
    if (n.height) node["height"] = n.height;
    if (n.width) node["width"] = n.width;
    if (output_count > 1 && is_output(static_cast<int>(j.size()))) node["output"] = true;  // one output: the last
    if (!n.view.name.empty())
      node["view"] = {
          {"name", n.view.name}, {"groups", n.view.groups}, {"order", n.view.order}, {"merged", n.view.merged}};
    if (n.view.decode.kind != DecodeKind::None) node["view"]["decode"] = decode_json(n.view.decode);
    if (n.view.merged_last != 1) node["view"]["merged_last"] = n.view.merged_last;
    if (!n.view.at.empty()) node["view"]["at"] = n.view.at;
    j.push_back(node);
  }
  return j.dump();
}

Graph Graph::from_json(const std::string& text) {
  Graph g;
  int outputs_seen = 0;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    check(j.is_array(), "graph JSON is not an array of nodes");
    for (const auto& node : j) {
      const std::string where = "graph node " + std::to_string(g.nodes.size()) + ": ";
      check(node.is_object(), where + "is not a JSON object");
      Node n;
      n.name = node.at("name").get<std::string>();
      n.op = op_from_name(node.at("op").get<std::string>());
      const nlohmann::json& inputs = node.at("inputs");
      check(inputs.is_array(), where + "inputs is not an array");
      for (const nlohmann::json& in : inputs) {
        check(in.is_number_integer() && in.get<int64_t>() >= 0 && in.get<int64_t>() < int64_t(g.nodes.size()),
              where + "input " + in.dump() + " is not an earlier node");
        n.inputs.push_back(static_cast<int>(in.get<int64_t>()));
      }
      try {
        n.channels = int_attribute(node, "channels", 0);
        n.kernel = int_attribute(node, "kernel", 0);
        n.kernel_w = int_attribute(node, "kernel_w", 0);
        n.stride = int_attribute(node, "stride", 1);
        n.padding = int_attribute(node, "padding", 0);
        n.stride_w = int_attribute(node, "stride_w", 0);
        n.padding_w = int_attribute(node, "padding_w", -1);
        n.groups = int_attribute(node, "groups", 1);
        n.dilation = int_attribute(node, "dilation", 1);
        n.offset = int_attribute(node, "offset", 0);
        if (n.op == Op::Pad2d) {
          const nlohmann::json& pads = node.at("pads");
          check(pads.is_array() && pads.size() == 4, "pads is not [top, left, bottom, right]");
          int* sides[] = {&n.pad_top, &n.pad_left, &n.pad_bottom, &n.pad_right};
          for (size_t k = 0; k < 4; ++k) *sides[k] = int_value(pads[k], "pads");
        }
        n.alpha = float_attribute(node, "alpha", 0.0f);
        n.beta = float_attribute(node, "beta", 0.0f);
        n.epsilon = float_attribute(node, "epsilon", 0.0f);
        n.relu_max = float_attribute(node, "relu_max", 0.0f);
        n.height = int_attribute(node, "height", 0);
        n.width = int_attribute(node, "width", 0);
      } catch (const Error& e) {
        fail(where + e.what());
      }
      n.bias = node.value("bias", false);
      n.relu = node.value("relu", false);
      n.ceil_mode = node.value("ceil_mode", false);
      n.exclude_padding = node.value("exclude_padding", false);
      n.align_corners = node.value("align_corners", false);
      n.function = node.value("function", std::string());
      if (const auto view = node.find("view"); view != node.end()) {
        check(view->is_object(), where + "view is not a JSON object");
        n.view.name = view->at("name").get<std::string>();
        check(!n.view.name.empty(), where + "view has no name");
        n.view.order = view->at("order").get<std::string>();
        try {
          n.view.groups = int_attribute(*view, "groups", 1);
          n.view.merged = int_attribute(*view, "merged", 1);
          n.view.merged_last = int_attribute(*view, "merged_last", 1);
          n.view.at = view->value("at", std::vector<int64_t>{});  // a malformed one: a json exception, below
          if (const auto decode = view->find("decode"); decode != view->end())
            n.view.decode = decode_from_json(*decode);
        } catch (const Error& e) {
          fail(where + "view: " + e.what());
        }
      }
      const bool output = node.value("output", false);
      check(output || outputs_seen == 0, where + "follows an output (a graph's outputs are its last nodes)");
      outputs_seen += output;
      g.nodes.push_back(std::move(n));
    }
    g.output_count = std::max(outputs_seen, 1);
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("graph JSON is malformed: ") + e.what());
  }
  g.validate();
  return g;
}

Node& GraphBuilder::push(Op op, std::string name, std::vector<int> inputs) {
  if (name.empty()) name = std::string(op_name(op)) + "_" + std::to_string(graph_.nodes.size());
  Node& n = graph_.nodes.emplace_back();
  n.name = std::move(name);
  n.op = op;
  n.inputs = std::move(inputs);
  return n;
}

int GraphBuilder::last() const { return static_cast<int>(graph_.nodes.size()) - 1; }

int GraphBuilder::input(int channels, int height, int width) {
  Node& n = push(Op::Input, "input", {});
  n.channels = channels;
  n.height = height;
  n.width = width;
  return last();
}

int GraphBuilder::conv(const std::string& name, int x, int out_channels, int kernel, int stride, int padding,
                       bool bias, int groups, int dilation) {
  Node& n = push(Op::Conv2d, name, {x});
  n.channels = out_channels;
  n.kernel = kernel;
  n.stride = stride;
  n.padding = padding;
  n.bias = bias;
  n.groups = groups;
  n.dilation = dilation;
  return last();
}

int GraphBuilder::conv_rect(const std::string& name, int x, int out_channels, int kernel_h, int kernel_w, int stride,
                            int padding, bool bias, int groups, int dilation) {
  const int node = conv(name, x, out_channels, kernel_h, stride, padding, bias, groups, dilation);
  if (kernel_w != kernel_h) graph_.nodes[node].kernel_w = kernel_w;
  return node;
}

int GraphBuilder::batch_norm(const std::string& name, int x) {
  push(Op::BatchNorm2d, name, {x});
  return last();
}

int GraphBuilder::conv_bn(const std::string& conv_name, const std::string& bn_name, int x, int out_channels,
                          int kernel, int stride, int padding, bool with_bn) {
  x = conv(conv_name, x, out_channels, kernel, stride, padding, false);
  return with_bn ? batch_norm(bn_name, x) : x;
}

int GraphBuilder::linear(const std::string& name, int x, int out_features, bool bias) {
  Node& n = push(Op::Linear, name, {x});
  n.channels = out_features;
  n.bias = bias;
  return last();
}

int GraphBuilder::relu(int x) {
  push(Op::ReLU, "", {x});
  return last();
}

int GraphBuilder::max_pool(int x, int kernel, int stride, int padding, bool ceil_mode) {
  return max_pool(x, {kernel, stride, padding}, {kernel, stride, padding}, ceil_mode);
}

int GraphBuilder::avg_pool(int x, int kernel, int stride, int padding, bool ceil_mode, bool exclude_padding) {
  return avg_pool(x, {kernel, stride, padding}, {kernel, stride, padding}, ceil_mode, exclude_padding);
}

int GraphBuilder::max_pool(int x, PoolAxis rows, PoolAxis columns, bool ceil_mode) {
  set_pool_window(push(Op::MaxPool2d, "", {x}), rows, columns, ceil_mode);
  return last();
}

int GraphBuilder::avg_pool(int x, PoolAxis rows, PoolAxis columns, bool ceil_mode, bool exclude_padding) {
  Node& n = push(Op::AvgPool2d, "", {x});
  set_pool_window(n, rows, columns, ceil_mode);
  n.exclude_padding = exclude_padding;
  return last();
}

int GraphBuilder::activation(int x, const std::string& function, float alpha, float beta) {
  Node& n = push(Op::Activation, "", {x});
  n.function = function;
  n.alpha = alpha;
  n.beta = beta;
  return last();
}

int GraphBuilder::local_response_norm(int x, int size, float alpha, float beta, float bias) {
  Node& n = push(Op::LocalResponseNorm, "", {x});
  n.kernel = size, n.alpha = alpha, n.beta = beta, n.epsilon = bias;
  return last();
}

int GraphBuilder::group_norm(const std::string& name, int x, int groups, float epsilon, bool affine) {
  Node& n = push(Op::GroupNorm, name, {x});
  n.groups = groups, n.epsilon = epsilon, n.bias = affine;
  return last();
}

int GraphBuilder::layer_norm(int x, float epsilon) {
  Node& n = push(Op::LayerNorm, "", {x});
  n.epsilon = epsilon;
  return last();
}

int GraphBuilder::prelu(const std::string& name, int x) {
  push(Op::PRelu, name, {x});
  return last();
}

int GraphBuilder::mul(int a, int b) {
  push(Op::Mul, "", {a, b});
  return last();
}

int GraphBuilder::concat(std::vector<int> inputs) {
  push(Op::Concat, "", std::move(inputs));
  return last();
}

int GraphBuilder::channel_slice(int x, int offset, int channels) {
  Node& n = push(Op::ChannelSlice, "", {x});
  n.offset = offset;
  n.channels = channels;
  return last();
}

int GraphBuilder::channel_shuffle(int x, int groups) {
  Node& n = push(Op::ChannelShuffle, "", {x});
  n.groups = groups;
  return last();
}

int GraphBuilder::global_avg_pool(int x) {
  push(Op::GlobalAvgPool, "", {x});
  return last();
}

int GraphBuilder::channel_mean(int x) {
  push(Op::ChannelMean, "", {x});
  return last();
}

int GraphBuilder::channel_max(int x) {
  push(Op::ChannelMax, "", {x});
  return last();
}

int GraphBuilder::add(int a, int b) {
  push(Op::Add, "", {a, b});
  return last();
}

int GraphBuilder::flatten(int x) {
  push(Op::Flatten, "", {x});
  return last();
}

int GraphBuilder::shortcut_a(int x, int pad_channels) {
  Node& n = push(Op::ShortcutA, "", {x});
  n.channels = pad_channels;
  return last();
}

int GraphBuilder::pad(int x, int top, int left, int bottom, int right) {
  Node& n = push(Op::Pad2d, "", {x});
  n.pad_top = top, n.pad_left = left, n.pad_bottom = bottom, n.pad_right = right;
  return last();
}

int GraphBuilder::upsample(int x, int down, int across) {
  Node& n = push(Op::Upsample, "", {x});
  n.stride = down, n.stride_w = across != down ? across : 0;
  return last();
}

int GraphBuilder::resize_nearest(int x, int height, int width) {
  Node& n = push(Op::Upsample, "", {x});
  n.height = height, n.width = width;
  return last();
}

int GraphBuilder::upsample_bilinear(int x, int down, int across, bool align_corners) {
  Node& n = push(Op::UpsampleBilinear, "", {x});
  n.stride = down, n.stride_w = across != down ? across : 0;
  n.align_corners = align_corners;
  return last();
}

int GraphBuilder::resize_bilinear(int x, int height, int width, bool align_corners) {
  Node& n = push(Op::UpsampleBilinear, "", {x});
  n.height = height, n.width = width;
  n.align_corners = align_corners;
  return last();
}

int GraphBuilder::depth_to_space(int x, int block) {
  Node& n = push(Op::DepthToSpace, "", {x});
  n.stride = block;
  return last();
}

Graph GraphBuilder::finish() {
  graph_.validate();
  return std::move(graph_);
}

}  // namespace octet
