#include "graph/fold.h"

#include <cmath>

#include "common/error.h"
#include "graph/op.h"

namespace octet {

namespace {
constexpr float kBatchNormEps = 1e-5f;

// The layer's name and the suffix apart: a caller passing `layer + suffix`
// would hand GCC 13's -Wdangling-reference a temporary to warn about.
const FloatTensor& lookup(const std::map<std::string, FloatTensor>& params, const std::string& layer,
                          const char* suffix) {
  const std::string name = layer + suffix;
  auto it = params.find(name);
  check(it != params.end(), "parameter '" + name + "' is missing");
  return it->second;
}

// A depth_to_space, or a crop (a Pad2d that only takes pixels off): ReLU commutes with it.
bool spreads_pixels(const Node& n) {
  return n.op == Op::DepthToSpace ||
         (n.op == Op::Pad2d && n.pad_top <= 0 && n.pad_left <= 0 && n.pad_bottom <= 0 && n.pad_right <= 0);
}
}  // namespace

const FloatTensor& FloatModel::weight(const Node& n) const { return lookup(params, n.name, ".weight"); }
const FloatTensor& FloatModel::bias(const Node& n) const { return lookup(params, n.name, ".bias"); }

FloatModel fold_for_inference(const Graph& graph, const std::map<std::string, FloatTensor>& params) {
  graph.validate();
  for (const auto& [name, tensor] : params)
    for (float v : tensor.data)
      if (!std::isfinite(v))
        fail("layer '" + name.substr(0, name.rfind('.')) + "': weights contain NaN or infinite values (" + name + ")");
  const auto consumers = graph.consumers();
  const std::vector<ActShape> shapes = graph.shapes();
  FloatModel model;
  std::vector<int> new_index(graph.nodes.size(), -1);  // old node -> node of the result holding its value

  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    if (n.op == Op::BatchNorm2d) {
      const int producer = n.inputs[0];
      check(graph.nodes[producer].op == Op::Conv2d && consumers[producer].size() == 1,
            "batch norm '" + n.name + "' does not directly follow a conv with no other consumer; cannot fold it");
      Node& conv = model.graph.nodes[new_index[producer]];
      FloatTensor& w = model.params[conv.name + ".weight"];
      FloatTensor& b = model.params[conv.name + ".bias"];
      const FloatTensor& gamma = lookup(params, n.name, ".weight");
      const FloatTensor& beta = lookup(params, n.name, ".bias");
      const FloatTensor& mean = lookup(params, n.name, ".running_mean");
      const FloatTensor& var = lookup(params, n.name, ".running_var");
      const int64_t out = w.dim(0), per_channel = w.numel() / out;
      for (int64_t c = 0; c < out; ++c) {
        check(var.data[c] >= 0, "batch norm '" + n.name + "' has a negative running variance");
        const float g = gamma.data[c] / std::sqrt(var.data[c] + kBatchNormEps);
        for (int64_t k = 0; k < per_channel; ++k) w.data[c * per_channel + k] *= g;
        b.data[c] = (b.data[c] - mean.data[c]) * g + beta.data[c];
      }
      new_index[i] = new_index[producer];
      continue;
    }
    // A ReLU, or a Clip(0, max) (ReLU6), into the op before it: int8's floor
    // at 0 is the ReLU and, the scale's amax kept within max, its saturation the clip.
    const bool bounded_relu = n.op == Op::Activation && n.function == "clip" && n.alpha == 0 && n.beta > 0;
    if (n.op == Op::ReLU || bounded_relu) {
      // Through a depth_to_space and its crop (the importer's transposed conv), which only move values and
      // zeros: the ReLU then runs in the sub-pixel conv's epilogue, its output stored unsigned.
      int source = n.inputs[0];
      while (consumers[source].size() == 1 && spreads_pixels(graph.nodes[source]))
        source = graph.nodes[source].inputs[0];
      Node& conv = model.graph.nodes[new_index[source]];
      if (source != n.inputs[0] && conv.op == Op::Conv2d && !conv.relu && consumers[source].size() == 1) {
        conv.relu = true;
        if (bounded_relu) conv.relu_max = n.beta;
        new_index[i] = new_index[n.inputs[0]];
        continue;
      }
      const int producer = new_index[n.inputs[0]];
      Node& p = model.graph.nodes[producer];
      const bool fusable = op_traits(p.op).absorbs_relu && !p.relu && consumers[n.inputs[0]].size() == 1;
      if (fusable) {
        p.relu = true;
        if (bounded_relu) p.relu_max = n.beta;
        new_index[i] = producer;
        continue;
      }
    }
    Node copy = n;
    for (int& in : copy.inputs) in = new_index[in];
    if (op_traits(n.op).weighted) {
      const FloatTensor& w = lookup(params, n.name, ".weight");
      model.params[n.name + ".weight"] = w;
      model.params[n.name + ".bias"] = n.bias ? lookup(params, n.name, ".bias") : FloatTensor({w.dim(0)}, 0.0f);
      copy.bias = true;
    } else if (const OpDef& def = op_def(n.op); def.params) {  // PRelu's slopes
      for (const ParamShape& p : def.params(n, input_shapes(n, shapes)))
        model.params[n.name + p.suffix] = lookup(params, n.name, p.suffix);
    }
    model.graph.nodes.push_back(std::move(copy));
    new_index[i] = static_cast<int>(model.graph.nodes.size()) - 1;
  }
  if (graph.output_count > 1) {
    std::vector<int> outputs;
    for (int o : graph.outputs()) outputs.push_back(new_index[o]);
    model.graph.place_outputs_last(outputs);
  }
  model.graph.validate();
  return model;
}

}  // namespace octet
