// The importer's last step before the checkpoint: the layer whose int32
// accumulators the runtime returns as the logits (qmodel/quantized_model.h).
// A vector of logits ends in a linear layer, an image of them (a segmentation's
// scores per pixel) in a dense conv; where the model's last node is neither
// (or has a ReLU, or is read by other layers or returned twice), an identity
// layer is appended; a model's several outputs each so, and each conv a detection
// head's rows are read from. And what inference drops at the end: a final softmax.
#include "interop/onnx_importer.h"

#include <algorithm>
#include <cctype>

namespace octet::onnx_import {

// What inference leaves out: Identity, Dropout (but one given a training mode, unless its ratio is 0) and a final
// Softmax or LogSoftmax, which changes no prediction where it normalizes each image's (or pixel's) classes
// together: over the channels axis (opset 13 on), or flattened from axis 0 or 1 (before).
void Importer::drop(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  const auto zero_ratio = [&] { return has_input(n, 1) && constant(n, 1).numel() == 1 && constant(n, 1).data[0] == 0; };
  if (op == "Dropout" && has_input(n, 2) && !zero_ratio())  // an exporter in eval() mode writes no training_mode
    refuse(n, "a training_mode input: a dropout in training mode drops values (export the model in eval() mode)");
  if (op == "Softmax" || op == "LogSoftmax") {
    if (!is_model_output(n.output(0)))
      refuse(n, "a softmax that is not the model's output; octet drops only a final one");
    const int x = value_node(n, 0);
    const int64_t rank = is_flat(x) ? 2 : is_one_row(n, 0) ? 3 : 4;
    const int64_t given = int_attribute(n, "axis", summary_.opset >= 13 ? -1 : 1);
    const int64_t axis = given < 0 ? given + rank : given;
    if (summary_.opset >= 13 ? axis != 1 : axis > 1)
      refuse(n, "a softmax over axis " + std::to_string(given) + " of a rank-" +
                    std::to_string(rank) + " value: octet drops a final softmax over the classes (axis 1) only");
  }
  summary_.dropped.push_back(op);
  define(n, activation(n, 0));
}

// Each of the model's outputs: its output layer (output_layer), or those of the convs a detection head's rows are
// read from (onnx_import_output_views.cpp), in order; `views` gets each one's part in its model output.
std::vector<int> Importer::make_output_layers(std::vector<OutputView>& views) {
  std::vector<int> returned;
  std::vector<std::string> names;  // what an identity output layer appended to it is named after
  for (const auto& output : g_.output()) {
    const std::string& out = output.name();
    if (const auto parts = arranged_.find(out); parts != arranged_.end()) {
      for (ArrangedPart part : parts->second) {
        part.view.name = out;
        returned.push_back(part.node);
        views.push_back(part.view);
        names.push_back(out + "_" + std::to_string(names.size()));
      }
      continue;
    }
    if (silu_outputs_.count(out)) {
      OutputView silu{out, 1, "akhw", 2, {}, 1, {}};  // [K, H, W] as they are
      silu.decode.kind = DecodeKind::Silu;
      returned.push_back(values_.at(out));
      views.push_back(silu);
      names.push_back(out);
      continue;
    }
    views.emplace_back();
    names.push_back(g_.output_size() > 1 ? out : "");
    const auto it = values_.find(out);
    check(it != values_.end(), where_ + ": no node computes the graph's output '" + out + "'");
    check(!channels_last_.count(out),
          where_ + ": the output '" + out + "' is a channels-last image; octet's models return logits");
    apply_pending(out);
    returned.push_back(it->second);
  }
  std::vector<int> layers;
  for (size_t k = 0; k < returned.size(); ++k) layers.push_back(output_layer(returned[k], layers, names[k]));
  return layers;
}

// Whether x * sigmoid(x) (`mul` of `sigmoid`) of octet node x is a model output that x's accumulators can give: x an
// output conv (one group, no ReLU) that nothing else reads.
bool Importer::silu_output(const onnx::NodeProto& sigmoid, const onnx::NodeProto& mul, int x) const {
  const Node& conv = builder_.graph().nodes.at(static_cast<size_t>(x));
  const auto readers = readers_.find(sigmoid.input(0));
  return is_model_output(mul.output(0)) && conv.op == Op::Conv2d && conv.groups == 1 && !conv.relu &&
         readers != readers_.end() && readers->second.size() == 2 && !is_flat(x);
}

int Importer::output_layer(int node, const std::vector<int>& taken, const std::string& output) {
  const Graph& g = builder_.graph();
  const Node& n = g.nodes.at(static_cast<size_t>(node));
  const ActShape s = shape_of(node);
  const bool image = s.h != 1 || s.w != 1;
  const bool read = std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& reader) {
    return std::count(reader.inputs.begin(), reader.inputs.end(), node) > 0;
  });
  const bool output_op = image ? n.op == Op::Conv2d && n.groups == 1 : n.op == Op::Linear;
  if (output_op && !n.relu && n.inputs.size() == 1 && !read && std::count(taken.begin(), taken.end(), node) == 0)
    return node;
  std::string name = "identity_logits";  // a layer whose int32 accumulators are the logits
  if (!output.empty()) {  // of one of several outputs: named after it
    name = output + "_logits";
    for (char& ch : name)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_') ch = '_';
    if (name.front() == '.') name.front() = '_';
  }
  while (taken_names_.count(name)) name += "_";
  taken_names_.insert(name);
  FloatTensor identity({s.c, s.c}, 0.0f);
  for (int k = 0; k < s.c; ++k) identity.data[static_cast<size_t>(k) * s.c + k] = 1.0f;
  const int layer = image ? builder_.conv(name, node, s.c, 1, 1, 0, true)
                          : builder_.linear(name, is_flat(node) ? node : builder_.flatten(node), s.c, true);
  if (image) identity.shape = {s.c, s.c, 1, 1};
  params_[name + ".weight"] = std::move(identity);
  params_[name + ".bias"] = FloatTensor({s.c}, 0.0f);
  return layer;
}

}  // namespace octet::onnx_import
