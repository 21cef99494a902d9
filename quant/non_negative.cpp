#include "quant/non_negative.h"

#include <algorithm>

namespace octet {

namespace {
bool activation_non_negative(const Node& n) {
  if (n.function == "clip") return n.alpha >= 0;
  return n.function == "sigmoid" || n.function == "hard_sigmoid";
}
}  // namespace

std::vector<bool> non_negative_outputs(const Graph& g) {
  std::vector<bool> out(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const bool inputs_non_negative =
        !n.inputs.empty() && std::all_of(n.inputs.begin(), n.inputs.end(), [&](int in) { return out[in]; });
    switch (n.op) {
      case Op::Input: out[i] = false; break;
      case Op::ReLU: out[i] = true; break;
      case Op::Activation: out[i] = activation_non_negative(n); break;
      case Op::LayerNorm: out[i] = false; break;  // centred on each pixel's mean
      case Op::GroupNorm: out[i] = n.relu; break;  // centred on each group's mean, then shifted
      // A weighted node's weights and bias, and an add's residual, can make any sign.
      case Op::Conv2d:
      case Op::Linear:
      case Op::Add: out[i] = n.relu; break;
      default: out[i] = n.relu || inputs_non_negative;  // pools, moves, concat, mul, local response norm
    }
  }
  return out;
}

}  // namespace octet
